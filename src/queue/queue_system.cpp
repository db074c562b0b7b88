#include "queue/queue_system.h"

namespace inferscope::queue {
namespace {

struct Knowledge {
  QueueSystem system;
  Quantity quantity;
  std::string_view why;  // empty: measured
};

// kKnowledge follows shared/reference/queues.md (RQ 1.13, Celery 5.2 with the Redis broker,
// Redis 7.0 streams, plain lists).
constexpr Knowledge kKnowledge[] = {
    {QueueSystem::kRq, Quantity::kDepth, ""},
    {QueueSystem::kRq, Quantity::kOldestAge, ""},
    {QueueSystem::kRq, Quantity::kInProgress, ""},
    {QueueSystem::kRq, Quantity::kWait, ""},
    {QueueSystem::kRq, Quantity::kRun, ""},
    {QueueSystem::kRq, Quantity::kJobsFinished, ""},
    {QueueSystem::kRq, Quantity::kJobsFailed, ""},
    {QueueSystem::kRq, Quantity::kWorkers, ""},
    {QueueSystem::kCelery, Quantity::kDepth, ""},
    {QueueSystem::kCelery, Quantity::kOldestAge, ""},
    {QueueSystem::kCelery, Quantity::kInProgress, ""},
    {QueueSystem::kCelery, Quantity::kWait,
     "Celery records no enqueue or start time in Redis; wait time needs task events (-E) with task_send_sent_event"},
    {QueueSystem::kCelery, Quantity::kRun, "Celery records no start or end time in Redis; run time needs task events (-E)"},
    {QueueSystem::kCelery, Quantity::kJobsFinished,
     "Celery keeps no per-queue record of finished tasks in Redis without task events (-E) or a result backend"},
    {QueueSystem::kCelery, Quantity::kJobsFailed,
     "Celery keeps no per-queue record of failed tasks in Redis without task events (-E) or a result backend"},
    {QueueSystem::kCelery, Quantity::kWorkers, ""},
    {QueueSystem::kStreams, Quantity::kDepth, ""},
    {QueueSystem::kStreams, Quantity::kOldestAge, ""},
    {QueueSystem::kStreams, Quantity::kInProgress, ""},
    {QueueSystem::kStreams, Quantity::kWait, ""},
    {QueueSystem::kStreams, Quantity::kRun, "an acknowledgement (XACK) leaves no time behind in the stream"},
    {QueueSystem::kStreams, Quantity::kJobsFinished, ""},
    {QueueSystem::kStreams, Quantity::kJobsFailed, "a stream has no notion of a failed entry"},
    {QueueSystem::kStreams, Quantity::kWorkers, ""},
    {QueueSystem::kList, Quantity::kDepth, ""},
    {QueueSystem::kList, Quantity::kOldestAge, "a plain list holds no timestamps"},
    {QueueSystem::kList, Quantity::kInProgress, "a popped item leaves no trace in a plain list"},
    {QueueSystem::kList, Quantity::kWait, "a plain list holds no timestamps"},
    {QueueSystem::kList, Quantity::kRun, "a plain list holds no timestamps"},
    {QueueSystem::kList, Quantity::kJobsFinished, "a popped item leaves no trace in a plain list"},
    {QueueSystem::kList, Quantity::kJobsFailed, "a popped item leaves no trace in a plain list"},
    {QueueSystem::kList, Quantity::kWorkers, "workers of a plain list do not register in Redis"},
};

}  // namespace

std::string_view system_name(QueueSystem system) noexcept {
  switch (system) {
    case QueueSystem::kRq: return "rq";
    case QueueSystem::kCelery: return "celery";
    case QueueSystem::kStreams: return "streams";
    case QueueSystem::kList: return "list";
  }
  return "list";
}

std::optional<QueueSystem> parse_queue_system(std::string_view text) noexcept {
  for (const QueueSystem system : kAllSystems) {
    if (system_name(system) == text) return system;
  }
  return std::nullopt;
}

std::string_view quantity_name(Quantity quantity) noexcept {
  switch (quantity) {
    case Quantity::kDepth: return "depth";
    case Quantity::kOldestAge: return "oldest_age";
    case Quantity::kInProgress: return "in_progress";
    case Quantity::kWait: return "wait";
    case Quantity::kRun: return "run";
    case Quantity::kJobsFinished: return "jobs_finished";
    case Quantity::kJobsFailed: return "jobs_failed";
    case Quantity::kWorkers: return "workers";
  }
  return "depth";
}

std::optional<std::string_view> absent_reason(QueueSystem system, Quantity quantity) noexcept {
  for (const Knowledge& k : kKnowledge) {
    if (k.system == system && k.quantity == quantity) {
      if (k.why.empty()) return std::nullopt;
      return k.why;
    }
  }
  return std::string_view("not measured");
}

}  // namespace inferscope::queue
