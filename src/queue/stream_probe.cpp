// Redis Streams probe (shared/reference/queues.md §3): per configured consumer group, XINFO
// GROUPS/CONSUMERS (O(1)), XPENDING of the K oldest pending entries, and the oldest undelivered
// entry by XRANGE (last-delivered-id + COUNT 1. Wait at first delivery = (now - idle) - ID ms.
#include <algorithm>
#include <map>

#include "queue/queue_payload.h"
#include "queue/queue_probe.h"

namespace inferscope::queue::detail {
namespace {

struct GroupState {
  StreamGroup config{};
  std::string label{};  // the queue label: the key, or key/group when a key has several groups
  // Across collections: entries-read - pending (acknowledged so far), for jobs_total.
  std::optional<long long> acked_baseline{};
  // This collection:
  bool stream_missing = false;
  std::string problem{};  // why depth/in-progress are unknown
  std::optional<long long> lag{}, pending{}, entries_read{};
  std::string last_delivered_id{};
  std::optional<double> oldest_undelivered_ms{};
  bool oldest_read = false;
};

std::optional<long long> integer_field(const RedisReply& row, std::string_view name) {
  const RedisReply* value = reply_field(row, name);
  if (value == nullptr || value->type != RedisReply::Type::kInteger) return std::nullopt;
  return value->integer;
}

class StreamProbe final : public QueueProbe {
 public:
  QueueSystem system() const noexcept override { return QueueSystem::kStreams; }

  void plan(int round, Pipeline& pipeline, CollectContext& ctx) override {
    if (groups_.empty() && !ctx.options.streams.empty()) configure(ctx);
    if (round == 0) plan_groups(pipeline, ctx);
    if (round == 1) plan_oldest(pipeline, ctx);
  }

  void publish(CollectContext& ctx, CollectorStatus& status) override {
    for (GroupState& g : groups_) {
      QueueStatus entry{.system = QueueSystem::kStreams, .queue = g.label};
      if (g.stream_missing) {
        entry.depth = 0;
        entry.in_progress = 0;
        entry.oldest_age_seconds = 0;
      } else if (!g.problem.empty()) {
        for (const Quantity q : {Quantity::kDepth, Quantity::kInProgress, Quantity::kOldestAge}) {
          entry.absent.emplace_back(q, g.problem);
        }
      } else {
        if (g.lag) entry.depth = static_cast<double>(*g.lag);
        else entry.absent.emplace_back(Quantity::kDepth, "the group's lag is unknown (entries deleted with XDEL)");
        if (g.pending) entry.in_progress = static_cast<double>(*g.pending);
        if (g.lag && *g.lag == 0) {
          entry.oldest_age_seconds = 0;
        } else if (g.oldest_undelivered_ms) {
          entry.oldest_age_seconds = std::max(0.0, ctx.now - *g.oldest_undelivered_ms / 1000.0);
        } else if (g.oldest_read) {
          entry.oldest_age_seconds = 0;  // nothing after last-delivered-id: all delivered
        } else {
          entry.absent.emplace_back(Quantity::kOldestAge, "the oldest undelivered entry could not be read");
        }
      }
      ctx.metrics.set(QueueSystem::kStreams, g.label, Quantity::kDepth, entry.depth);
      ctx.metrics.set(QueueSystem::kStreams, g.label, Quantity::kOldestAge, entry.oldest_age_seconds);
      ctx.metrics.set(QueueSystem::kStreams, g.label, Quantity::kInProgress, entry.in_progress);
      status.queues.push_back(std::move(entry));
    }
    SystemStatus system{.system = QueueSystem::kStreams};
    if (consumers_read_) system.workers = workers_;
    else system.workers_absent = "the consumers of a configured group could not be read";
    ctx.metrics.set_workers(QueueSystem::kStreams, system.workers);
    status.systems.push_back(std::move(system));
  }

 private:
  void configure(CollectContext& ctx) {
    std::map<std::string, int> groups_per_key;
    for (const StreamGroup& s : ctx.options.streams) ++groups_per_key[s.key];
    for (const StreamGroup& s : ctx.options.streams) {
      GroupState g{.config = s};
      g.label = groups_per_key[s.key] > 1 ? s.key + "/" + s.group : s.key;
      if (!is_label_safe(g.label)) {
        ctx.count(CollectErrorKind::kBinaryKey);
        continue;
      }
      ctx.metrics.declare(QueueSystem::kStreams, g.label);
      groups_.push_back(std::move(g));
    }
  }

