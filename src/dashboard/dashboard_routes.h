// File: dashboard/dashboard_routes.h
// Mounts the dashboard on a net::Router (the one `inferscope up` serves on its --port): GET / (the
// page), /assets/app.js, /assets/app.css, /api/dashboard/meta, /api/dashboard/data and
// /api/dashboard/exemplars.
// Example: add_dashboard_routes(router, [&ctx] { return ctx.prometheus_url(); });
// Thread-safe once registered. The data routes answer 503 (OpenAI error JSON) until
// `prometheus_url` returns a non-empty URL; the page itself is served at once. The data handlers
// block for the Prometheus round trips (bounded by DashboardOptions::query_timeout), so they run
// on the router's blocking lane `lane` (up's "prometheus" lane), never on an io thread.
#pragma once

#include <functional>
#include <string>

#include "dashboard/dashboard_data.h"
#include "net/router.h"

namespace inferscope::dashboard {

// add_dashboard_routes registers the routes; `prometheus_url` is asked on each request until it
// gives a URL, then a DashboardData for it is created and kept. `options` supplies everything else
// (scrape interval, point budget); its prometheus_url is ignored.
void add_dashboard_routes(net::Router& router, std::function<std::string()> prometheus_url,
                          DashboardOptions options = {}, const std::string& lane = "prometheus");

}  // namespace inferscope::dashboard
