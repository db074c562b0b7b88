// RQ 1.13 probe (shared/reference/queues.md §1): queue lists, job hashes, registries and worker
// hashes, read with LLEN/LINDEX/ZCOUNT/ZRANGEBYSCORE/HMGET only (never RQ's cleanup).
#include <algorithm>
#include <map>
#include <set>

#include "queue/queue_payload.h"
#include "queue/queue_probe.h"

namespace inferscope::queue::detail {
namespace {

constexpr std::string_view kQueuePrefix = "rq:queue:";
constexpr double kBusyHeartbeatLimit = 90;   // a busy worker heartbeats every 30 s (TTL <= 90 s)
constexpr double kIdleHeartbeatLimit = 480;  // an idle one once per 405 s BLPOP (TTL 480 s)
constexpr std::size_t kMaxWipRead = 1000;    // started jobs read per queue per collection
constexpr std::size_t kMaxRegistryRead = 1000;

// RegistryCursor walks a finished/failed registry forward by score (end + ttl), so each job that
// ends is counted once; jobs already there at the first collection are history, not counted.
struct RegistryCursor {
  bool started = false;
  double score = 0;
  std::set<std::string> ids_at_score{};  // already counted at exactly `score`
};

struct RqQueue {
  RegistryCursor finished{}, failed{};
  // This collection:
  std::optional<long long> depth{}, in_progress{};
  std::string oldest_id{};
  std::optional<double> oldest_enqueued_at{};
  std::string oldest_problem{};
  std::vector<std::string> new_started{};  // wip jobs whose wait is not yet observed
  std::vector<std::string> new_ended{};    // sampled from the registries' new entries
};

class RqProbe final : public QueueProbe {
 public:
  QueueSystem system() const noexcept override { return QueueSystem::kRq; }

  void plan(int round, Pipeline& pipeline, CollectContext& ctx) override {
    if (round == 0) plan_discovery(pipeline, ctx);
    if (round == 1) plan_queues(pipeline, ctx);
    if (round == 2) plan_jobs(pipeline, ctx);
  }

  void publish(CollectContext& ctx, CollectorStatus& status) override {
    for (auto& [name, queue] : queues_) {
      QueueStatus entry{.system = QueueSystem::kRq, .queue = name};
      entry.depth = queue.depth ? std::optional<double>(static_cast<double>(*queue.depth)) : std::nullopt;
      entry.in_progress = queue.in_progress ? std::optional<double>(static_cast<double>(*queue.in_progress)) : std::nullopt;
      if (!queue.depth) entry.absent.emplace_back(Quantity::kDepth, "the queue list could not be read (see collect errors)");
      if (!queue.in_progress) entry.absent.emplace_back(Quantity::kInProgress, "the started registry could not be read");
      if (queue.depth && *queue.depth == 0) {
        entry.oldest_age_seconds = 0;
      } else if (queue.oldest_enqueued_at) {
        entry.oldest_age_seconds = std::max(0.0, ctx.now - *queue.oldest_enqueued_at);
      } else {
        entry.absent.emplace_back(Quantity::kOldestAge,
                                  queue.oldest_problem.empty() ? "the oldest job could not be read" : queue.oldest_problem);
      }
      ctx.metrics.set(QueueSystem::kRq, name, Quantity::kDepth, entry.depth);
      ctx.metrics.set(QueueSystem::kRq, name, Quantity::kOldestAge, entry.oldest_age_seconds);
      ctx.metrics.set(QueueSystem::kRq, name, Quantity::kInProgress, entry.in_progress);
      status.queues.push_back(std::move(entry));
    }
    SystemStatus system{.system = QueueSystem::kRq};
    if (workers_read_) {
      system.workers = workers_;
    } else {
      system.workers_absent = "the worker set rq:workers could not be read";
    }
    ctx.metrics.set_workers(QueueSystem::kRq, system.workers);
    status.systems.push_back(std::move(system));
  }

 private:
  void plan_discovery(Pipeline& pipeline, CollectContext& ctx) {
    pipeline.add({"SMEMBERS", "rq:queues"}, [this, &ctx](const RedisReply& reply) {
      if (reply.is_error() || !reply.is_array()) {
        ctx.count(CollectErrorKind::kRedisError);
        return;
      }
      std::vector<std::string> names;
      for (const RedisReply& member : reply.elements) {
        if (member.str.substr(0, kQueuePrefix.size()) != kQueuePrefix) continue;
        std::string name = member.str.substr(kQueuePrefix.size());
        if (!is_label_safe(name)) {
          ctx.count(CollectErrorKind::kBinaryKey);
          continue;
        }
        names.push_back(std::move(name));
      }
      std::sort(names.begin(), names.end());
      for (const std::string& name : names) {
        if (queues_.count(name) == 0 && queues_.size() >= ctx.options.max_queues) {
          ctx.count(CollectErrorKind::kTooManyQueues);
          continue;
        }
        if (queues_.emplace(name, RqQueue{}).second) ctx.metrics.declare(QueueSystem::kRq, name);
      }
    });
    pipeline.add({"SMEMBERS", "rq:workers"}, [this, &ctx](const RedisReply& reply) {
      worker_keys_.clear();
      workers_read_ = !reply.is_error() && reply.is_array();
      if (!workers_read_) {
        ctx.count(CollectErrorKind::kRedisError);
        return;
      }
      for (const RedisReply& member : reply.elements) {
        if (worker_keys_.size() >= ctx.options.max_workers) break;
        worker_keys_.push_back(member.str);
      }
    });
  }

