#include "queue/celery_heartbeats.h"

#include "queue/queue_payload.h"
#include "queue/redis_client.h"

namespace inferscope::queue {
namespace {

// kForgetAfter drops a worker that stopped without a worker-offline event once it has shown as
// stale for this long, so rotating hostnames cannot grow the map without bound.
constexpr std::chrono::hours kForgetAfter{1};
constexpr std::size_t kMaxWorkers = 10000;

}  // namespace

CeleryHeartbeats::CeleryHeartbeats(RedisTarget target, std::chrono::milliseconds timeout,
                                   std::function<void(CollectErrorKind)> on_problem)
    : target_(std::move(target)), timeout_(timeout), on_problem_(std::move(on_problem)) {}

CeleryHeartbeats::~CeleryHeartbeats() { stop(); }

void CeleryHeartbeats::start() {
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { listen(); });
}

void CeleryHeartbeats::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void CeleryHeartbeats::listen() {
  // kombu's fanout prefix is "/<db>."; appending avoids g++ 12's false -Wrestrict on "/" + string.
  std::string pattern = std::to_string(target_.db);
  pattern.insert(0, 1, '/');
  pattern.append(".celeryev/worker.*");
  while (!stopping_) {
    auto client = RedisClient::connect(target_, timeout_);
    Result<void> subscribed = client ? client->send({"PSUBSCRIBE", pattern}) : Result<void>(client.error());
    if (!subscribed) {
      {
        std::lock_guard lock(mutex_);
        listening_since_.reset();
        last_error_ = subscribed.error().message;
      }
      for (int i = 0; i < 10 && !stopping_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    while (!stopping_) {
      auto message = client->next_push(std::chrono::milliseconds(200));
      if (!message) {
        std::lock_guard lock(mutex_);
        listening_since_.reset();
        last_error_ = message.error().message;
        break;
      }
      if (!message->has_value()) continue;
      const RedisReply& reply = **message;
      if (!reply.is_array() || reply.elements.empty()) continue;
      const std::string& kind = reply.elements[0].str;
      if (kind == "psubscribe") {
        std::lock_guard lock(mutex_);
        listening_since_ = Clock::now();
        last_error_.clear();
        continue;
      }
      if (kind != "pmessage" || reply.elements.size() != 4) continue;
      const std::string& data = reply.elements[3].str;
      if (data.size() > kMaxPayloadBytes) {
        if (on_problem_) on_problem_(CollectErrorKind::kHugeValue);
        continue;
      }
      auto event = parse_celery_event(data);
      if (!event) {
        if (on_problem_) on_problem_(CollectErrorKind::kMalformedMessage);
        continue;
      }
      record(*event, Clock::now());
    }
  }
}

void CeleryHeartbeats::record(const CeleryWorkerEvent& event, Clock::time_point at) {
  std::lock_guard lock(mutex_);
  if (event.type == "worker-offline") {
    workers_.erase(event.hostname);
    return;
  }
  if (workers_.size() >= kMaxWorkers && workers_.count(event.hostname) == 0) {
    std::erase_if(workers_, [&](const auto& entry) { return at - entry.second.received > kForgetAfter; });
    if (workers_.size() >= kMaxWorkers) return;
  }
  Worker& worker = workers_[event.hostname];
  worker.received = at;
  worker.freq = event.freq;
  worker.active = event.active;
}

void CeleryHeartbeats::mark_listening_since_for_test(Clock::time_point at) {
  std::lock_guard lock(mutex_);
  listening_since_ = at;
}

std::optional<CeleryHeartbeats::HeartbeatSnapshot> CeleryHeartbeats::snapshot() const {
  return snapshot_at(Clock::now());
}

std::optional<CeleryHeartbeats::HeartbeatSnapshot> CeleryHeartbeats::snapshot_at(Clock::time_point now) const {
  std::lock_guard lock(mutex_);
  if (!listening_since_ || now - *listening_since_ < kWarmup) return std::nullopt;
  HeartbeatSnapshot snapshot;
  for (const auto& [hostname, worker] : workers_) {
    const auto silence = now - worker.received;
    if (silence > kForgetAfter) continue;
    if (silence > std::chrono::duration<double>(2 * worker.freq)) {
      ++snapshot.workers.stale;
    } else if (worker.active > 0) {
      ++snapshot.workers.busy;
      snapshot.active += worker.active;
    } else {
      ++snapshot.workers.idle;
    }
  }
  return snapshot;
}

std::string CeleryHeartbeats::not_ready_reason() const {
  std::lock_guard lock(mutex_);
  if (!last_error_.empty()) return "not subscribed to Celery worker events: " + last_error_;
  if (!listening_since_) return "subscribing to Celery worker events";
  return "listening to Celery worker heartbeats for less than " + std::to_string(kWarmup.count()) + " s";
}

}  // namespace inferscope::queue
