#include "promapi/prometheus_client.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>


namespace inferscope::promapi {
namespace {

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

// check_status turns a non-2xx answer into an Error, keeping Prometheus' own error text when the
// body carries one (400/422/503 answers are JSON envelopes).
template <class Parse>
auto parse_answer(const Result<net::HttpReply>& answer, const std::string& what, Parse parse)
    -> decltype(parse(std::string_view{})) {
  if (!answer) return answer.error();
  auto parsed = parse(answer->body);
  if (answer->status / 100 != 2) {
    if (!parsed) return make_error("cannot run " + what + ": HTTP " + std::to_string(answer->status) + ": " +
                                   parsed.error().message);
    return make_error("cannot run " + what + ": HTTP " + std::to_string(answer->status));
  }
  if (!parsed) return make_error("cannot run " + what + ": " + parsed.error().message);
  return parsed;
}

std::string form_for(const QueryRequest& request) {
  if (request.step_s <= 0) return "query=" + url_encode(request.expr) + "&time=" + number(request.end);
  return "query=" + url_encode(request.expr) + "&start=" + number(request.start) + "&end=" + number(request.end) +
         "&step=" + number(request.step_s);
}

constexpr std::string_view kForm = "application/x-www-form-urlencoded";

// post_form and get are the two shapes of an API call: queries go as POST forms (no URL length limit).
Result<net::HttpReply> post_form(net::BlockingClient& http, std::string_view path, const std::string& form) {
  return http.request("POST", path, form, kForm);
}

Result<QueryResult> run_one(net::BlockingClient& http, const QueryRequest& request) {
  const char* path = request.step_s > 0 ? "/api/v1/query_range" : "/api/v1/query";
  return parse_answer(post_form(http, path, form_for(request)), "query " + request.expr,
                      [](std::string_view body) { return parse_query_response(body); });
}

}  // namespace

std::string url_encode(std::string_view value) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size() * 3);
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

Result<PrometheusClient> PrometheusClient::create(std::string_view url, ClientOptions options) {
  auto http = net::BlockingClient::create(
      url, {.timeout = options.timeout, .max_body_bytes = options.max_body_bytes, .tls = options.tls,
            .accept = "application/json"},
      "--prometheus");
  if (!http) return http.error();
  if (options.max_parallel == 0) options.max_parallel = 1;
  return PrometheusClient(std::make_shared<const net::BlockingClient>(std::move(*http)), options);
}

Result<QueryResult> PrometheusClient::query(std::string_view expr, std::optional<double> time) const {
  net::BlockingClient http = http_->sibling();
  std::string form = "query=" + url_encode(expr);
  if (time) form += "&time=" + number(*time);
  return parse_answer(post_form(http, "/api/v1/query", form), "query " + std::string(expr),
                      [](std::string_view body) { return parse_query_response(body); });
}

Result<QueryResult> PrometheusClient::query_range(std::string_view expr, double start, double end,
                                                  double step_s) const {
  if (step_s <= 0) return make_error("cannot run query_range " + std::string(expr) + ": step must be > 0");
  net::BlockingClient http = http_->sibling();
  return run_one(http, QueryRequest{std::string(expr), end, start, step_s});
}

Result<std::vector<Labels>> PrometheusClient::series(const std::vector<std::string>& matchers, double start,
                                                     double end) const {
  if (matchers.empty()) return make_error("cannot list series: no matcher given");
  std::string form;
  for (const auto& m : matchers) form += "match[]=" + url_encode(m) + "&";
  form += "start=" + number(start) + "&end=" + number(end);
  net::BlockingClient http = http_->sibling();
  return parse_answer(post_form(http, "/api/v1/series", form), "series",
                      [](std::string_view body) { return parse_series_response(body); });
}

Result<std::vector<TargetHealth>> PrometheusClient::targets() const {
  net::BlockingClient http = http_->sibling();
  return parse_answer(http.request("GET", "/api/v1/targets?state=active"), "targets",
                      [](std::string_view body) { return parse_targets_response(body); });
}

Result<std::vector<AlertInfo>> PrometheusClient::alerts() const {
  net::BlockingClient http = http_->sibling();
  return parse_answer(http.request("GET", "/api/v1/alerts"), "alerts",
                      [](std::string_view body) { return parse_alerts_response(body); });
}

Result<std::vector<ExemplarSeries>> PrometheusClient::query_exemplars(std::string_view selector, double start,
                                                                    double end) const {
  net::BlockingClient http = http_->sibling();
  const std::string form = "query=" + url_encode(selector) + "&start=" + number(start) + "&end=" + number(end);
  return parse_answer(post_form(http, "/api/v1/query_exemplars", form), "query_exemplars " + std::string(selector),
                      [](std::string_view body) { return parse_exemplars_response(body); });
}

std::vector<Result<QueryResult>> PrometheusClient::query_all(const std::vector<QueryRequest>& requests) const {
  std::vector<std::optional<Result<QueryResult>>> slots(requests.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    net::BlockingClient http = http_->sibling();
    for (std::size_t i = next++; i < requests.size(); i = next++) slots[i].emplace(run_one(http, requests[i]));
  };
  std::size_t threads = std::min<std::size_t>(options_.max_parallel, requests.size());
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  if (threads > 0) worker();
  for (auto& t : pool) t.join();
  std::vector<Result<QueryResult>> out;
  out.reserve(requests.size());
  for (auto& slot : slots) out.push_back(std::move(*slot));
  return out;
}

}  // namespace inferscope::promapi
