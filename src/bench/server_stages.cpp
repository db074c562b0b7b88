// Server stage table from two /metrics scrapes (docs/bench.md "Server stages").
#include "bench/server_stages.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <inferscope/metrics/exposition_parser.h>

namespace inferscope::bench {
namespace {

// The stage labels in the order a request goes through them (docs/request-timeline.md); a label
// not listed (a newer server's) follows them in name order.
constexpr std::array<std::string_view, 13> kServerStageOrder = {
    "gateway_queue", "preprocess",  "dependency", "route",           "queue",         "prefill", "kv_transfer",
    "decode",        "upstream_connect", "upstream_ttft", "stream", "postprocess", "send"};

std::string_view server_stage_label(const metrics::ParsedSample& sample) {
  for (const auto& label : sample.labels)
    if (label.name == "stage") return label.value;
  return {};
}

}  // namespace

Result<ServerStageTotals> parse_server_stages(std::string_view text, std::string_view content_type) {
  metrics::ExpositionTextFormat format = metrics::ExpositionTextFormat::kPrometheus004;
  if (!content_type.empty()) {
    auto f = metrics::exposition_format_from_content_type(content_type);
    if (!f) return make_error("cannot read server stages from --server-metrics: " + f.error().message);
    format = *f;
  }
  auto parsed = metrics::parse_exposition(text, format);
  if (!parsed) return make_error("cannot read server stages from --server-metrics: " + parsed.error().message);
  ServerStageTotals out;
  for (const auto* s : metrics::find_samples(*parsed, "inferscope_stage_duration_seconds_sum"))
    out.stages[std::string(server_stage_label(*s))].first += s->value;
  for (const auto* s : metrics::find_samples(*parsed, "inferscope_stage_duration_seconds_count"))
    out.stages[std::string(server_stage_label(*s))].second += s->value;
  for (const auto* s : metrics::find_samples(*parsed, "inferscope_request_duration_seconds_sum")) out.e2e_sum += s->value;
  for (const auto* s : metrics::find_samples(*parsed, "inferscope_request_duration_seconds_count")) out.e2e_count += s->value;
  return out;
}

Result<ServerStageTotals> scrape_server_stages(const std::string& url, const net::TlsOptions& tls) {
  auto reply = net::blocking_http_request("GET", url, {}, {}, std::chrono::seconds(10), tls);
  if (!reply) return make_error("cannot scrape --server-metrics " + url + ": " + reply.error().message);
  if (reply->status != 200)
    return make_error("cannot scrape --server-metrics " + url + ": HTTP " + std::to_string(reply->status));
  return parse_server_stages(reply->body, reply->content_type);
}

std::string format_server_stages(const ServerStageTotals& before, const ServerStageTotals& after) {
  const double requests = after.e2e_count - before.e2e_count;
  if (requests <= 0) return {};
  std::vector<std::string> names;
  for (std::string_view name : kServerStageOrder)
    if (after.stages.count(std::string(name))) names.emplace_back(name);
  for (const auto& [name, totals] : after.stages)
    if (std::find(kServerStageOrder.begin(), kServerStageOrder.end(), name) == kServerStageOrder.end()) names.push_back(name);
  const double e2e_mean = (after.e2e_sum - before.e2e_sum) / requests;
  std::string out = fmt::format("{:=^60}\n", " Server stages (its /metrics) ");
  out += fmt::format("{:<16}{:>12}{:>16}{:>16}\n", "Stage", "Observed", "Mean/req (ms)", "Share of e2e");
  double total = 0;
  for (const std::string& name : names) {
    const auto& a = after.stages.at(name);
    const auto it = before.stages.find(name);
    const double sum = a.first - (it == before.stages.end() ? 0 : it->second.first);
    const double count = a.second - (it == before.stages.end() ? 0 : it->second.second);
    if (count <= 0) continue;
    const double mean = sum / requests;  // per request of the run, so the rows add up to e2e
    total += mean;
    out += fmt::format("{:<16}{:>12.0f}{:>16.3f}{:>15.1f}%\n", name, count, mean * 1000,
                       e2e_mean > 0 ? 100 * mean / e2e_mean : 0.0);
  }
  out += fmt::format("{:<28}{:>16.3f}\n", "Sum of stages", total * 1000);
  out += fmt::format("{:<28}{:>16.3f}  ({:.0f} requests)\n", "Server e2e (mean)", e2e_mean * 1000, requests);
  out += fmt::format("{:=^60}\n", "");
  return out;
}

}  // namespace inferscope::bench
