// End-to-end test of serve's per-request spans: serve (Server::start with the options the
// --otlp-endpoint, --trace-sample and --trace-slow flags set; serve_trace_flags_integration_test
// drives the flags through the CLI) exports to tests/trace/otlp_receiver.js, a Node HTTP server that decodes each
// POST with the OpenTelemetry protobuf definitions from npm (@opentelemetry/otlp-transformer
// 0.52.1) and prints the spans as JSON. Checked field by field: ids and parent links (an incoming
// traceparent continued, an invalid one replaced), names, kinds, times, attributes, and each stage
// span's length against the stage histogram's observation of that request (the /metrics sums
// before and after it); then head sampling off with the tail rules (slow, failed) on.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <nlohmann/json.hpp>

#include "serve/serve_test_support.h"
#include "support/peers.h"
#include "support/temp_dir.h"
#include "support/test_process.h"
#include "serve/serve_metrics.h"
#include "support/wait_until.h"

namespace inferscope::trace {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using serve::testing::HttpReply;
namespace http = boost::beast::http;

std::vector<json> json_lines(const std::string& text) {
  std::vector<json> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // a line still being written
    auto line = json::parse(text.substr(start, end - start), nullptr, false);
    if (!line.is_discarded()) out.push_back(std::move(line));
    start = end + 1;
  }
  return out;
}

// Receiver runs otlp_receiver.js and reads what it printed.
class Receiver {
 public:
  Receiver()
      : dir_("otlp"),
        process_({.binary = "/usr/bin/env",
                  .args = {std::string("NODE_PATH=") + INFERSCOPE_WEB_NODE_MODULES, "node",
                           std::string(INFERSCOPE_SOURCE_DIR) + "/tests/trace/otlp_receiver.js"},
                  .stdout_file = dir_.path() / "out",
                  .stderr_file = dir_.path() / "err"}) {}

  // url waits for the receiver's port line; empty on failure.
  std::string url() {
    int port = 0;
    testing::wait_until([&] {
      for (const json& line : json_lines(process_.stdout_text())) {
        if (line.contains("port")) port = line["port"].get<int>();
      }
      return port != 0;
    }, 30s);
    return port == 0 ? "" : "http://127.0.0.1:" + std::to_string(port) + "/v1/traces";
  }
  std::vector<json> spans() const {
    std::vector<json> out;
    for (json& line : json_lines(process_.stdout_text())) {
      if (line.contains("span")) out.push_back(std::move(line["span"]));
      if (line.contains("error")) ADD_FAILURE() << "the receiver could not decode a POST: " << line.dump();
    }
    return out;
  }
  // wait_spans waits until `count` spans arrived (true) or 20 s passed.
  bool wait_spans(std::size_t count) const {
    return testing::wait_until([&] { return spans().size() >= count; }, 20s);
  }
  std::string log() const { return process_.stdout_text() + process_.stderr_text(); }

 private:
  testing::TempDir dir_;
  testing::TestProcess process_;
};

