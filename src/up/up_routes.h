// File: up_routes.h
// The routes of `inferscope up`'s own HTTP API, on the shared net::Router: GET /api/status,
// GET /api/alerts, GET /metrics, and POST /api/alertmanager/webhook into the relay. Other parts
// add theirs the same way (see src/up/README.md). Example:
//   net::Router router; add_stack_routes(router, context, status_inputs); add_webhook_route(router, relay, emit);
// Handlers that block run on a lane of worker threads (net::Router::add_blocking), never on the
// io threads: kPrometheusLane for calls that wait on Prometheus (/api/status, /api/alerts, the
// doctor, the dashboard data), kRelayLane for the relay's SQLite writes (the webhook). A stopped
// Prometheus then fills at most its own lane (503 + Retry-After beyond it) while /metrics and
// Alertmanager's webhook keep answering. add_up_lanes sizes both before any route is added.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "net/router.h"
#include "relay/relay.h"
#include "up/stack_status.h"
#include "up/up_context.h"

namespace inferscope::up {

// The lanes of up's blocking routes (other parts use these names, see src/up/README.md).
inline constexpr const char* kPrometheusLane = "prometheus";
inline constexpr const char* kRelayLane = "relay";

// add_up_lanes creates kPrometheusLane (4 threads, 32 waiting) and kRelayLane (2 threads, 64
// waiting: Alertmanager retries a 503, but a burst of groups should not need to). add_stack_routes
// calls it first; the doctor, dashboard and drill routes use these lanes by their default names.
void add_up_lanes(net::Router& router);

// add_stack_routes creates up's lanes (add_up_lanes), then registers GET /api/status
// (build_status_json of status_inputs()), GET /api/alerts ({"alerts": [...]} from Prometheus; 503
// OpenAI error JSON while it is unreachable), both on kPrometheusLane, and GET /metrics
// (context.registry(), negotiated and gzipped like every inferscope /metrics; on the io thread).
// `context` and whatever status_inputs captures must outlive the server.
void add_stack_routes(net::Router& router, const UpContext& context, std::function<StatusInputs()> status_inputs);

// add_webhook_route registers POST /api/alertmanager/webhook: the relay stores the notification
// and its answer (200 only once stored, 400 malformed, 503 database unavailable) goes back to
// Alertmanager; each accepted body's status changes go to `events` (AlertEventTracker). Links to
// a child started on port 0 are first pointed at its real port (fix_local_links with `context`'s
// URLs). `relay` and `context` must outlive the server.
void add_webhook_route(net::Router& router, relay::Relay& relay, const UpContext& context,
                       std::function<void(const std::string&)> events);

// scrape_response renders `registry` for a Prometheus scrape (format from Accept, gzip when
// accepted): up's /metrics and each redis target's /queues/<name>/metrics.
net::Response scrape_response(metrics::Registry& registry, const net::Request& request);

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

}  // namespace inferscope::up
