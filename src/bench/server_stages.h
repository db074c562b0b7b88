// File: server_stages.h
// Server stages for `inferscope bench --server-metrics URL`: the server's own per-stage time
// (inferscope_stage_duration_seconds, e.g. route and kv_transfer of a disaggregated serve) read
// from its /metrics before and after the run, printed as a table whose stages add up to e2e.
// Example: auto a = scrape_server_stages(url, tls); ...run...; auto b = scrape_server_stages(url, tls);
//          std::fputs(format_server_stages(*a, *b).c_str(), stdout);
// Blocking (one HTTP GET per scrape); the formatting is pure.
#pragma once

#include <map>
#include <string>

#include "inferscope/common/result.h"
#include "net/blocking_client.h"

namespace inferscope::bench {

// ServerStageTotals is one scrape: per stage label, the histogram's sum and count (over every
// model), and the server's e2e (inferscope_request_duration_seconds) sum and count.
struct ServerStageTotals {
  std::map<std::string, std::pair<double, double>> stages;  // stage -> {sum seconds, count}
  double e2e_sum = 0, e2e_count = 0;
};

// parse_server_stages reads the totals from an exposition text of `content_type` (empty: 0.0.4).
Result<ServerStageTotals> parse_server_stages(std::string_view text, std::string_view content_type);

// scrape_server_stages GETs `url` (a /metrics URL) and parses it; errors name --server-metrics.
Result<ServerStageTotals> scrape_server_stages(const std::string& url, const net::TlsOptions& tls);

// format_server_stages prints the stages seen between two scrapes in request order (route and
// kv_transfer of a disaggregated fleet included), each as its mean per request of the run and
// its share of e2e, then their sum beside the server's mean e2e. Empty when no request ended.
std::string format_server_stages(const ServerStageTotals& before, const ServerStageTotals& after);

}  // namespace inferscope::bench