  void plan_groups(Pipeline& pipeline, CollectContext& ctx) {
    workers_ = WorkerCounts{};
    consumers_read_ = true;
    const double stale_ms = static_cast<double>(ctx.options.stream_stale_after.count());
    for (GroupState& group : groups_) {
      GroupState* g = &group;
      g->stream_missing = false;
      g->problem.clear();
      g->lag.reset();
      g->pending.reset();
      g->entries_read.reset();
      g->last_delivered_id.clear();
      g->oldest_undelivered_ms.reset();
      g->oldest_read = false;
      const std::string& key = g->config.key;
      const std::string& name = g->config.group;
      pipeline.add({"XINFO", "GROUPS", key}, [g, &ctx](const RedisReply& r) {
        if (r.is_error()) {
          if (r.str.find("no such key") != std::string::npos) {
            g->stream_missing = true;  // a stream that is gone holds no work
          } else {
            ctx.count(CollectErrorKind::kRedisError);
            g->problem = "XINFO GROUPS failed: " + r.str;
          }
          return;
        }
        for (const RedisReply& row : r.elements) {
          const RedisReply* group_name = reply_field(row, "name");
          if (group_name == nullptr || group_name->str != g->config.group) continue;
          g->pending = integer_field(row, "pending");
          g->lag = integer_field(row, "lag");
          g->entries_read = integer_field(row, "entries-read");
          if (const RedisReply* id = reply_field(row, "last-delivered-id")) g->last_delivered_id = id->str;
          return;
        }
        g->problem = "group " + g->config.group + " does not exist on stream " + g->config.key;
      });
      pipeline.add({"XINFO", "CONSUMERS", key, name}, [this, stale_ms, &ctx](const RedisReply& r) {
        if (r.is_error()) {
          if (r.str.find("no such key") == std::string::npos && r.str.find("NOGROUP") == std::string::npos) {
            ctx.count(CollectErrorKind::kRedisError);
            consumers_read_ = false;
          }
          return;
        }
        for (const RedisReply& row : r.elements) {
          const auto pending = integer_field(row, "pending");
          const auto idle = integer_field(row, "idle");
          if (!pending || !idle) continue;
          if (*pending == 0) ++workers_.idle;
          else if (static_cast<double>(*idle) > stale_ms) ++workers_.stale;
          else ++workers_.busy;
        }
      });
      pipeline.add({"XPENDING", key, name, "-", "+", std::to_string(ctx.options.sample_jobs)},
                   [this, g, &ctx](const RedisReply& r) {
                     if (r.is_error()) return;  // missing stream or group: reported by XINFO GROUPS
                     for (const RedisReply& row : r.elements) {
                       if (!row.is_array() || row.elements.size() != 4) continue;
                       const std::string& id = row.elements[0].str;
                       if (seen_.contains(g->label + '\n' + id)) continue;
                       seen_.insert(g->label + '\n' + id);
                       const auto parsed = parse_stream_id(id);
                       if (!parsed) {
                         ctx.count(CollectErrorKind::kMalformedMessage);
                         continue;
                       }
                       // A redelivered entry's first delivery time is gone: no wait to observe.
                       if (row.elements[3].integer != 1) continue;
                       const double delivered_ms = ctx.now * 1000.0 - static_cast<double>(row.elements[2].integer);
                       ctx.metrics.observe_wait(QueueSystem::kStreams, g->label,
                                                (delivered_ms - static_cast<double>(parsed->ms)) / 1000.0);
                     }
                   });
    }
  }

  void plan_oldest(Pipeline& pipeline, CollectContext& ctx) {
    for (GroupState& group : groups_) {
      GroupState* g = &group;
      if (g->stream_missing || !g->problem.empty() || g->last_delivered_id.empty()) continue;
      if (g->entries_read && g->pending) {
        const long long acked = *g->entries_read - *g->pending;
        if (g->acked_baseline && acked > *g->acked_baseline) {
          ctx.metrics.add_jobs(QueueSystem::kStreams, g->label, Quantity::kJobsFinished,
                               static_cast<double>(acked - *g->acked_baseline));
        }
        if (!g->acked_baseline || acked > *g->acked_baseline) g->acked_baseline = acked;
      }
      if (g->lag && *g->lag == 0) continue;
      pipeline.add({"XRANGE", g->config.key, "(" + g->last_delivered_id, "+", "COUNT", "1"}, [g, &ctx](const RedisReply& r) {
        if (r.is_error() || !r.is_array()) {
          ctx.count(CollectErrorKind::kRedisError);
          return;
        }
        g->oldest_read = true;
        if (r.elements.empty() || !r.elements[0].is_array() || r.elements[0].elements.empty()) return;
        const auto id = parse_stream_id(r.elements[0].elements[0].str);
        if (!id) {
          ctx.count(CollectErrorKind::kMalformedMessage);
          return;
        }
        g->oldest_undelivered_ms = static_cast<double>(id->ms);
      });
    }
  }

  std::vector<GroupState> groups_;
  WorkerCounts workers_;
  bool consumers_read_ = false;
  RecentIds seen_{100000};
};

}  // namespace

std::unique_ptr<QueueProbe> make_stream_probe() { return std::make_unique<StreamProbe>(); }

}  // namespace inferscope::queue::detail
