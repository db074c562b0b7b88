// File: dashboard/dashboard_http.h
// The dashboard's HTTP surface as plain functions (request path + query -> answer), so any server
// core can mount it: GET / (the page), GET /assets/app.js and /assets/app.css (embedded, cached
// by the browser), GET /api/dashboard/meta, GET /api/dashboard/data?range=&target=&model= and
// GET /api/dashboard/exemplars?range=&target=&model= (the e2e and TTFT charts' trace_id exemplars).
// Bad parameters get 400 with the OpenAI error JSON; unknown paths under these prefixes 404.
// Example: DashboardAnswer a = answer_dashboard_request(*data, "/api/dashboard/data", "range=1h");
// Thread-safe as DashboardData is. Blocks for the Prometheus round trips (tens of ms, bounded by
// DashboardOptions::query_timeout): mount it on a server with more than one io thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dashboard/dashboard_data.h"

namespace inferscope::dashboard {

// DashboardAnswer is a whole HTTP answer.
struct DashboardAnswer {
  int status = 200;
  std::string content_type;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// kDashboardPaths lists the exact paths the dashboard answers (assets: the /assets/ prefix).
inline constexpr std::string_view kDashboardPaths[] = {"/", "/index.html", "/api/dashboard/meta", "/api/dashboard/data",
                                                      "/api/dashboard/exemplars"};
inline constexpr std::string_view kAssetPrefix = "/assets/";

// answer_page_request answers the page and its assets (no Prometheus needed); nullopt for any
// other path.
std::optional<DashboardAnswer> answer_page_request(std::string_view path);

// answer_dashboard_request answers GET `path` with query string `query` (without '?').
DashboardAnswer answer_dashboard_request(DashboardData& data, std::string_view path, std::string_view query);

}  // namespace inferscope::dashboard
