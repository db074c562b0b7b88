#include "queue/queue_collector.h"

#include <cinttypes>
#include <cstdio>

#include "queue/celery_heartbeats.h"
#include "queue/queue_probe.h"
#include "queue/redis_client.h"

namespace inferscope::queue {

namespace detail {

std::string format_score(double seconds, bool exclusive) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%s%.6f", exclusive ? "(" : "", seconds);
  return buffer;
}

std::vector<std::string> reply_strings(const RedisReply& reply) {
  std::vector<std::string> out;
  if (!reply.is_array()) return out;
  out.reserve(reply.elements.size());
  for (const RedisReply& element : reply.elements) out.push_back(element.str);
  return out;
}

const RedisReply* reply_field(const RedisReply& reply, std::string_view name) {
  if (!reply.is_array()) return nullptr;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    if (reply.elements[i].str == name) return &reply.elements[i + 1];
  }
  return nullptr;
}

}  // namespace detail

namespace {

bool collects(const QueueCollectorOptions& options, QueueSystem system) {
  for (const QueueSystem s : options.systems) {
    if (s == system) return true;
  }
  return false;
}

}  // namespace

QueueCollector::QueueCollector(QueueCollectorOptions options, metrics::Registry& registry)
    : options_(std::move(options)), metrics_(registry, options_.target_name) {
  if (collects(options_, QueueSystem::kRq)) probes_.push_back(detail::make_rq_probe());
  if (collects(options_, QueueSystem::kCelery)) {
    heartbeats_ = std::make_shared<CeleryHeartbeats>(options_.target, options_.timeout,
                                                     [this](CollectErrorKind kind) { metrics_.count_error(kind); });
    probes_.push_back(detail::make_celery_probe(heartbeats_));
  }
  if (collects(options_, QueueSystem::kStreams) || !options_.streams.empty()) {
    probes_.push_back(detail::make_stream_probe());
  }
  if (collects(options_, QueueSystem::kList) || !options_.lists.empty()) probes_.push_back(detail::make_list_probe());
  status_.target_name = options_.target_name;
  status_.target = describe(options_.target);
}

QueueCollector::~QueueCollector() { stop(); }

Result<void> QueueCollector::collect_once() {
  std::lock_guard lock(collect_mutex_);
  return collect_locked();
}

Result<void> QueueCollector::discover_now() {
  std::lock_guard lock(collect_mutex_);
  if (auto connected = connect_locked(); !connected) return connected;
  return discover_locked();
}

Error QueueCollector::fail_locked(const Error& error, CollectErrorKind kind) {
  client_.reset();
  metrics_.count_error(kind);
  Error named{"queue target " + options_.target_name + ": " + error.message};
  record_failure(named);
  return named;
}

Result<void> QueueCollector::connect_locked() {
  if (client_) return {};
  auto client = RedisClient::connect(options_.target, options_.timeout);
  if (!client) {
    const bool auth = client.error().message.rfind("cannot authenticate", 0) == 0;
    return fail_locked(client.error(), auth ? CollectErrorKind::kAuth : CollectErrorKind::kUnreachable);
  }
  client_ = std::make_unique<RedisClient>(std::move(client).value());
  return {};
}

Result<void> QueueCollector::discover_locked() {
  detail::CollectContext ctx{.options = options_, .metrics = metrics_};
  for (auto& probe : probes_) {
    for (const detail::ScanPattern& pattern : probe->scan_patterns(ctx)) {
      // One SCAN round trip per step: each costs Redis O(scan_count), never the whole keyspace.
      std::string cursor = "0";
      do {
        auto replies = client_->pipeline({{"SCAN", cursor, "MATCH", pattern.pattern, "COUNT",
                                           std::to_string(options_.scan_count), "TYPE", pattern.type}});
        if (!replies) return fail_locked(replies.error(), CollectErrorKind::kUnreachable);
        const RedisReply& r = (*replies)[0];
        if (r.is_error() && r.str.rfind("NOAUTH", 0) == 0) {
          return fail_locked(make_error("cannot authenticate to redis at " + describe(options_.target) + ": " + r.str),
                             CollectErrorKind::kAuth);
        }
        if (r.is_error() || !r.is_array() || r.elements.size() != 2) {
          metrics_.count_error(CollectErrorKind::kRedisError);
          break;
        }
        cursor = r.elements[0].str;
        for (const RedisReply& key : r.elements[1].elements) probe->on_scanned(pattern, key.str, ctx);
      } while (cursor != "0");
    }
  }
  last_discovery_ = std::chrono::steady_clock::now();
  return {};
}

