// File: queue_probe.h
// Internal to src/queue (not part of the collector's API): the shape every system's probe shares.
// A collection is three pipelined round trips; in each, every probe appends its commands with a
// handler for each reply (round 0 also carries TIME, so handlers know Redis's "now"). After the
// last round each probe publishes its gauges and its status entries. Probes keep state between
// collections (registry cursors, IDs already observed) and are used by one thread at a time.
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <inferscope/common/result.h>

#include "queue/queue_collector.h"
#include "queue/queue_metrics.h"
#include "queue/redis_client.h"

namespace inferscope::queue::detail {

// Pipeline collects one round trip's commands and routes each reply to its handler, in order.
class Pipeline {
 public:
  using Handler = std::function<void(const RedisReply&)>;
  void add(RedisCommand command, Handler handler) {
    commands_.push_back(std::move(command));
    handlers_.push_back(std::move(handler));
  }
  std::size_t size() const noexcept { return commands_.size(); }
  // run sends every command in one round trip and calls the handlers; a connection failure fails
  // the round (handlers not called).
  Result<void> run(RedisClient& client) {
    if (commands_.empty()) return {};
    auto replies = client.pipeline(commands_);
    if (!replies) return replies.error();
    for (std::size_t i = 0; i < replies->size(); ++i) handlers_[i]((*replies)[i]);
    return {};
  }

 private:
  std::vector<RedisCommand> commands_;
  std::vector<Handler> handlers_;
};

// CollectContext is what a probe sees of the collection in progress.
struct CollectContext {
  double now = 0;  // Redis's TIME, Unix seconds (valid in handlers after round 0's first reply)
  const QueueCollectorOptions& options;
  QueueMetrics& metrics;
  void count(CollectErrorKind kind, double n = 1) const { metrics.count_error(kind, n); }
};

// ScanPattern is one key pattern a probe discovers by SCAN (MATCH pattern TYPE type).
struct ScanPattern {
  std::string pattern{};
  std::string type{};
};

// QueueProbe collects one system.
class QueueProbe {
 public:
  virtual ~QueueProbe() = default;
  virtual QueueSystem system() const noexcept = 0;
  // scan_patterns lists what a discovery pass looks for (none: the probe uses index sets only);
  // on_scanned receives each key a pass found.
  virtual std::vector<ScanPattern> scan_patterns(CollectContext&) { return {}; }
  virtual void on_scanned(const ScanPattern&, const std::string&, CollectContext&) {}
  // plan appends round `round`'s commands (0, 1, 2); handlers may use ctx.now and the state the
  // previous rounds' handlers stored.
  virtual void plan(int round, Pipeline& pipeline, CollectContext& ctx) = 0;
  // publish writes this collection's gauges and appends the status of each queue and of the
  // system's workers.
  virtual void publish(CollectContext& ctx, CollectorStatus& status) = 0;
};

// RecentIds remembers the last `capacity` job IDs seen (FIFO), so that a job's wait is observed
// once even though it stays visible over several collections.
class RecentIds {
 public:
  explicit RecentIds(std::size_t capacity) : capacity_(capacity) {}
  bool contains(const std::string& id) const { return set_.count(id) != 0; }
  void insert(const std::string& id) {
    if (!set_.insert(id).second) return;
    order_.push_back(id);
    if (order_.size() > capacity_) {
      set_.erase(order_.front());
      order_.pop_front();
    }
  }

 private:
  std::size_t capacity_;
  std::unordered_set<std::string> set_;
  std::deque<std::string> order_;
};

// format_score prints a sorted-set score bound with microsecond precision ("(" prefix = exclusive).
std::string format_score(double seconds, bool exclusive);

// reply_strings returns the string elements of an array reply (nil elements as empty strings).
std::vector<std::string> reply_strings(const RedisReply& reply);

// reply_field returns the value after `name` in a flat field/value array (XINFO's RESP2 form).
const RedisReply* reply_field(const RedisReply& reply, std::string_view name);

std::unique_ptr<QueueProbe> make_rq_probe();
std::unique_ptr<QueueProbe> make_celery_probe(std::shared_ptr<const class CeleryHeartbeats> heartbeats);
std::unique_ptr<QueueProbe> make_stream_probe();
std::unique_ptr<QueueProbe> make_list_probe();

}  // namespace inferscope::queue::detail
