// File: stack_status.h
// The data behind `GET /api/status`, `GET /api/alerts` and `inferscope up --status`: children from
// the supervisor, scrape targets and alerts from Prometheus' API, rendered as JSON and as text.
// Example: auto j = build_status_json({.children = s.status(), .prometheus_url = url, ...});
//          std::fputs(render_status_text(j).c_str(), stdout);
// Pure apart from the blocking HTTP queries of fetch_*; thread-safe. Empty is not healthy: an
// unreachable Prometheus or a target without data shows up as an error, never as "all good".
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include <inferscope/common/result.h>

#include "config/stack_config.h"
#include "net/blocking_client.h"
#include "up/supervisor.h"

namespace inferscope::up {

// fetch_targets returns Prometheus' active targets as
// [{job, url, health, last_error, last_scrape, kind}] (kind = the inferscope_kind label).
Result<nlohmann::json> fetch_targets(const std::string& prometheus_url, const net::TlsOptions& tls = {});

// fetch_alerts returns Prometheus' pending and firing alerts as
// [{alertname, state, severity, labels, annotations, active_at, value}].
Result<nlohmann::json> fetch_alerts(const std::string& prometheus_url, const net::TlsOptions& tls = {});

// StatusInputs are the parts of one status snapshot.
struct StatusInputs {
  std::vector<ChildStatus> children;
  std::string prometheus_url;
  net::TlsOptions prometheus_tls;
  std::string alertmanager_url;
  std::string api_url;
  // dialects maps a target's job to the dialect used for its rules (configured or detected).
  std::map<std::string, std::string> dialects;
  // missing_alerts maps a job to the alert names its dialect cannot support (with the reason).
  std::map<std::string, std::vector<std::string>> missing_alerts;
  // kind_notes maps a job whose kind is not settled to why ("kind unknown yet (not answering
  // since 2026-12-01T18:00:03Z)"), or whose metrics no longer fit its kind (kind_follower.h).
  std::map<std::string, std::string> kind_notes;
  nlohmann::json relay = nullptr;  // the relay's status, or null when no relay runs
  nlohmann::json report = nullptr; // the daily report's schedule, last run and deliveries (UpReport::status_json)
  nlohmann::json queues = nlohmann::json::array();  // redis targets' collectors (UpQueues::status_json)
};

// build_status_json assembles {prometheus, alertmanager, api, children[], targets[] (with dialect,
// missing_alerts and kind_note where known), queues[] (redis targets: health, last error, each
// queue and why a quantity is absent), alerts[], errors[], relay, report}; the Prometheus
// queries' failures go to errors[].
nlohmann::json build_status_json(const StatusInputs& inputs);

// render_status_text prints a status JSON (as build_status_json makes it) for a terminal: one
// section each for children, targets, queue targets, firing alerts, notifications and the daily report.
std::string render_status_text(const nlohmann::json& status);

// format_utc prints a time point as RFC 3339 UTC with seconds ("2026-11-30T13:20:01Z").
std::string format_utc(std::chrono::system_clock::time_point t);

}  // namespace inferscope::up