Result<void> QueueCollector::collect_locked() {
  const auto started = std::chrono::steady_clock::now();
  const auto fail = [&](const Error& error, CollectErrorKind kind) -> Result<void> { return fail_locked(error, kind); };
  if (auto connected = connect_locked(); !connected) return connected;
  if (!last_discovery_ || started - *last_discovery_ >= options_.discovery_interval) {
    if (auto discovered = discover_locked(); !discovered) return discovered;
  }
  detail::CollectContext ctx{.options = options_, .metrics = metrics_};
  std::string time_error;
  for (int round = 0; round < 3; ++round) {
    detail::Pipeline pipeline;
    if (round == 0) {
      pipeline.add({"TIME"}, [&ctx, &time_error](const RedisReply& r) {
        if (r.is_array() && r.elements.size() == 2) {
          ctx.now = std::strtod(r.elements[0].str.c_str(), nullptr) + std::strtod(r.elements[1].str.c_str(), nullptr) / 1e6;
        } else {
          time_error = r.is_error() ? r.str : "unexpected reply";
        }
      });
    }
    for (auto& probe : probes_) probe->plan(round, pipeline, ctx);
    auto ran = pipeline.run(*client_);
    if (!ran) return fail(ran.error(), CollectErrorKind::kUnreachable);
    if (round == 0 && ctx.now == 0) {
      // NOAUTH: this Redis wants a password and none is configured.
      if (time_error.rfind("NOAUTH", 0) == 0) {
        return fail(make_error("cannot authenticate to redis at " + describe(options_.target) + ": " + time_error),
                    CollectErrorKind::kAuth);
      }
      return fail(make_error("cannot read TIME from redis at " + describe(options_.target) + ": " + time_error),
                  CollectErrorKind::kRedisError);
    }
  }
  CollectorStatus view;
  for (auto& probe : probes_) probe->publish(ctx, view);
  for (QueueStatus& queue : view.queues) {
    for (const Quantity quantity : kAllQuantities) {
      if (quantity == Quantity::kWorkers) continue;
      if (const auto why = absent_reason(queue.system, quantity)) queue.absent.emplace_back(quantity, std::string(*why));
    }
  }
  const double duration = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  metrics_.set_duration(duration);
  metrics_.set_up(true);
  bool recovered = false;
  {
    std::lock_guard lock(status_mutex_);
    recovered = status_.consecutive_failures > 0;
    status_.up = true;
    status_.last_error.clear();
    status_.consecutive_failures = 0;
    status_.last_success = std::chrono::system_clock::now();
    status_.last_duration_seconds = duration;
    status_.queues = std::move(view.queues);
    status_.systems = std::move(view.systems);
  }
  if (recovered && options_.on_event) {
    options_.on_event("queue target " + options_.target_name + ": collecting again from " + describe(options_.target));
  }
  return {};
}

void QueueCollector::record_failure(const Error& error) {
  metrics_.set_up(false);
  bool changed = false;
  {
    std::lock_guard lock(status_mutex_);
    changed = status_.last_error != error.message;
    status_.up = false;
    status_.last_error = error.message;
    ++status_.consecutive_failures;
  }
  if (changed && options_.on_event) options_.on_event(error.message);
}

void QueueCollector::start() {
  std::lock_guard lock(loop_mutex_);
  if (thread_.joinable()) return;
  stopping_ = false;
  if (heartbeats_) heartbeats_->start();
  thread_ = std::thread([this] { run_loop(); });
}

void QueueCollector::stop() {
  {
    std::lock_guard lock(loop_mutex_);
    stopping_ = true;
  }
  loop_wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (heartbeats_) heartbeats_->stop();
}

void QueueCollector::run_loop() {
  std::chrono::milliseconds delay = options_.interval;
  while (true) {
    const auto started = std::chrono::steady_clock::now();
    const bool ok = collect_once().ok();
    // Back-off while Redis is down: interval, 2x, 4x ... up to max_backoff.
    if (ok) {
      delay = options_.interval;
    } else {
      const int failures = std::min(status().consecutive_failures, 20);
      delay = std::min(options_.max_backoff,
                       std::chrono::milliseconds(options_.interval.count() * (1LL << (failures - 1))));
    }
    std::unique_lock lock(loop_mutex_);
    if (loop_wake_.wait_until(lock, started + delay, [this] { return stopping_; })) return;
  }
}

CollectorStatus QueueCollector::status() const {
  std::lock_guard lock(status_mutex_);
  return status_;
}

}  // namespace inferscope::queue