// Serve runs serve in-process on an ephemeral port, as `inferscope serve --model sim-a
// --time-scale 20 --seed 7` plus the tracing options.
class Serve {
 public:
  explicit Serve(const std::string& endpoint, double sample, std::optional<double> slow_seconds = std::nullopt,
                 bool admin = false) {
    serve::ServerOptions o;
    o.port = 0;
    o.model_names = {"sim-a"};
    o.engine.time_scale = 20;
    o.seed = 7;
    o.enable_admin = admin;
    o.otlp_endpoint = endpoint;
    o.trace_sample = sample;
    o.trace_slow_seconds = slow_seconds;
    auto server = serve::Server::start(o);
    if (!server) {
      error_ = server.error().message;
      return;
    }
    server_ = std::move(*server);
  }
  std::uint16_t port() const { return server_ ? server_->port() : 0; }
  const std::string& log() const { return error_; }
  HttpReply post(const std::string& target, const std::string& body, const std::string& traceparent = "") {
    HttpReply reply;
    if (traceparent.empty()) return serve::testing::request(port(), http::verb::post, target, body);
    // Beast has no field enum for traceparent: send the request by hand.
    boost::asio::io_context io;
    serve::testing::tcp::socket socket(io);
    serve::testing::connect_with_timeouts(socket, port());
    http::request<http::string_body> req{http::verb::post, target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, "application/json");
    req.set("traceparent", traceparent);
    req.body() = body;
    req.prepare_payload();
    http::write(socket, req);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    reply.status = static_cast<int>(res.result_int());
    reply.body = res.body();
    return reply;
  }
  // stage_sums returns inferscope_stage_duration_seconds_sum per stage, from /metrics.
  std::map<std::string, double> stage_sums() {
    std::map<std::string, double> out;
    HttpReply r = serve::testing::request(port(), http::verb::get, "/metrics");
    auto parsed = metrics::parse_exposition(r.body, metrics::ExpositionTextFormat::kPrometheus004);
    if (!parsed) {
      ADD_FAILURE() << parsed.error().message;
      return out;
    }
    for (const char* stage : {"preprocess", "dependency", "queue", "prefill", "decode", "postprocess", "send"}) {
      out[stage] = serve::testing::stage_totals(*parsed, stage).sum;
    }
    return out;
  }
  // wait_recorded waits until serve recorded `n` requests (metrics and spans handed over).
  bool wait_recorded(std::uint64_t n) { return server_->serve_metrics().wait_requests_recorded(n, 20s); }

 private:
  std::unique_ptr<serve::Server> server_;
  std::string error_;
};

std::string attr_string(const json& span, const std::string& key) {
  const json& a = span["attributes"];
  return a.contains(key) && a[key].is_string() ? a[key].get<std::string>() : "<missing>";
}
long long attr_int(const json& span, const std::string& key) {
  const json& a = span["attributes"];
  return a.contains(key) && a[key].is_object() && a[key].contains("int") ? std::stoll(a[key]["int"].get<std::string>()) : -1;
}
double attr_double(const json& span, const std::string& key) {
  const json& a = span["attributes"];
  return a.contains(key) && a[key].is_object() && a[key].contains("double") ? a[key]["double"].get<double>() : -1;
}
std::uint64_t ns(const json& span, const char* field) { return std::stoull(span[field].get<std::string>()); }

std::vector<json> of_trace(const std::vector<json>& spans, const std::string& trace_id) {
  std::vector<json> out;
  for (const json& s : spans) {
    if (s["traceId"] == trace_id) out.push_back(s);
  }
  return out;
}

const json* root_of(const std::vector<json>& spans) {
  for (const json& s : spans) {
    if (s["kind"] == 2) return &s;
  }
  return nullptr;
}

constexpr const char* kIncoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

