// Celery 5.2 probe, Redis broker (shared/reference/queues.md §2): queues found through kombu's
// binding sets, each queue's four priority lists, the oldest message of each, and the workers
// from their heartbeat events (CeleryHeartbeats).
#include <algorithm>
#include <map>
#include <set>

#include "queue/celery_heartbeats.h"
#include "queue/queue_payload.h"
#include "queue/queue_probe.h"

namespace inferscope::queue::detail {
namespace {

constexpr std::string_view kBindingPrefix = "_kombu.binding.";
constexpr std::string_view kSeparator = "\x06\x16";
// kombu's priority steps: the base list holds step 0, then one list per step.
constexpr std::string_view kPrioritySuffixes[] = {"", "\x06\x16" "3", "\x06\x16" "6", "\x06\x16" "9"};

// is_internal_exchange: the event and remote-control (pidbox) exchanges bind per-process queues
// that are not job queues.
bool is_internal_exchange(std::string_view exchange) {
  return exchange == "celeryev" || (exchange.size() >= 7 && exchange.substr(exchange.size() - 7) == ".pidbox");
}

struct CeleryQueue {
  std::optional<long long> depth;
  int tails_read = 0;                 // priority lists with a message at the pop end
  int tails_timed = 0;                // of which carry inferscope_enqueued_at
  std::optional<double> oldest_enqueued_at;
  bool malformed = false;
};

class CeleryProbe final : public QueueProbe {
 public:
  explicit CeleryProbe(std::shared_ptr<const CeleryHeartbeats> heartbeats) : heartbeats_(std::move(heartbeats)) {}

  QueueSystem system() const noexcept override { return QueueSystem::kCelery; }

  void plan(int round, Pipeline& pipeline, CollectContext& ctx) override {
    if (round == 0) plan_discovery(pipeline, ctx);
    if (round == 1) plan_queues(pipeline, ctx);
  }

  void publish(CollectContext& ctx, CollectorStatus& status) override {
    std::optional<CeleryHeartbeats::HeartbeatSnapshot> beats;
    if (heartbeats_) beats = heartbeats_->snapshot();
    for (auto& [name, queue] : queues_) {
      QueueStatus entry{.system = QueueSystem::kCelery, .queue = name};
      if (queue.depth) entry.depth = static_cast<double>(*queue.depth);
      else entry.absent.emplace_back(Quantity::kDepth, "the queue lists could not be read (see collect errors)");
      if (queue.depth && *queue.depth == 0) {
        entry.oldest_age_seconds = 0;
      } else if (queue.tails_read > 0 && queue.tails_timed == queue.tails_read && queue.oldest_enqueued_at) {
        entry.oldest_age_seconds = std::max(0.0, ctx.now - *queue.oldest_enqueued_at);
      } else {
        entry.absent.emplace_back(Quantity::kOldestAge,
                                  queue.malformed ? "the oldest message is not a Celery message"
                                                  : "Celery messages carry no enqueue time; producers can add the "
                                                    "header inferscope_enqueued_at (Unix seconds)");
      }
      if (queues_.size() == 1 && beats) {
        entry.in_progress = static_cast<double>(beats->active);
      } else {
        entry.absent.emplace_back(
            Quantity::kInProgress,
            !beats ? (heartbeats_ ? heartbeats_->not_ready_reason() : std::string("not listening to worker events"))
                   : "Celery workers report active tasks per worker, not per queue (known only with one queue)");
      }
      ctx.metrics.set(QueueSystem::kCelery, name, Quantity::kDepth, entry.depth);
      ctx.metrics.set(QueueSystem::kCelery, name, Quantity::kOldestAge, entry.oldest_age_seconds);
      ctx.metrics.set(QueueSystem::kCelery, name, Quantity::kInProgress, entry.in_progress);
      status.queues.push_back(std::move(entry));
    }
    SystemStatus system{.system = QueueSystem::kCelery};
    if (beats) system.workers = beats->workers;
    else system.workers_absent = heartbeats_ ? heartbeats_->not_ready_reason() : "not listening to worker events";
    ctx.metrics.set_workers(QueueSystem::kCelery, system.workers);
    status.systems.push_back(std::move(system));
  }

