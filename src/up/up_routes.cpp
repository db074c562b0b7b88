// File: up_routes.cpp
#include "up/up_routes.h"

#include <inferscope/metrics/exposition.h>
#include <nlohmann/json.hpp>

#include "up/generated_files.h"
#include "up/notification_links.h"

namespace inferscope::up {
namespace {

net::Response unavailable(std::string message) {
  net::ApiError error = net::ApiError::server_error(std::move(message));
  error.status = 503;
  return net::Response::error(error);
}

}  // namespace

std::vector<std::string> AlertEventTracker::lines(std::string_view webhook_body) {
  std::vector<std::string> lines;
  const auto body = nlohmann::json::parse(webhook_body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("alerts") || !body["alerts"].is_array()) return lines;
  std::lock_guard lock(mutex_);
  for (const auto& alert : body["alerts"]) {
    if (!alert.is_object() || !alert.contains("labels") || !alert["labels"].is_object()) continue;
    const auto& labels = alert["labels"];
    const std::string name = labels.value("alertname", "");
    if (name == "InferscopeWatchdog") continue;
    const std::string status = alert.value("status", std::string("firing"));
    const std::string fingerprint = alert.value("fingerprint", std::string());
    std::string& last = status_by_alert_[fingerprint.empty() ? labels.dump() : fingerprint];
    if (last == status) continue;
    last = status;
    std::string line = "inferscope up: alert " + status + " " + name;
    for (const char* key : {"job", "model", "severity"}) {
      if (labels.contains(key) && labels[key].is_string()) line += std::string(" ") + key + "=" + labels[key].get<std::string>();
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

void add_up_lanes(net::Router& router) {
  router.set_lane(kPrometheusLane, {.threads = 4, .max_waiting = 32, .retry_after_s = 2});
  router.set_lane(kRelayLane, {.threads = 2, .max_waiting = 64, .retry_after_s = 1});
}

void add_stack_routes(net::Router& router, const UpContext& context, std::function<StatusInputs()> status_inputs) {
  add_up_lanes(router);  // first: every blocking route of up goes on one of these lanes
  router.get_blocking("/api/status", [&context, status_inputs](const net::Request&) {
    if (context.prometheus_url().empty()) return unavailable("inferscope up is still starting its stack");
    return net::Response::json(build_status_json(status_inputs()).dump());
  }, kPrometheusLane);
  router.get_blocking("/api/alerts", [&context](const net::Request&) {
    const std::string prometheus = context.prometheus_url();
    if (prometheus.empty()) return unavailable("inferscope up is still starting its stack");
    auto alerts = fetch_alerts(prometheus, context.prometheus_tls());
    if (!alerts) return unavailable(alerts.error().message);
    return net::Response::json(nlohmann::json{{"alerts", *alerts}}.dump());
  }, kPrometheusLane);
  router.get("/metrics", [&context](const net::Request& request) { return scrape_response(context.registry(), request); });
}

net::Response scrape_response(metrics::Registry& registry, const net::Request& request) {
  metrics::ScrapeResponse scrape = metrics::render_scrape(registry, request.header("Accept"), request.header("Accept-Encoding"));
  net::Response response;
  response.content_type = scrape.content_type;
  response.body = std::move(scrape.body);
  if (scrape.gzipped) response.headers.emplace_back("Content-Encoding", "gzip");
  return response;
}

nlohmann::json relay_status_json(const relay::RelayStatus& status) {
  nlohmann::json out = {{"channels", nlohmann::json::array()}, {"watchdog_alarm_raised", status.watchdog_alarm_raised}};
  for (const relay::ChannelStatus& c : status.channels) {
    out["channels"].push_back({{"name", c.name},
                               {"kind", c.kind},
                               {"pending", c.pending},
                               {"failed", c.failed},
                               {"delivered", c.delivered},
                               {"last_error", c.last_error}});
  }
  out["watchdog_last_seen"] = status.watchdog_last_seen ? format_utc(*status.watchdog_last_seen) : "never";
  return out;
}

void add_webhook_route(net::Router& router, relay::Relay& relay, const UpContext& context,
                       std::function<void(const std::string&)> events) {
  auto tracker = std::make_shared<AlertEventTracker>();
  router.add_blocking("POST", kWebhookPath, [&relay, &context, events, tracker](const net::Request& request) {
    // Children started on port 0 link to "http://<hostname>:0/...": point those at the real ports.
    const std::string body = fix_local_links(request.body, context.prometheus_url(), context.alertmanager_url());
    const relay::WebhookReply reply = relay.handle_webhook(body);
    if (reply.status == 200 && events) {
      for (const std::string& line : tracker->lines(request.body)) events(line);
    }
    return net::Response::json(reply.body, reply.status);
  }, kRelayLane);
}

}  // namespace inferscope::up
