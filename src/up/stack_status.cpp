// File: stack_status.cpp
#include "up/stack_status.h"

#include <fmt/format.h>

#include <ctime>

#include "promapi/prometheus_client.h"

namespace inferscope::up {
namespace {

using nlohmann::json;

std::string text_or(const json& j, const char* key, const std::string& fallback = "") {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::string join_names(const json& names) {
  std::string out;
  for (const json& n : names)
    if (n.is_string()) out += (out.empty() ? "" : ", ") + n.get<std::string>();
  return out.empty() ? "-" : out;
}

// render_report_status prints the daily report's part of the status: schedule and next run, the
// last report built (by the schedule or POST /api/report/send) and each channel's last delivery.
std::string render_report_status(const json& r) {
  std::string out = "daily report:\n";
  const json schedule = r.value("schedule", json());
  if (schedule.is_object()) {
    out += fmt::format("  daily at {} {} to {}; next run {}\n", text_or(schedule, "daily_at", "-"),
                       text_or(schedule, "timezone", "UTC"), join_names(schedule.value("channels", json::array())),
                       text_or(schedule, "next_run", "-"));
  } else {
    out += "  not scheduled (no report: {daily_at} in the config); POST /api/report/send sends one now\n";
  }
  const json last = r.value("last", json());
  if (!last.is_object()) {
    out += "  last: none since up started\n";
  } else if (text_or(last, "result") == "queued") {
    out += fmt::format("  last: {} ({}) queued to {}: {}{}\n", text_or(last, "at", "-"), text_or(last, "trigger", "-"),
                       join_names(last.value("channels", json::array())), text_or(last, "title"),
                       last.value("has_data", true) ? "" : " (no data)");
  } else {
    out += fmt::format("  last: {} ({}) FAILED: {}\n", text_or(last, "at", "-"), text_or(last, "trigger", "-"),
                       text_or(last, "error"));
  }
  for (const json& d : r.value("deliveries", json::array())) {
    out += fmt::format("  {:<16} {:<9} at {}: {}\n", text_or(d, "channel"), text_or(d, "result"), text_or(d, "at", "-"),
                       text_or(d, "text"));
  }
  return out;
}

}  // namespace

std::string format_utc(std::chrono::system_clock::time_point t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

Result<json> fetch_targets(const std::string& prometheus_url, const net::TlsOptions& tls) {
  auto client = promapi::PrometheusClient::create(prometheus_url, {.timeout = std::chrono::seconds(3), .tls = tls});
  if (!client) return client.error();
  auto targets = client->targets();
  if (!targets) return targets.error();
  json out = json::array();
  for (const promapi::TargetHealth& t : *targets) {
    const auto label = [&](const char* name) {
      const auto it = t.labels.find(name);
      return it == t.labels.end() ? std::string() : it->second;
    };
    out.push_back({{"job", label("job")},
                   {"url", t.scrape_url},
                   {"health", t.health.empty() ? "unknown" : t.health},
                   {"last_error", t.last_error},
                   {"last_scrape", t.last_scrape},
                   {"kind", label("inferscope_kind")}});
  }
  return out;
}

Result<json> fetch_alerts(const std::string& prometheus_url, const net::TlsOptions& tls) {
  auto client = promapi::PrometheusClient::create(prometheus_url, {.timeout = std::chrono::seconds(3), .tls = tls});
  if (!client) return client.error();
  auto alerts = client->alerts();
  if (!alerts) return alerts.error();
  json out = json::array();
  for (const promapi::AlertInfo& a : *alerts) {
    const auto label = [&](const char* name) {
      const auto it = a.labels.find(name);
      return it == a.labels.end() ? std::string() : it->second;
    };
    out.push_back({{"alertname", label("alertname")},
                   {"state", a.state},
                   {"severity", label("severity")},
                   {"labels", a.labels},
                   {"annotations", a.annotations},
                   {"active_at", a.active_at},
                   {"value", a.value}});
  }
  return out;
}

namespace {

// render_queue_status prints the redis targets: health and error, then per queue what was collected
// and what cannot be known (with the reason), and workers per system.
std::string render_queue_status(const json& queues) {
  std::string out = "queue targets:\n";
  const auto number = [](const json& v) { return v.is_number() ? fmt::format("{:g}", v.get<double>()) : std::string(); };
  for (const json& t : queues) {
    out += fmt::format("  {:<16} {:<7} {}", text_or(t, "name"), text_or(t, "health"), text_or(t, "target"));
    if (!text_or(t, "last_error").empty()) out += "  last error: " + text_or(t, "last_error");
    out += "\n";
    for (const json& q : t.value("queues", json::array())) {
      std::string line = fmt::format("{}/{}", text_or(q, "system"), text_or(q, "queue"));
      if (!number(q.value("depth", json())).empty()) line += " depth " + number(q["depth"]);
      if (!number(q.value("oldest_age_seconds", json())).empty()) line += " oldest " + number(q["oldest_age_seconds"]) + " s";
      if (!number(q.value("in_progress", json())).empty()) line += " in progress " + number(q["in_progress"]);
      out += fmt::format("  {:<16} {}\n", "", line);
      for (const auto& [quantity, why] : q.value("absent", json::object()).items()) {
        out += fmt::format("  {:<16}   no {}: {}\n", "", quantity, why.is_string() ? why.get<std::string>() : "");
      }
    }
    for (const json& sys : t.value("systems", json::array())) {
      if (sys.value("workers", json()).is_object()) {
        const json& w = sys["workers"];
        out += fmt::format("  {:<16} {} workers: busy {} idle {} stale {}\n", "", text_or(sys, "system"),
                           w.value("busy", 0), w.value("idle", 0), w.value("stale", 0));
      } else {
        out += fmt::format("  {:<16} {} workers unknown: {}\n", "", text_or(sys, "system"), text_or(sys, "workers_absent"));
      }
    }
  }
  return out;
}

}  // namespace

json build_status_json(const StatusInputs& in) {
  json status = {{"prometheus", in.prometheus_url},
                 {"alertmanager", in.alertmanager_url},
                 {"api", in.api_url},
                 {"children", json::array()},
                 {"targets", json::array()},
                 {"alerts", json::array()},
                 {"errors", json::array()},
                 {"queues", in.queues},
                 {"relay", in.relay},
                 {"report", in.report}};
  for (const ChildStatus& c : in.children) {
    status["children"].push_back({{"name", c.name},
                                  {"pid", c.pid},
                                  {"port", c.port},
                                  {"running", c.running},
                                  {"up_since", c.running ? format_utc(c.up_since) : ""},
                                  {"restarts", c.restarts},
                                  {"last_exit", c.last_exit}});
  }
  if (auto targets = fetch_targets(in.prometheus_url, in.prometheus_tls)) {
    for (json& t : *targets) {
      const std::string job = t["job"];
      if (const auto d = in.dialects.find(job); d != in.dialects.end()) t["dialect"] = d->second;
      if (const auto m = in.missing_alerts.find(job); m != in.missing_alerts.end()) t["missing_alerts"] = m->second;
      if (const auto n = in.kind_notes.find(job); n != in.kind_notes.end()) t["kind_note"] = n->second;
      status["targets"].push_back(std::move(t));
    }
  } else {
    status["errors"].push_back(targets.error().message);
  }
  if (auto alerts = fetch_alerts(in.prometheus_url, in.prometheus_tls)) {
    status["alerts"] = std::move(*alerts);
  } else {
    status["errors"].push_back(alerts.error().message);
  }
  return status;
}

std::string render_status_text(const json& s) {
  std::string out = fmt::format("inferscope up: prometheus={} alertmanager={} api={}\n", text_or(s, "prometheus", "-"),
                                text_or(s, "alertmanager", "-"), text_or(s, "api", "-"));
  out += "children:\n";
  if (!s.contains("children") || s["children"].empty()) out += "  (none)\n";
  for (const json& c : s.value("children", json::array())) {
    out += fmt::format("  {:<14} {:<8} pid {:<8} port {:<6} up since {:<21} restarts {}", text_or(c, "name"),
                       c.value("running", false) ? "running" : "DOWN", c.value("pid", 0), c.value("port", 0),
                       text_or(c, "up_since", "-").empty() ? "-" : text_or(c, "up_since"), c.value("restarts", 0));
    if (!text_or(c, "last_exit").empty()) out += " (last exit: " + text_or(c, "last_exit") + ")";
    out += "\n";
  }
  out += "targets:\n";
  if (!s.contains("targets") || s["targets"].empty()) out += "  (none: Prometheus reports no scrape targets)\n";
  for (const json& t : s.value("targets", json::array())) {
    const std::string dialect = text_or(t, "dialect", text_or(t, "kind"));
    out += fmt::format("  {:<16} {:<7} {:<12} {}", text_or(t, "job"), text_or(t, "health"), dialect.empty() ? "-" : dialect,
                       text_or(t, "url"));
    if (!text_or(t, "last_error").empty()) out += "  last error: " + text_or(t, "last_error");
    out += "\n";
    if (!text_or(t, "kind_note").empty()) out += fmt::format("  {:<16} {}\n", "", text_or(t, "kind_note"));
    if (t.contains("missing_alerts")) {
      for (const json& n : t["missing_alerts"]) out += fmt::format("  {:<16} lacks {}\n", "", n.get<std::string>());
    }
  }
  if (s.contains("queues") && !s["queues"].empty()) out += render_queue_status(s["queues"]);
  out += "firing alerts:\n";
  int firing = 0;
  for (const json& a : s.value("alerts", json::array())) {
    if (text_or(a, "state") != "firing") continue;
    ++firing;
    const json labels = a.value("labels", json::object());
    const json annotations = a.value("annotations", json::object());
    out += fmt::format("  {:<32} {:<9} job={:<14} since {}  {}\n", text_or(a, "alertname"), text_or(a, "severity", "-"),
                       text_or(labels, "job", "-"), text_or(a, "active_at", "-").substr(0, 19),
                       text_or(annotations, "summary"));
  }
  if (firing == 0) out += "  (none)\n";
  if (s.contains("relay") && s["relay"].is_object()) {
    out += "notifications:\n";
    for (const json& c : s["relay"].value("channels", json::array())) {
      out += fmt::format("  {:<16} {:<9} pending {} failed {} delivered {}", text_or(c, "name"), text_or(c, "kind"),
                         c.value("pending", 0), c.value("failed", 0), c.value("delivered", 0));
      if (!text_or(c, "last_error").empty()) out += "  last error: " + text_or(c, "last_error");
      out += "\n";
    }
    if (s["relay"].contains("watchdog_last_seen")) {
      out += "  watchdog last seen " + text_or(s["relay"], "watchdog_last_seen", "never") +
             (s["relay"].value("watchdog_alarm_raised", false) ? " (ALARM RAISED)" : "") + "\n";
    }
  }
  if (s.contains("report") && s["report"].is_object()) out += render_report_status(s["report"]);
  for (const json& e : s.value("errors", json::array())) out += "error: " + e.get<std::string>() + "\n";
  return out;
}

}  // namespace inferscope::up
