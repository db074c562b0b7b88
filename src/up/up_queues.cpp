// File: up_queues.cpp
#include "up/up_queues.h"

#include "queue/redis_target.h"
#include "relay/channel.h"
#include "up/stack_status.h"
#include "up/up_routes.h"

namespace inferscope::up {
namespace {

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

std::string queue_metrics_path(const std::string& target_name) { return "/queues/" + target_name + "/metrics"; }

Result<std::unique_ptr<UpQueues>> UpQueues::create(const config::StackConfig& config,
                                                   std::function<void(const std::string&)> events) {
  std::unique_ptr<UpQueues> out(new UpQueues());
  for (const config::QueueTargetConfig& t : config.queue_targets) {
    auto target = queue::parse_redis_url(t.url);
    if (!target) return make_error("queue target " + t.name + ": " + target.error().message);
    if (!t.password.empty()) {
      auto password = relay::resolve_secret(t.password, "the redis password of target " + t.name);
      if (!password) return password.error();
      target->password = std::move(*password);
    }
    RedisExporterTarget exporter{.name = t.name, .address = queue::describe(*target), .password = target->password};
    queue::QueueCollectorOptions options;
    options.target_name = t.name;
    options.target = std::move(*target);
    options.systems.clear();
    for (const std::string& system : t.systems) {
      if (auto parsed = queue::parse_queue_system(system)) options.systems.push_back(*parsed);
    }
    for (const auto& [key, group] : t.streams) options.streams.push_back({.key = key, .group = group});
    options.lists = t.lists;
    options.interval = t.interval.value_or(config.scrape_interval);
    options.on_event = events;
    Entry entry{t.name, std::make_unique<metrics::Registry>(), nullptr, std::move(exporter)};
    entry.collector = std::make_unique<queue::QueueCollector>(std::move(options), *entry.registry);
    out->entries_.push_back(std::move(entry));
  }
  return out;
}

UpQueues::~UpQueues() { stop(); }

void UpQueues::add_routes(net::Router& router) {
  for (const Entry& e : entries_) {
    router.get(queue_metrics_path(e.name),
               [registry = e.registry.get()](const net::Request& request) { return scrape_response(*registry, request); });
  }
}

void UpQueues::start() {
  for (Entry& e : entries_) e.collector->start();
}

void UpQueues::stop() {
  for (Entry& e : entries_) e.collector->stop();
}

std::vector<RedisExporterTarget> UpQueues::redis_exporters() const {
  std::vector<RedisExporterTarget> out;
  for (const Entry& e : entries_) out.push_back(e.exporter);
  return out;
}

nlohmann::json UpQueues::status_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const Entry& e : entries_) {
    const queue::CollectorStatus s = e.collector->status();
    const bool never = s.last_success == std::chrono::system_clock::time_point{};
    std::string health = s.up ? "up" : (never && s.last_error.empty() ? "not collected yet" : "down");
    nlohmann::json target = {{"name", e.name},
                             {"target", s.target},
                             {"metrics_path", queue_metrics_path(e.name)},
                             {"health", health},
                             {"last_error", s.last_error},
                             {"last_success", never ? "" : format_utc(s.last_success)},
                             {"last_duration_seconds", s.last_duration_seconds},
                             {"queues", nlohmann::json::array()},
                             {"systems", nlohmann::json::array()}};
    for (const queue::QueueStatus& q : s.queues) {
      nlohmann::json absent = nlohmann::json::object();
      for (const auto& [quantity, why] : q.absent) absent[std::string(queue::quantity_name(quantity))] = why;
      target["queues"].push_back({{"system", queue::system_name(q.system)},
                                  {"queue", q.queue},
                                  {"depth", optional_number(q.depth)},
                                  {"oldest_age_seconds", optional_number(q.oldest_age_seconds)},
                                  {"in_progress", optional_number(q.in_progress)},
                                  {"absent", std::move(absent)}});
    }
    for (const queue::SystemStatus& sys : s.systems) {
      nlohmann::json workers = nullptr;
      if (sys.workers) workers = {{"busy", sys.workers->busy}, {"idle", sys.workers->idle}, {"stale", sys.workers->stale}};
      target["systems"].push_back({{"system", queue::system_name(sys.system)},
                                   {"workers", std::move(workers)},
                                   {"workers_absent", sys.workers_absent}});
    }
    out.push_back(std::move(target));
  }
  return out;
}

}  // namespace inferscope::up