// Tests one streamed chat request with a traceparent: its root continues the caller's trace and
// every stage span's length equals the stage histogram's observation for that request.
TEST(ServeOtlpIntegrationTest, SpansMatchTheStageHistograms) {
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kNode}));
  Receiver receiver;
  const std::string url = receiver.url();
  ASSERT_FALSE(url.empty()) << receiver.log();
  Serve serve(url, 1.0);
  ASSERT_NE(serve.port(), 0) << serve.log();

  const auto before = serve.stage_sums();
  HttpReply r = serve.post("/v1/chat/completions", serve::testing::chat_body("hello there", 12, true), kIncoming);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(serve.wait_recorded(1));
  const auto after = serve.stage_sums();

  ASSERT_TRUE(receiver.wait_spans(1)) << receiver.log() << serve.log();
  // root + preprocess, queue, prefill, decode, postprocess, send: the receiver prints one line per
  // span, so wait for all seven lines, not just the first of the batch
  ASSERT_TRUE(testing::wait_until([&] { return of_trace(receiver.spans(), "4bf92f3577b34da6a3ce929d0e0e4736").size() >= 7; }, 10s))
      << receiver.log();
  const auto spans = of_trace(receiver.spans(), "4bf92f3577b34da6a3ce929d0e0e4736");
  const json* root = root_of(spans);
  ASSERT_NE(root, nullptr);
  EXPECT_EQ((*root)["parentSpanId"], "00f067aa0ba902b7");
  EXPECT_EQ((*root)["name"], "chat sim-a");
  EXPECT_EQ((*root)["resource"]["service.name"], "inferscope-serve");
  EXPECT_EQ((*root)["scope"]["name"], "inferscope");
  EXPECT_EQ((*root)["status"]["code"], 0);
  EXPECT_EQ(attr_string(*root, "gen_ai.operation.name"), "chat");
  EXPECT_EQ(attr_string(*root, "gen_ai.provider.name"), "inferscope");
  EXPECT_EQ(attr_string(*root, "gen_ai.request.model"), "sim-a");
  EXPECT_EQ(attr_string(*root, "gen_ai.response.model"), "sim-a");
  EXPECT_EQ(attr_int(*root, "gen_ai.request.max_tokens"), 12);
  EXPECT_EQ(attr_int(*root, "http.response.status_code"), 200);
  EXPECT_EQ(attr_string(*root, "http.route"), "/v1/chat/completions");
  EXPECT_GT(attr_int(*root, "gen_ai.usage.input_tokens"), 0);
  const long long output_tokens = attr_int(*root, "gen_ai.usage.output_tokens");
  EXPECT_GT(output_tokens, 0);
  EXPECT_LE(output_tokens, 12);
  const json& reasons = (*root)["attributes"]["gen_ai.response.finish_reasons"];
  ASSERT_TRUE(reasons.is_array());
  EXPECT_TRUE(reasons[0] == "stop" || reasons[0] == "length") << reasons.dump();
  const std::uint64_t root_start = ns(*root, "start");
  const std::uint64_t root_end = ns(*root, "end");
  const double wall_now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(static_cast<double>(root_start) / 1e9, wall_now, 60.0);  // unix time, not the steady clock
  EXPECT_GT(root_end, root_start);
  const double ttft = attr_double(*root, "gen_ai.latency.time_to_first_token");
  EXPECT_GT(ttft, 0);
  EXPECT_LE(ttft, attr_double(*root, "gen_ai.latency.e2e"));
  EXPECT_LE(attr_double(*root, "gen_ai.latency.e2e"), static_cast<double>(root_end - root_start) / 1e9 + 1e-9);

  std::map<std::string, double> span_seconds;
  for (const json& s : spans) {
    if (&s == root) continue;
    const std::string name = s["name"];
    EXPECT_EQ(s["kind"], 1) << name;
    EXPECT_EQ(s["parentSpanId"], (*root)["spanId"]) << name;
    EXPECT_EQ(attr_string(s, "inferscope.stage"), name);
    EXPECT_GE(ns(s, "start"), root_start) << name;
    EXPECT_LE(ns(s, "end"), root_end) << name;
    span_seconds[name] += static_cast<double>(ns(s, "end") - ns(s, "start")) / 1e9;
  }
  std::vector<std::string> observed;
  for (const auto& [stage, sum] : after) {
    const double histogram = sum - before.at(stage);
    if (histogram > 0 || span_seconds.count(stage)) observed.push_back(stage);
    if (!span_seconds.count(stage)) continue;
    EXPECT_NEAR(span_seconds[stage], histogram, 1e-6) << stage;
  }
  for (const char* stage : {"preprocess", "queue", "prefill", "decode", "postprocess", "send"}) {
    EXPECT_TRUE(span_seconds.count(stage)) << "no " << stage << " span";
  }
  EXPECT_EQ(span_seconds.size(), spans.size() - 1);  // one span per stage (no dependency calls here)
}

