// File: queue_system.h
// The queue systems the collector knows, and the one table of what each can tell: for every
// system × quantity either nothing (knowable) or the reason the series is absent. Readers (the
// metrics writer, status, docs/queues.md) consult the table instead of special-casing systems.
// Example: if (auto why = absent_reason(QueueSystem::kList, Quantity::kWait)) status.note(*why);
// Pure data, thread-safe.
#pragma once

#include <optional>
#include <string_view>

namespace inferscope::queue {

// QueueSystem is the `system` label: rq, celery, streams, list.
enum class QueueSystem { kRq, kCelery, kStreams, kList };
inline constexpr QueueSystem kAllSystems[] = {QueueSystem::kRq, QueueSystem::kCelery, QueueSystem::kStreams,
                                              QueueSystem::kList};

// Quantity is one of the per-queue or per-system series of the collector.
enum class Quantity { kDepth, kOldestAge, kInProgress, kWait, kRun, kJobsFinished, kJobsFailed, kWorkers };
inline constexpr Quantity kAllQuantities[] = {Quantity::kDepth,        Quantity::kOldestAge, Quantity::kInProgress,
                                              Quantity::kWait,         Quantity::kRun,       Quantity::kJobsFinished,
                                              Quantity::kJobsFailed,   Quantity::kWorkers};

// system_name returns the label value ("rq", "celery", "streams", "list").
std::string_view system_name(QueueSystem system) noexcept;
// parse_queue_system maps a label value back; nullopt if unknown.
std::optional<QueueSystem> parse_queue_system(std::string_view text) noexcept;
// quantity_name returns the status spelling: depth, oldest_age, in_progress, wait, run,
// jobs_finished, jobs_failed, workers.
std::string_view quantity_name(Quantity quantity) noexcept;

// absent_reason returns why `quantity` can never be known for `system` (so its series is absent),
// or nullopt when the collector measures it. Quantities that are knowable only under a condition
// (Celery's oldest age needs a producer header) are knowable here; the collector reports their
// absence per queue with its own reason.
std::optional<std::string_view> absent_reason(QueueSystem system, Quantity quantity) noexcept;

}  // namespace inferscope::queue
