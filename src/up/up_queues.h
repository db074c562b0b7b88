// File: up_queues.h
// UpQueues runs one queue collector (src/queue) per redis target of `inferscope up`, each with its
// own registry rendered at GET /queues/<name>/metrics on up's API (scraped by up's Prometheus as
// job <name>), and reports them for `up --status` / GET /api/status (`queues[]`).
// Example: auto q = UpQueues::create(config, print); q->add_routes(router); q->start(); ... q->stop();
// Thread-safe after create(). Passwords come from password_file:/password_env: through
// relay::resolve_secret and are never printed; neither are job payloads.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <inferscope/common/result.h>
#include <inferscope/metrics/registry.h>

#include "config/stack_config.h"
#include "net/router.h"
#include "queue/queue_collector.h"
#include "up/monitoring_stack.h"

namespace inferscope::up {

// queue_metrics_path returns where up serves a redis target's series: "/queues/<name>/metrics".
std::string queue_metrics_path(const std::string& target_name);

class UpQueues {
 public:
  // create builds a collector per config.queue_targets entry (interval: its queues.interval, else
  // config.scrape_interval). Fails naming the target when its password cannot be read. Each
  // collector's on_event line goes to `events` (without the "inferscope up: " prefix).
  static Result<std::unique_ptr<UpQueues>> create(const config::StackConfig& config,
                                                  std::function<void(const std::string&)> events);
  ~UpQueues();  // stop()

  // add_routes registers GET /queues/<name>/metrics for each target (on the io threads: rendering
  // a registry does not block). `this` must outlive the server.
  void add_routes(net::Router& router);

  // start starts every collector; stop stops and joins them. Both idempotent.
  void start();
  void stop();

  // status_json returns one object per target: {name, target, metrics_path, health ("up",
  // "down", "not collected yet"), last_error, last_success, last_duration_seconds, queues[],
  // systems[]} where absent quantities carry the reason (never 0).
  nlohmann::json status_json() const;

  // redis_exporters returns what up's prometheus-redis-exporter needs per target (address and the
  // password read at create()), for MonitoringStack::start.
  std::vector<RedisExporterTarget> redis_exporters() const;

 private:
  struct Entry {
    std::string name;
    std::unique_ptr<metrics::Registry> registry;
    std::unique_ptr<queue::QueueCollector> collector;
    RedisExporterTarget exporter;
  };
  UpQueues() = default;
  std::vector<Entry> entries_;
};

}  // namespace inferscope::up