// Tests a request without traceparent (a new trace, a root without parent) and one with an
// invalid traceparent (a new trace too: its ids are not reused, nothing of it is echoed).
TEST(ServeOtlpIntegrationTest, NewTraceWithoutOrWithAnInvalidTraceparent) {
  Receiver receiver;
  const std::string url = receiver.url();
  ASSERT_FALSE(url.empty()) << receiver.log();
  Serve serve(url, 1.0);
  ASSERT_NE(serve.port(), 0) << serve.log();
  const std::string invalid = "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01";
  ASSERT_EQ(serve.post("/v1/completions", R"({"prompt":"a b c","max_tokens":3})").status, 200);
  ASSERT_EQ(serve.post("/v1/completions", R"({"prompt":"a b c","max_tokens":3})", invalid).status, 200);
  ASSERT_TRUE(testing::wait_until([&] {
    int roots = 0;
    for (const json& s : receiver.spans()) roots += s["kind"] == 2 ? 1 : 0;
    return roots >= 2;
  }, 20s)) << receiver.log();
  std::vector<json> roots;
  for (const json& s : receiver.spans()) {
    if (s["kind"] == 2) roots.push_back(s);
    EXPECT_EQ(s["traceId"].get<std::string>().size(), 32U);
    EXPECT_NE(s["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
    EXPECT_NE(s["parentSpanId"], "00f067aa0ba902b7");
  }
  ASSERT_EQ(roots.size(), 2U);
  EXPECT_NE(roots[0]["traceId"], roots[1]["traceId"]);
  for (const json& root : roots) {
    EXPECT_EQ(root["parentSpanId"], "");
    EXPECT_EQ(root["name"], "text_completion sim-a");
    EXPECT_EQ(attr_string(root, "gen_ai.operation.name"), "text_completion");
  }
}

// Tests sampling 0 with the tail rules: a quick request is not exported, an unsampled traceparent
// is obeyed, a request slower than --trace-slow and a failed one are exported anyway.
TEST(ServeOtlpIntegrationTest, TailRulesExportSlowAndFailedRequests) {
  Receiver receiver;
  const std::string url = receiver.url();
  ASSERT_FALSE(url.empty()) << receiver.log();
  Serve serve(url, 0.0, 1.0, true);
  ASSERT_NE(serve.port(), 0) << serve.log();
  const std::string body = R"({"prompt":"a b c","max_tokens":2})";
  ASSERT_EQ(serve.post("/v1/completions", body).status, 200);
  ASSERT_EQ(serve.post("/v1/completions", body, "00-11111111111111111111111111111111-2222222222222222-00").status, 200);
  // preprocess stretched by 30 s of model time = 1.5 s real at --time-scale 20: slow
  ASSERT_EQ(serve::testing::request(serve.port(), http::verb::post, "/admin/faults",
                                    R"({"preprocess_slowdown":{"factor":1,"add_ms":30000}})").status, 200);
  ASSERT_EQ(serve.post("/v1/completions", body).status, 200);
  ASSERT_EQ(serve::testing::request(serve.port(), http::verb::post, "/admin/faults",
                                    R"({"preprocess_slowdown":null,"error_rate":1})").status, 200);
  ASSERT_EQ(serve.post("/v1/completions", body).status, 500);
  ASSERT_TRUE(testing::wait_until([&] {
    int roots = 0;
    for (const json& s : receiver.spans()) roots += s["kind"] == 2 ? 1 : 0;
    return roots >= 2;
  }, 20s)) << receiver.log();
  std::vector<json> roots;
  for (const json& s : receiver.spans()) {
    if (s["kind"] == 2) roots.push_back(s);
    EXPECT_NE(s["traceId"], "11111111111111111111111111111111");
  }
  ASSERT_EQ(roots.size(), 2U) << receiver.log();  // spans leave in order: the first two were never queued
  EXPECT_GE(static_cast<double>(ns(roots[0], "end") - ns(roots[0], "start")) / 1e9, 1.0);
  EXPECT_EQ(roots[0]["status"]["code"], 0);
  EXPECT_EQ(roots[1]["status"]["code"], 2);
  EXPECT_EQ(attr_string(roots[1], "error.type"), "500");
  EXPECT_EQ(attr_int(roots[1], "http.response.status_code"), 500);
}

}  // namespace
}  // namespace inferscope::trace