  std::vector<ScanPattern> scan_patterns(CollectContext&) override {
    return {{.pattern = std::string(kBindingPrefix) + "*", .type = "set"}};
  }

  void on_scanned(const ScanPattern&, const std::string& key, CollectContext& ctx) override {
    if (binding_keys_.size() < ctx.options.max_queues) binding_keys_.insert(key);
  }

 private:
  // plan_discovery reads the binding sets known so far: the default exchange's from the first
  // collection on, the others once a discovery pass found them.
  void plan_discovery(Pipeline& pipeline, CollectContext& ctx) {
    for (const std::string& key : binding_keys_) {
      const std::string exchange = key.substr(kBindingPrefix.size());
      if (is_internal_exchange(exchange)) continue;
      pipeline.add({"SMEMBERS", key}, [this, &ctx](const RedisReply& r) {
        if (r.is_error() || !r.is_array()) {
          ctx.count(CollectErrorKind::kRedisError);
          return;
        }
        for (const std::string& member : reply_strings(r)) add_binding(member, ctx);
      });
    }
  }

  // add_binding takes the queue from a binding member "<routing key>\x06\x16<pattern>\x06\x16<queue>".
  void add_binding(std::string_view member, CollectContext& ctx) {
    const auto last = member.rfind(kSeparator);
    if (last == std::string_view::npos) {
      ctx.count(CollectErrorKind::kMalformedMessage);
      return;
    }
    const std::string queue(member.substr(last + kSeparator.size()));
    if (queues_.count(queue) != 0) return;
    if (!is_label_safe(queue)) {
      ctx.count(CollectErrorKind::kBinaryKey);
      return;
    }
    if (queues_.size() >= ctx.options.max_queues) {
      ctx.count(CollectErrorKind::kTooManyQueues);
      return;
    }
    queues_.emplace(queue, CeleryQueue{});
    ctx.metrics.declare(QueueSystem::kCelery, queue);
  }

  void plan_queues(Pipeline& pipeline, CollectContext& ctx) {
    for (auto& [name, queue] : queues_) {
      CeleryQueue* q = &queue;
      *q = CeleryQueue{};
      q->depth = 0;
      for (const std::string_view suffix : kPrioritySuffixes) {
        const std::string key = name + std::string(suffix);
        pipeline.add({"LLEN", key}, [q, &ctx](const RedisReply& r) {
          if (r.type != RedisReply::Type::kInteger) {
            ctx.count(CollectErrorKind::kRedisError);
            q->depth.reset();
            return;
          }
          if (q->depth) *q->depth += r.integer;
        });
        // Producers LPUSH and workers BRPOP: the oldest message is at index -1.
        pipeline.add({"LINDEX", key, "-1"}, [q, &ctx](const RedisReply& r) {
          if (r.is_error()) {
            ctx.count(CollectErrorKind::kRedisError);
            return;
          }
          if (r.is_nil()) return;
          ++q->tails_read;
          if (r.str.size() > kMaxPayloadBytes) {
            ctx.count(CollectErrorKind::kHugeValue);
            q->malformed = true;
            return;
          }
          auto message = parse_celery_message(r.str);
          if (!message) {
            ctx.count(CollectErrorKind::kMalformedMessage);
            q->malformed = true;
            return;
          }
          if (!message->enqueued_at) return;
          ++q->tails_timed;
          if (!q->oldest_enqueued_at || *message->enqueued_at < *q->oldest_enqueued_at) {
            q->oldest_enqueued_at = message->enqueued_at;
          }
        });
      }
    }
  }

  std::shared_ptr<const CeleryHeartbeats> heartbeats_;
  std::set<std::string> binding_keys_{std::string(kBindingPrefix) + "celery"};
  std::map<std::string, CeleryQueue> queues_;
};

}  // namespace

std::unique_ptr<QueueProbe> make_celery_probe(std::shared_ptr<const CeleryHeartbeats> heartbeats) {
  return std::make_unique<CeleryProbe>(std::move(heartbeats));
}

}  // namespace inferscope::queue::detail
