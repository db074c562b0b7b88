// File: up_routes.h
// The routes of `inferscope up`'s own HTTP API, on the shared net::Router: GET /api/status,
// GET /api/alerts, GET /metrics, and POST /api/alertmanager/webhook into the relay. Other parts
// add theirs the same way (see src/stack/README.md). Example:
//   net::Router router; add_stack_routes(router, context, status_inputs); add_webhook_route(router, relay, emit);
// Handlers run on the server's io threads; /api/status and /api/alerts make short blocking
// loopback queries to Prometheus (3 s cap), so up's server runs several io threads.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "net/router.h"
#include "relay/relay.h"
#include "stack/stack_status.h"
#include "stack/up_context.h"

namespace inferscope::stack {

// add_stack_routes registers GET /api/status (build_status_json of status_inputs()), GET /api/alerts
// ({"alerts": [...]} from Prometheus; 503 OpenAI error JSON while it is unreachable) and GET
// /metrics (context.registry(), negotiated and gzipped like every inferscope /metrics).
// `context` and whatever status_inputs captures must outlive the server.
void add_stack_routes(net::Router& router, const UpContext& context, std::function<StatusInputs()> status_inputs);

// add_webhook_route registers POST /api/alertmanager/webhook: the relay stores the notification
// and its answer (200 only once stored, 400 malformed, 503 database unavailable) goes back to
// Alertmanager; each accepted body's status changes go to `events` (AlertEventTracker). `relay`
// must outlive the server.
void add_webhook_route(net::Router& router, relay::Relay& relay, std::function<void(const std::string&)> events);

// relay_status_json renders the relay's status for GET /api/status (render_status_text reads it).
nlohmann::json relay_status_json(const relay::RelayStatus& status);

// AlertEventTracker turns v4 webhook bodies into "inferscope up: alert firing|resolved NAME
// job=.. model=.. severity=.." lines, one per alert whose status changed since the last body that
// carried it (Alertmanager repeats and retries print nothing; the watchdog is skipped).
// Thread-safe.
class AlertEventTracker {
 public:
  // lines returns the event lines for one webhook body; empty for a body that is not a v4 webhook.
  std::vector<std::string> lines(std::string_view webhook_body);

 private:
  std::mutex mutex_;
  std::map<std::string, std::string> status_by_alert_;  // fingerprint (or labels) -> last status
};

}  // namespace inferscope::stack