  void plan_queues(Pipeline& pipeline, CollectContext& ctx) {
    const std::string now = format_score(ctx.now, true);
    for (auto& [name, queue] : queues_) {
      RqQueue* q = &queue;
      *q = RqQueue{.finished = std::move(q->finished), .failed = std::move(q->failed)};
      const std::string list = std::string(kQueuePrefix) + name;
      const std::string wip = "rq:wip:" + name;
      pipeline.add({"LLEN", list}, [q, &ctx](const RedisReply& r) {
        if (r.type == RedisReply::Type::kInteger) q->depth = r.integer;
        else ctx.count(CollectErrorKind::kRedisError);
      });
      pipeline.add({"LINDEX", list, "0"}, [q, &ctx](const RedisReply& r) {
        if (r.is_error()) ctx.count(CollectErrorKind::kRedisError);
        else if (!r.is_nil()) q->oldest_id = r.str;
      });
      pipeline.add({"ZCOUNT", wip, now, "+inf"}, [q, &ctx](const RedisReply& r) {
        if (r.type == RedisReply::Type::kInteger) q->in_progress = r.integer;
        else ctx.count(CollectErrorKind::kRedisError);
      });
      pipeline.add({"ZRANGEBYSCORE", wip, now, "+inf", "LIMIT", "0", std::to_string(kMaxWipRead)},
                   [this, q, &ctx](const RedisReply& r) {
                     if (r.is_error()) {
                       ctx.count(CollectErrorKind::kRedisError);
                       return;
                     }
                     for (std::string& id : reply_strings(r)) {
                       if (!seen_started_.contains(id) && q->new_started.size() < ctx.options.sample_jobs) {
                         q->new_started.push_back(std::move(id));
                       }
                     }
                   });
      plan_registry(pipeline, ctx, "rq:finished:" + name, q->finished, q, Quantity::kJobsFinished, name);
      plan_registry(pipeline, ctx, "rq:failed:" + name, q->failed, q, Quantity::kJobsFailed, name);
    }
    for (const std::string& key : worker_keys_) {
      pipeline.add({"HMGET", key, "state", "last_heartbeat", "death"}, [this, &ctx](const RedisReply& r) {
        classify_worker(r, ctx);
      });
    }
    workers_ = WorkerCounts{};
  }

  void plan_registry(Pipeline& pipeline, CollectContext& ctx, const std::string& key, RegistryCursor& cursor,
                     RqQueue* q, Quantity outcome, const std::string& name) {
    if (!cursor.started) {
      pipeline.add({"ZREVRANGE", key, "0", "0", "WITHSCORES"}, [&cursor, &ctx](const RedisReply& r) {
        if (r.is_error()) {
          ctx.count(CollectErrorKind::kRedisError);
          return;
        }
        cursor.started = true;
        const auto values = reply_strings(r);
        if (values.size() == 2) {
          cursor.score = std::strtod(values[1].c_str(), nullptr);
          cursor.ids_at_score = {values[0]};
        }
      });
      return;
    }
    pipeline.add({"ZRANGEBYSCORE", key, format_score(cursor.score, false), "+inf", "WITHSCORES", "LIMIT", "0",
                  std::to_string(kMaxRegistryRead)},
                 [this, &cursor, q, outcome, name, &ctx](const RedisReply& r) {
                   if (r.is_error()) {
                     ctx.count(CollectErrorKind::kRedisError);
                     return;
                   }
                   const auto values = reply_strings(r);
                   long long counted = 0;
                   for (std::size_t i = 0; i + 1 < values.size(); i += 2) {
                     const std::string& id = values[i];
                     const double score = std::strtod(values[i + 1].c_str(), nullptr);
                     if (score == cursor.score && cursor.ids_at_score.count(id) != 0) continue;
                     if (score != cursor.score) {
                       cursor.score = score;
                       cursor.ids_at_score.clear();
                     }
                     cursor.ids_at_score.insert(id);
                     ++counted;
                     if (q->new_ended.size() < ctx.options.sample_jobs) q->new_ended.push_back(id);
                   }
                   if (counted > 0) ctx.metrics.add_jobs(QueueSystem::kRq, name, outcome, static_cast<double>(counted));
                 });
  }

