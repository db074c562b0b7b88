#include "queue/queue_metrics.h"

#include <algorithm>
#include <cstdlib>

namespace inferscope::queue {
namespace {

// kWaitBuckets spans a healthy queue (tens of ms) to a stalled one (an hour).
const std::vector<double> kWaitBuckets = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,   2.5,  5,   10,
                                          20,   30,    60,   120, 300,  600, 1200, 1800, 3600};

metrics::HistogramOptions histogram_options(std::string name, std::string help) {
  metrics::HistogramOptions options;
  options.name = std::move(name);
  options.help = std::move(help);
  options.label_names = {"queue", "system"};
  options.unit = "seconds";
  options.buckets = kWaitBuckets;
  return options;
}

}  // namespace

std::string_view error_kind_name(CollectErrorKind kind) noexcept {
  switch (kind) {
    case CollectErrorKind::kUnreachable: return "unreachable";
    case CollectErrorKind::kAuth: return "auth";
    case CollectErrorKind::kRedisError: return "redis_error";
    case CollectErrorKind::kMalformedTimestamp: return "malformed_timestamp";
    case CollectErrorKind::kMalformedMessage: return "malformed_message";
    case CollectErrorKind::kHugeValue: return "huge_value";
    case CollectErrorKind::kBinaryKey: return "binary_key";
    case CollectErrorKind::kTooManyQueues: return "too_many_queues";
  }
  return "redis_error";
}

QueueMetrics::QueueMetrics(metrics::Registry& registry, const std::string& target_name)
    : depth_(registry.gauge({.name = "inferscope_queue_depth",
                             .help = "Jobs waiting in the queue (not yet taken by a worker). Absent when unknown.",
                             .label_names = {"queue", "system"}})),
      oldest_age_(registry.gauge({.name = "inferscope_queue_oldest_age_seconds",
                                  .help = "Age of the oldest waiting job (0 when the queue is empty). Absent when "
                                          "the system records no enqueue time.",
                                  .label_names = {"queue", "system"},
                                  .unit = "seconds"})),
      in_progress_(registry.gauge({.name = "inferscope_queue_in_progress",
                                   .help = "Jobs taken by a worker and not yet finished. Absent when unknown.",
                                   .label_names = {"queue", "system"}})),
      wait_(registry.histogram(histogram_options(
          "inferscope_queue_wait_seconds",
          "Time from enqueue to a worker starting the job, observed once per job seen started."))),
      run_(registry.histogram(histogram_options("inferscope_queue_run_seconds",
                                                "Time from a worker starting a job to its end (finished or failed)."))),
      jobs_(registry.counter({.name = "inferscope_queue_jobs_total",
                              .help = "Jobs that ended, by outcome (finished, failed), counted from the first "
                                      "collection on.",
                              .label_names = {"queue", "system", "outcome"}})),
      workers_(registry.gauge({.name = "inferscope_queue_workers",
                               .help = "Workers by state: busy, idle, stale (registered but no longer alive).",
                               .label_names = {"system", "state"}})) {
  up_ = registry
            .gauge({.name = "inferscope_queue_up",
                    .help = "1 when the last collection of this redis target succeeded, else 0.",
                    .label_names = {"target"}})
            .with({target_name});
  duration_ = registry
                  .gauge({.name = "inferscope_queue_collect_duration_seconds",
                          .help = "Wall time of the last collection (all round trips to Redis).",
                          .unit = "seconds"})
                  .with({});
  auto& errors = registry.counter({.name = "inferscope_queue_collect_errors_total",
                                   .help = "Collection problems by kind; skipped data is counted here, never "
                                           "reported as 0.",
                                   .label_names = {"kind"}});
  for (const CollectErrorKind kind : kAllErrorKinds) errors_.emplace(kind, errors.with({error_kind_name(kind)}));
}

void QueueMetrics::set(QueueSystem system, const std::string& queue, Quantity quantity, std::optional<double> value) {
  metrics::GaugeFamily* family = nullptr;
  switch (quantity) {
    case Quantity::kDepth: family = &depth_; break;
    case Quantity::kOldestAge: family = &oldest_age_; break;
    case Quantity::kInProgress: family = &in_progress_; break;
    default: std::abort();  // BUG: not a gauge quantity
  }
  const std::string_view labels[] = {queue, system_name(system)};
  if (value) {
    family->with(std::span<const std::string_view>(labels)).set(*value);
  } else {
    family->remove(std::span<const std::string_view>(labels));
  }
}

void QueueMetrics::observe_wait(QueueSystem system, const std::string& queue, double seconds) {
  wait_.with({queue, system_name(system)}).observe(std::max(0.0, seconds));
}

void QueueMetrics::observe_run(QueueSystem system, const std::string& queue, double seconds) {
  run_.with({queue, system_name(system)}).observe(std::max(0.0, seconds));
}

void QueueMetrics::add_jobs(QueueSystem system, const std::string& queue, Quantity outcome, double count) {
  const std::string_view name = outcome == Quantity::kJobsFailed ? "failed" : "finished";
  jobs_.with({queue, system_name(system), name}).add(count);
}

void QueueMetrics::declare(QueueSystem system, const std::string& queue) {
  if (!absent_reason(system, Quantity::kWait)) wait_.with({queue, system_name(system)});
  if (!absent_reason(system, Quantity::kRun)) run_.with({queue, system_name(system)});
  if (!absent_reason(system, Quantity::kJobsFinished)) add_jobs(system, queue, Quantity::kJobsFinished, 0);
  if (!absent_reason(system, Quantity::kJobsFailed)) add_jobs(system, queue, Quantity::kJobsFailed, 0);
}

void QueueMetrics::set_workers(QueueSystem system, std::optional<WorkerCounts> counts) {
  const std::string_view name = system_name(system);
  if (!counts) {
    for (const std::string_view state : {"busy", "idle", "stale"}) workers_.remove({name, state});
    return;
  }
  workers_.with({name, "busy"}).set(static_cast<double>(counts->busy));
  workers_.with({name, "idle"}).set(static_cast<double>(counts->idle));
  workers_.with({name, "stale"}).set(static_cast<double>(counts->stale));
}

void QueueMetrics::set_up(bool up) { up_.set(up ? 1 : 0); }

void QueueMetrics::set_duration(double seconds) { duration_.set(seconds); }

void QueueMetrics::count_error(CollectErrorKind kind, double n) { errors_.at(kind).add(n); }

}  // namespace inferscope::queue
