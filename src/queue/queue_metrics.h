// File: queue_metrics.h
// QueueMetrics: the collector's families in one metrics::Registry (one registry per redis target,
// served on its own path and scraped with job = the target name) and the writes that keep "absent"
// distinct from 0: a quantity that is unknown this collection has no series at all.
// Example: QueueMetrics m(registry, "jobs"); m.set(QueueSystem::kRq, "default", Quantity::kDepth, 3.0);
// Thread-safe (the registry's family locks). Called once per collection, never on a hot path.
// Construction registers the families and throws std::invalid_argument if they already exist.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <inferscope/metrics/registry.h>

#include "queue/queue_system.h"

namespace inferscope::queue {

// CollectErrorKind is the `kind` label of inferscope_queue_collect_errors_total.
enum class CollectErrorKind {
  kUnreachable,         // connect, read or write failed; the collection was lost
  kAuth,                // Redis refused the password (or wanted one)
  kRedisError,          // one command failed (WRONGTYPE, NOGROUP, ...); that quantity was skipped
  kMalformedTimestamp,  // an RQ job or worker hash with a missing or unparseable timestamp
  kMalformedMessage,    // a Celery message or event that is not the expected JSON
  kHugeValue,           // a value over kMaxPayloadBytes, left unread
  kBinaryKey,           // a queue name that cannot be a label value (not UTF-8, control bytes, > 200 B)
  kTooManyQueues,       // queues past max_queues, not collected
};
inline constexpr CollectErrorKind kAllErrorKinds[] = {
    CollectErrorKind::kUnreachable,         CollectErrorKind::kAuth,       CollectErrorKind::kRedisError,
    CollectErrorKind::kMalformedTimestamp,  CollectErrorKind::kMalformedMessage, CollectErrorKind::kHugeValue,
    CollectErrorKind::kBinaryKey,           CollectErrorKind::kTooManyQueues};

// error_kind_name returns the label value: unreachable, auth, redis_error, malformed_timestamp,
// malformed_message, huge_value, binary_key, too_many_queues.
std::string_view error_kind_name(CollectErrorKind kind) noexcept;

// WorkerCounts are the workers of one system by state.
struct WorkerCounts {
  long long busy = 0;
  long long idle = 0;
  long long stale = 0;
};

class QueueMetrics {
 public:
  // QueueMetrics registers every family in `registry` (which must outlive it), sets
  // inferscope_queue_up{target} to 0 and exposes every error kind at 0.
  QueueMetrics(metrics::Registry& registry, const std::string& target_name);

  // set writes a gauge quantity (kDepth, kOldestAge, kInProgress) of one queue; nullopt removes
  // the series. Other quantities: a BUG.
  void set(QueueSystem system, const std::string& queue, Quantity quantity, std::optional<double> value);
  // observe_wait / observe_run record one job (seconds; negative values from clock skew are
  // clamped to 0). jobs adds finished or failed jobs. Each creates the queue's series on first use.
  void observe_wait(QueueSystem system, const std::string& queue, double seconds);
  void observe_run(QueueSystem system, const std::string& queue, double seconds);
  void add_jobs(QueueSystem system, const std::string& queue, Quantity outcome, double count);
  // declare creates the histogram and counter series `system` can measure for `queue` (at 0), so
  // that rate() has a series from the queue's first collection.
  void declare(QueueSystem system, const std::string& queue);
  // set_workers writes inferscope_queue_workers{system,state}; nullopt removes the three series.
  void set_workers(QueueSystem system, std::optional<WorkerCounts> counts);
  // set_up, set_duration and count_error write the collection's own series.
  void set_up(bool up);
  void set_duration(double seconds);
  void count_error(CollectErrorKind kind, double n = 1);

 private:
  metrics::GaugeFamily& depth_;
  metrics::GaugeFamily& oldest_age_;
  metrics::GaugeFamily& in_progress_;
  metrics::HistogramFamily& wait_;
  metrics::HistogramFamily& run_;
  metrics::CounterFamily& jobs_;
  metrics::GaugeFamily& workers_;
  metrics::Gauge up_;
  metrics::Gauge duration_;
  std::map<CollectErrorKind, metrics::Counter> errors_;
};

}  // namespace inferscope::queue
