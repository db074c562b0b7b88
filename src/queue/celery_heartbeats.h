// File: celery_heartbeats.h
// CeleryHeartbeats: listens to the worker events Celery workers publish by default (no -E needed)
// on /<db>.celeryev/worker.* and keeps each worker's last heartbeat, so the collector can tell
// busy, idle and stale Celery workers (workers never register in Redis). A worker is stale when no
// heartbeat arrived for 2 x its freq (local receive time, so clock skew does not matter); a
// worker-offline event removes it; a worker silent for an hour is forgotten.
// Example: auto h = std::make_shared<CeleryHeartbeats>(target, 2s); h->start(); h->snapshot();
// Thread-safe: one listening thread; snapshot() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "queue/queue_metrics.h"
#include "queue/redis_target.h"

namespace inferscope::queue {

class CeleryHeartbeats {
 public:
  using Clock = std::chrono::steady_clock;

  // HeartbeatSnapshot is the workers now; nullopt from snapshot() until the subscription has been
  // live for kWarmup (before that, an empty map would wrongly say "no workers").
  struct HeartbeatSnapshot {
    WorkerCounts workers{};
    long long active = 0;  // tasks executing on live workers
  };
  static constexpr std::chrono::seconds kWarmup{5};

  // CeleryHeartbeats keeps `target` (its db selects the channel); on_malformed is called (on the
  // listening thread) for each message that is not a worker event.
  CeleryHeartbeats(RedisTarget target, std::chrono::milliseconds timeout,
                   std::function<void(CollectErrorKind)> on_problem);
  ~CeleryHeartbeats();  // stop()

  // start subscribes on a thread, reconnecting every second while Redis is unreachable.
  void start();
  void stop();

  // snapshot classifies the workers heard so far.
  std::optional<HeartbeatSnapshot> snapshot() const;
  // not_ready_reason says why snapshot() is nullopt.
  std::string not_ready_reason() const;

  // record applies one event as received at `at` (the listener's path; public for unit tests).
  void record(const struct CeleryWorkerEvent& event, Clock::time_point at);
  // mark_listening_since_for_test sets when the subscription became live.
  void mark_listening_since_for_test(Clock::time_point at);
  // snapshot_at is snapshot() at a given instant (unit tests).
  std::optional<HeartbeatSnapshot> snapshot_at(Clock::time_point now) const;

 private:
  struct Worker {
    Clock::time_point received{};
    double freq = 2.0;
    long long active = 0;
  };
  void listen();

  RedisTarget target_;
  std::chrono::milliseconds timeout_;
  std::function<void(CollectErrorKind)> on_problem_;
  mutable std::mutex mutex_;
  std::map<std::string, Worker> workers_;
  std::optional<Clock::time_point> listening_since_;
  std::string last_error_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace inferscope::queue
