// File: queue_collector.h
// QueueCollector: collects the job queues of one redis target (RQ, Celery, Redis Streams consumer
// groups, plain lists) into a metrics::Registry, every `interval`, with bounded cost: three
// pipelined round trips of O(1)/O(log N) commands per queue, whatever the queues' length (no KEYS,
// no walking a queue; discovery by index sets, plus a SCAN pass every discovery_interval for
// Celery's binding sets and list patterns, the one cost that grows with the keyspace). Read-only:
// it never writes to Redis
// and never runs RQ's cleanup. Example:
//   metrics::Registry registry; QueueCollector c(options, registry); c.start(); ... c.stop();
// Thread-safe: start/stop/status/collect_once may be called from any thread; collections never
// overlap. Never logs a password or a job's payload. Design and series: docs/queues.md.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <inferscope/common/result.h>
#include <inferscope/metrics/registry.h>

#include "queue/queue_metrics.h"
#include "queue/queue_system.h"
#include "queue/redis_target.h"

namespace inferscope::queue {

// StreamGroup names one consumer group of one stream to collect.
struct StreamGroup {
  std::string key{};
  std::string group{};
};

// QueueCollectorOptions configure one collector (up's `queues:` block of a redis target).
struct QueueCollectorOptions {
  std::string target_name{};  // the inferscope_queue_up{target} label and the name in every message
  RedisTarget target{};
  // systems to collect; rq and celery are discovered (rq:queues, _kombu.binding.*), streams and
  // lists come from the two lists below.
  std::vector<QueueSystem> systems{QueueSystem::kRq, QueueSystem::kCelery};
  std::vector<StreamGroup> streams{};
  // lists: plain list keys, or glob patterns found by discovery passes.
  std::vector<std::string> lists{};
  std::chrono::milliseconds interval{std::chrono::seconds(15)};
  std::chrono::milliseconds timeout{std::chrono::seconds(2)};        // connect and each round trip
  std::chrono::milliseconds max_backoff{std::chrono::seconds(120)};  // retry delay cap while down
  std::size_t max_queues = 200;       // per system; more are counted as too_many_queues
  std::size_t max_workers = 1000;     // RQ worker hashes read per collection
  std::size_t sample_jobs = 100;      // jobs read per registry per collection for wait/run times
  // A discovery pass walks the keyspace with SCAN (COUNT scan_count, MATCH, TYPE) for Celery's
  // _kombu.binding.* sets and glob list patterns: at the first collection, then once per
  // discovery_interval. Its cost grows with the number of keys (bench/queue prints it); the
  // collections between passes do not scan. RQ queues, Celery's default queue and named lists
  // and streams are read at every collection without a pass.
  std::chrono::milliseconds discovery_interval{std::chrono::minutes(5)};
  std::size_t scan_count = 1000;
  // A stream consumer holding pending entries that has not read for this long counts as stale.
  std::chrono::milliseconds stream_stale_after{std::chrono::minutes(5)};
  // on_event receives one line per change of health ("... unreachable: ...", "... collecting
  // again"), without secrets; called on the collector's thread, must be quick.
  std::function<void(const std::string&)> on_event{};
};

// QueueStatus is one queue as the last collection saw it, with the reason for each absent quantity.
struct QueueStatus {
  QueueSystem system = QueueSystem::kRq;
  std::string queue{};
  std::optional<double> depth{};
  std::optional<double> oldest_age_seconds{};
  std::optional<double> in_progress{};
  std::vector<std::pair<Quantity, std::string>> absent{};  // quantity -> why
};

// SystemStatus is one system's workers (or why they are unknown).
struct SystemStatus {
  QueueSystem system = QueueSystem::kRq;
  std::optional<WorkerCounts> workers{};
  std::string workers_absent{};  // why, when workers is nullopt
};

// CollectorStatus is what `up --status` shows for a redis target.
struct CollectorStatus {
  std::string target_name{};
  std::string target{};  // describe(target): no password
  bool up = false;
  std::string last_error{};  // of the last failed collection; empty while up
  int consecutive_failures = 0;
  std::chrono::system_clock::time_point last_success{};  // epoch when never
  double last_duration_seconds = 0;
  std::vector<QueueStatus> queues{};
  std::vector<SystemStatus> systems{};
};

class CeleryHeartbeats;
namespace detail {
class QueueProbe;
}

class QueueCollector {
 public:
  // QueueCollector registers its families in `registry` (kept; must outlive the collector; one
  // collector per registry: a second throws std::invalid_argument). Connects nothing yet.
  QueueCollector(QueueCollectorOptions options, metrics::Registry& registry);
  ~QueueCollector();  // stop()
  QueueCollector(const QueueCollector&) = delete;
  QueueCollector& operator=(const QueueCollector&) = delete;

  // collect_once connects if needed and runs one collection now (preceded by a discovery pass when
  // one is due). On failure it sets up to 0, keeps the error for status() and drops the
  // connection (the next call reconnects).
  Result<void> collect_once();

  // discover_now runs a discovery pass now (connecting if needed); the next one is due a
  // discovery_interval later. Fails like collect_once.
  Result<void> discover_now();

  // start runs collections on a thread every interval (after a failure: interval, doubling up to
  // max_backoff) and, when Celery is collected, listens to the Celery workers' heartbeats on a
  // second connection. stop ends both and joins; both are idempotent.
  void start();
  void stop();

  // status returns a copy of the last collection's view.
  CollectorStatus status() const;

 private:
  void run_loop();
  Result<void> collect_locked();
  Result<void> connect_locked();
  Result<void> discover_locked();
  Error fail_locked(const Error& error, CollectErrorKind kind);
  void record_failure(const Error& error);

  QueueCollectorOptions options_;
  QueueMetrics metrics_;
  std::shared_ptr<CeleryHeartbeats> heartbeats_;  // null unless Celery is collected
  std::vector<std::unique_ptr<detail::QueueProbe>> probes_;

  std::mutex collect_mutex_;  // one collection at a time; guards client_ and probes_
  std::unique_ptr<class RedisClient> client_;
  std::optional<std::chrono::steady_clock::time_point> last_discovery_;

  mutable std::mutex status_mutex_;
  CollectorStatus status_;

  std::mutex loop_mutex_;
  std::condition_variable loop_wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace inferscope::queue