  void classify_worker(const RedisReply& r, CollectContext& ctx) {
    if (r.is_error() || !r.is_array() || r.elements.size() != 3) {
      ctx.count(CollectErrorKind::kRedisError);
      return;
    }
    const RedisReply& state = r.elements[0];
    const RedisReply& heartbeat = r.elements[1];
    const RedisReply& death = r.elements[2];
    if (state.is_nil() && heartbeat.is_nil() && death.is_nil()) {
      ++workers_.stale;  // hash expired after SIGKILL/OOM; the set member stays until maintenance
      return;
    }
    if (!death.is_nil()) return;  // exited cleanly; about to leave the sets
    std::optional<double> beat;
    if (!heartbeat.is_nil()) {
      beat = parse_rq_timestamp(heartbeat.str);
      if (!beat) ctx.count(CollectErrorKind::kMalformedTimestamp);
    }
    const double silence = beat ? ctx.now - *beat : 0;
    if (state.str == "busy") {
      if (silence > kBusyHeartbeatLimit) ++workers_.stale;
      else ++workers_.busy;
    } else if (silence > kIdleHeartbeatLimit) {
      ++workers_.stale;
    } else {
      ++workers_.idle;
    }
  }

  void plan_jobs(Pipeline& pipeline, CollectContext& ctx) {
    for (auto& [name, queue] : queues_) {
      RqQueue* q = &queue;
      const std::string queue_name = name;
      if (!q->oldest_id.empty()) {
        pipeline.add({"HMGET", "rq:job:" + q->oldest_id, "enqueued_at"}, [q, &ctx](const RedisReply& r) {
          const auto t = timestamps(r, 1, ctx);
          if (!t) {
            q->oldest_problem = "the oldest job's hash is missing or has no valid enqueued_at";
            return;
          }
          q->oldest_enqueued_at = (*t)[0];
        });
      }
      for (const std::string& id : q->new_started) {
        pipeline.add({"HMGET", "rq:job:" + id, "enqueued_at", "started_at"}, [this, id, queue_name, &ctx](const RedisReply& r) {
          const auto t = timestamps(r, 2, ctx);
          if (!t) return;
          seen_started_.insert(id);
          ctx.metrics.observe_wait(QueueSystem::kRq, queue_name, (*t)[1] - (*t)[0]);
        });
      }
      for (const std::string& id : q->new_ended) {
        pipeline.add({"HMGET", "rq:job:" + id, "enqueued_at", "started_at", "ended_at"},
                     [this, id, queue_name, &ctx](const RedisReply& r) {
                       const auto t = timestamps(r, 3, ctx);
                       if (!t) return;
                       if (!seen_started_.contains(id)) {
                         seen_started_.insert(id);
                         ctx.metrics.observe_wait(QueueSystem::kRq, queue_name, (*t)[1] - (*t)[0]);
                       }
                       ctx.metrics.observe_run(QueueSystem::kRq, queue_name, (*t)[2] - (*t)[1]);
                     });
      }
    }
  }

  // timestamps parses the `count` RQ timestamps of an HMGET reply; nullopt (counted) when one is
  // missing or malformed, nullopt (not counted) when the whole hash is gone (expired or deleted).
  static std::optional<std::vector<double>> timestamps(const RedisReply& r, std::size_t count, CollectContext& ctx) {
    if (r.is_error() || !r.is_array() || r.elements.size() != count) {
      ctx.count(CollectErrorKind::kRedisError);
      return std::nullopt;
    }
    if (std::all_of(r.elements.begin(), r.elements.end(), [](const RedisReply& e) { return e.is_nil(); })) {
      return std::nullopt;
    }
    std::vector<double> out;
    for (const RedisReply& element : r.elements) {
      if (element.str.size() > kMaxPayloadBytes) {
        ctx.count(CollectErrorKind::kHugeValue);
        return std::nullopt;
      }
      const auto t = element.is_nil() ? std::nullopt : parse_rq_timestamp(element.str);
      if (!t) {
        ctx.count(CollectErrorKind::kMalformedTimestamp);
        return std::nullopt;
      }
      out.push_back(*t);
    }
    return out;
  }

  std::map<std::string, RqQueue> queues_;
  std::vector<std::string> worker_keys_;
  bool workers_read_ = false;
  WorkerCounts workers_;
  RecentIds seen_started_{100000};
};

}  // namespace

std::unique_ptr<QueueProbe> make_rq_probe() { return std::make_unique<RqProbe>(); }

}  // namespace inferscope::queue::detail
