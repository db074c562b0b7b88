// End-to-end test of serve's per-request spans: serve (Server::start with the options the
// --otlp-endpoint, --trace-sample and --trace-slow flags set; trace_flags_integration_test
// drives the flags through the CLI) exports to tests/trace/otlp_receiver.js, a Node HTTP server that decodes each
// POST with the OpenTelemetry protobuf definitions from npm (@opentelemetry/otlp-transformer
// 0.52.1) and prints the spans as JSON. Checked field by field: ids and parent links (an incoming
// traceparent continued, an invalid one replaced), names, kinds, times, attributes, and each stage
// span's length against the stage histogram's observation of that request (the /metrics sums
// before and after it); then head sampling off with the tail rules (slow, failed) on.
#include <map>
#include <set>

#include "trace/otlp_test_support.h"

namespace inferscope::trace {
namespace {

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
  ASSERT_TRUE(receiver.wait_roots(2)) << receiver.log();
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
  ASSERT_TRUE(receiver.wait_roots(2)) << receiver.log();
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

// Tests the exemplars: with sampling 0 and the tail rules, the exported requests (slow, failed)
// and only they put their trace id on the e2e, TTFT and stage histograms of the OpenMetrics
// exposition; every id there is one the decoder received; text 0.0.4 carries none.
TEST(ServeOtlpIntegrationTest, ExemplarsNameExportedTracesInOpenMetricsOnly) {
  Receiver receiver;
  const std::string url = receiver.url();
  ASSERT_FALSE(url.empty()) << receiver.log();
  Serve serve(url, 0.0, 1.0, true);
  ASSERT_NE(serve.port(), 0) << serve.log();
  const std::string body = R"({"prompt":"a b c","max_tokens":2})";
  for (int i = 0; i < 3; ++i) ASSERT_EQ(serve.post("/v1/completions", body).status, 200);  // neither sampled nor slow
  ASSERT_TRUE(serve.wait_recorded(3));
  EXPECT_TRUE(exemplar_trace_ids(serve.port()).empty()) << "an exemplar for a request that was not exported";

  ASSERT_EQ(serve::testing::request(serve.port(), http::verb::post, "/admin/faults",
                                    R"({"preprocess_slowdown":{"factor":1,"add_ms":30000}})").status, 200);
  ASSERT_EQ(serve.post("/v1/completions", body).status, 200);  // slow: exported
  ASSERT_EQ(serve.post("/v1/completions", body, kIncoming).status, 200);  // sampled traceparent and slow
  ASSERT_TRUE(serve.wait_recorded(5));
  ASSERT_TRUE(receiver.wait_roots(2)) << receiver.log();
  std::set<std::string> received;
  for (const json& s : receiver.spans()) {
    if (s["kind"] == 2) received.insert(s["traceId"].get<std::string>());
  }
  ASSERT_EQ(received.size(), 2U);
  EXPECT_TRUE(received.count("4bf92f3577b34da6a3ce929d0e0e4736"));

  const auto exemplars = exemplar_trace_ids(serve.port());
  for (const char* family : {"inferscope_request_duration_seconds", "inferscope_time_to_first_token_seconds",
                             "inferscope_stage_duration_seconds"}) {
    ASSERT_TRUE(exemplars.count(family)) << "no exemplar on " << family;
  }
  // Both slow requests fall in the same e2e and preprocess buckets: the bucket keeps the later one.
  // Each id on any histogram is a trace the decoder received.
  std::set<std::string> seen;
  for (const auto& [family, ids] : exemplars) {
    for (const std::string& id : ids) {
      EXPECT_TRUE(received.count(id)) << family << " names trace " << id << ", which was never exported";
      seen.insert(id);
    }
  }
  EXPECT_FALSE(seen.empty());

  const std::string text = serve::testing::request(serve.port(), http::verb::get, "/metrics").body;
  EXPECT_EQ(text.find("trace_id"), std::string::npos) << "an exemplar in text 0.0.4";
  EXPECT_TRUE(metrics::parse_exposition(text, metrics::ExpositionTextFormat::kPrometheus004).ok());
}

}  // namespace
}  // namespace inferscope::trace
