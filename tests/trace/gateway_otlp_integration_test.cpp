// End-to-end test of the gateway's spans (Done-when item 2 of issue 18): a gateway in front of an
// in-process `serve`, both exporting to tests/trace/otlp_receiver.js (the OpenTelemetry protobuf
// definitions from npm decode every POST). One streamed request carries a traceparent: the gateway
// continues it, forwards a traceparent naming its upstream CLIENT span, and serve's root hangs under
// that span, all in one trace; each stage span's length equals that request's stage histogram
// observation on its own side (the /metrics _sum before and after). Then an invalid traceparent
// (a new trace, never passed on), an unsampled one (forwarded unsampled: neither side exports), and
// a recorded llama.cpp stream whose `timings` become derived prefill/decode spans. Last, head
// sampling off with the tail rules on: only the slow and the failed request's trace ids appear as
// exemplars on the gateway's OpenMetrics /metrics, never in its text 0.0.4.
#include <fstream>
#include <set>
#include <sstream>

#include "gateway/gateway_test_support.h"
#include "loadgen/test_llm_server.h"
#include "trace/otlp_test_support.h"

namespace inferscope::trace {
namespace {

constexpr const char* kIncomingTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr const char* kGatewayStages[] = {"gateway_queue", "preprocess", "upstream_connect", "upstream_ttft",
                                          "stream", "send"};

// TracedGateway runs an in-process gateway in front of `upstream` exporting to `endpoint`.
gateway::GatewayConfig traced_config(const std::string& upstream, const std::string& endpoint, double sample) {
  gateway::GatewayConfig c = gateway::testing::config_for({upstream});
  c.tracing.otlp_endpoint = endpoint;
  c.tracing.policy.sample_ratio = sample;
  return c;
}

std::map<std::string, double> gateway_stage_sums(gateway::testing::TestGateway& gw) {
  std::map<std::string, double> out;
  const auto parsed = gw.scrape();
  for (const char* stage : kGatewayStages) out[stage] = serve::testing::stage_totals(parsed, stage).sum;
  return out;
}

std::vector<json> of_service(const std::vector<json>& spans, const std::string& service) {
  std::vector<json> out;
  for (const json& s : spans) {
    if (s["resource"]["service.name"] == service) out.push_back(s);
  }
  return out;
}

const json* find_kind(const std::vector<json>& spans, int kind) {
  for (const json& s : spans) {
    if (s["kind"] == kind) return &s;
  }
  return nullptr;
}

double seconds(const json& span) { return static_cast<double>(ns(span, "end") - ns(span, "start")) / 1e9; }

// Tests one trace across gateway and serve: ids, parent links, kinds, names, and stage spans equal
// to the stage histograms' observations on each side.
TEST(GatewayOtlpIntegrationTest, OneTraceThroughGatewayAndServe) {
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kNode}));
  Receiver receiver;
  const std::string endpoint = receiver.url();
  ASSERT_FALSE(endpoint.empty()) << receiver.log();
  Serve serve(endpoint, 1.0);
  ASSERT_NE(serve.port(), 0) << serve.log();
  gateway::testing::TestGateway gw(traced_config(gateway::testing::url(serve.port()), endpoint, 1.0));
  ASSERT_TRUE(gw.ok());

  const auto gw_before = gateway_stage_sums(gw);
  const auto serve_before = serve.stage_sums();
  const HttpReply r = post_traced(gw.port(), "/v1/chat/completions",
                                  serve::testing::chat_body("hello there", 12, true), kIncomingTraceparent);
  ASSERT_EQ(r.status, 200) << r.body;
  gw.scrape_after(1);
  ASSERT_TRUE(serve.wait_recorded(1));
  const auto gw_after = gateway_stage_sums(gw);
  const auto serve_after = serve.stage_sums();

  const std::string id = "4bf92f3577b34da6a3ce929d0e0e4736";
  // gateway: root, CLIENT, 6 stages; serve: root, 6 stages
  ASSERT_TRUE(testing::wait_until([&] { return of_trace(receiver.spans(), id).size() >= 15; }, 20s)) << receiver.log();
  const auto spans = of_trace(receiver.spans(), id);
  const auto gw_spans = of_service(spans, "inferscope-gateway");
  const auto serve_spans = of_service(spans, "inferscope-serve");
  EXPECT_EQ(gw_spans.size() + serve_spans.size(), spans.size());

  const json* gw_root = find_kind(gw_spans, 2);
  const json* client = find_kind(gw_spans, 3);
  const json* serve_root = find_kind(serve_spans, 2);
  ASSERT_TRUE(gw_root != nullptr && client != nullptr && serve_root != nullptr) << receiver.log();
  EXPECT_EQ((*gw_root)["parentSpanId"], "00f067aa0ba902b7");
  EXPECT_EQ((*gw_root)["name"], "chat sim-a");
  EXPECT_EQ(attr_string(*gw_root, "http.route"), "/v1/chat/completions");
  EXPECT_EQ(attr_int(*gw_root, "http.response.status_code"), 200);
  EXPECT_EQ(attr_string(*gw_root, "gen_ai.request.model"), "sim-a");
  EXPECT_GT(attr_double(*gw_root, "gen_ai.latency.time_to_first_token"), 0);
  EXPECT_EQ((*client)["parentSpanId"], (*gw_root)["spanId"]);
  EXPECT_EQ((*client)["name"], "chat sim-a");
  EXPECT_EQ(attr_string(*client, "inferscope.upstream"), "127.0.0.1:" + std::to_string(serve.port()));
  EXPECT_EQ(attr_string(*client, "server.address"), "127.0.0.1");
  EXPECT_EQ(attr_int(*client, "server.port"), serve.port());
  EXPECT_EQ(attr_string(*client, "http.request.method"), "POST");
  EXPECT_EQ(attr_int(*client, "http.response.status_code"), 200);
  EXPECT_EQ((*client)["status"]["code"], 0);
  // serve continued the gateway's upstream span: its root's parent is the CLIENT span
  EXPECT_EQ((*serve_root)["parentSpanId"], (*client)["spanId"]);
  // one process, one clock offset: serve's work lies inside the gateway's call, the call inside its
  // root. Serve's root ends when its own write completed, which the gateway may read the bytes of
  // before serve's coroutine resumes; what must come before the call's end is the last token
  // serve produced (its decode span's end).
  EXPECT_GE(ns(*serve_root, "start"), ns(*client, "start"));
  const json* serve_decode = nullptr;
  for (const json& s : serve_spans) {
    if (s["name"] == "decode") serve_decode = &s;
  }
  ASSERT_NE(serve_decode, nullptr) << receiver.log();
  EXPECT_LE(ns(*serve_decode, "end"), ns(*client, "end"));
  EXPECT_GE(ns(*client, "start"), ns(*gw_root, "start"));
  EXPECT_LE(ns(*client, "end"), ns(*gw_root, "end"));

  const auto check_stages = [](const std::vector<json>& side, const json& root, const std::map<std::string, double>& before,
                               const std::map<std::string, double>& after, const char* who) {
    std::map<std::string, double> span_seconds;
    for (const json& s : side) {
      if (s["kind"] != 1) continue;
      const std::string name = s["name"];
      EXPECT_EQ(s["parentSpanId"], root["spanId"]) << who << " " << name;
      EXPECT_EQ(attr_string(s, "inferscope.stage"), name) << who;
      span_seconds[name] += seconds(s);
    }
    for (const auto& [stage, sum] : after) {
      const double histogram = sum - before.at(stage);
      EXPECT_TRUE(span_seconds.count(stage) > 0 || histogram == 0) << who << ": no " << stage << " span";
      if (span_seconds.count(stage) > 0) {
        EXPECT_NEAR(span_seconds[stage], histogram, 1e-6) << who << " " << stage;
      }
    }
    return span_seconds.size();
  };
  EXPECT_EQ(check_stages(gw_spans, *gw_root, gw_before, gw_after, "gateway"), std::size(kGatewayStages));
  EXPECT_EQ(check_stages(serve_spans, *serve_root, serve_before, serve_after, "serve"), 6U);
}

// Tests an invalid traceparent (uppercase hex): the gateway starts a new trace and passes nothing
// of the bad header on, so serve's root hangs under the gateway's CLIENT span of the new trace.
TEST(GatewayOtlpIntegrationTest, InvalidTraceparentStartsANewTrace) {
  Receiver receiver;
  const std::string endpoint = receiver.url();
  ASSERT_FALSE(endpoint.empty()) << receiver.log();
  Serve serve(endpoint, 1.0);
  ASSERT_NE(serve.port(), 0) << serve.log();
  gateway::testing::TestGateway gw(traced_config(gateway::testing::url(serve.port()), endpoint, 1.0));
  ASSERT_TRUE(gw.ok());
  const std::string invalid = "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01";
  ASSERT_EQ(post_traced(gw.port(), "/v1/completions", R"({"model":"sim-a","prompt":"a b c","max_tokens":3})", invalid).status,
            200);
  // The receiver prints one line per span: wait for the last ones this test reads (the gateway's
  // CLIENT span comes after its root and stages), not only for both roots.
  ASSERT_TRUE(testing::wait_until([&] {
    int roots = 0;
    int clients = 0;
    for (const json& s : receiver.spans()) {
      roots += s["kind"] == 2 ? 1 : 0;
      clients += s["kind"] == 3 ? 1 : 0;
    }
    return roots >= 2 && clients >= 1;
  }, 20s)) << receiver.log();
  const auto spans = receiver.spans();
  const auto gw_spans = of_service(spans, "inferscope-gateway");
  const json* gw_root = find_kind(gw_spans, 2);
  ASSERT_NE(gw_root, nullptr);
  const std::string id = (*gw_root)["traceId"];
  EXPECT_NE(id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ((*gw_root)["parentSpanId"], "");
  for (const json& s : spans) {
    EXPECT_EQ(s["traceId"], id) << s.dump();
    EXPECT_NE(s["parentSpanId"], "00f067aa0ba902b7");
  }
  const auto trace = of_trace(spans, id);
  const json* client = find_kind(trace, 3);
  const auto serve_spans = of_service(trace, "inferscope-serve");
  const json* serve_root = find_kind(serve_spans, 2);
  ASSERT_TRUE(client != nullptr && serve_root != nullptr) << receiver.log();
  EXPECT_EQ((*serve_root)["parentSpanId"], (*client)["spanId"]);
}

// Tests that the head decision travels: with --trace-sample 0 an unsampled incoming request is
// forwarded unsampled (serve, which samples everything of its own, obeys it and exports nothing),
// while a sampled one is exported on both sides.
TEST(GatewayOtlpIntegrationTest, TheSampledFlagIsForwardedAsDecided) {
  Receiver receiver;
  const std::string endpoint = receiver.url();
  ASSERT_FALSE(endpoint.empty()) << receiver.log();
  Serve serve(endpoint, 1.0);
  ASSERT_NE(serve.port(), 0) << serve.log();
  gateway::testing::TestGateway gw(traced_config(gateway::testing::url(serve.port()), endpoint, 0.0));
  ASSERT_TRUE(gw.ok());
  const std::string body = R"({"model":"sim-a","prompt":"a b c","max_tokens":2})";
  ASSERT_EQ(post_traced(gw.port(), "/v1/completions", body, "00-11111111111111111111111111111111-2222222222222222-00").status, 200);
  ASSERT_EQ(post_traced(gw.port(), "/v1/completions", body, "00-33333333333333333333333333333333-4444444444444444-01").status, 200);
  ASSERT_TRUE(receiver.wait_roots(2)) << receiver.log();
  serve.wait_recorded(2);
  for (const json& s : receiver.spans()) EXPECT_EQ(s["traceId"], "33333333333333333333333333333333") << s.dump();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Tests llama.cpp's timings (a recorded b4748 stream replayed): prefill and decode spans under the
// CLIENT span, marked derived, with llama.cpp's token counts, no longer than its milliseconds.
TEST(GatewayOtlpIntegrationTest, LlamaCppTimingsBecomeDerivedSpans) {
  Receiver receiver;
  const std::string endpoint = receiver.url();
  ASSERT_FALSE(endpoint.empty()) << receiver.log();
  loadgen::testing::TestServerOptions so;
  so.behavior = loadgen::testing::Behavior::kReplay;
  so.replay = read_file(INFERSCOPE_SOURCE_DIR "/tests/gateway/testdata/llamacpp-b4748-chat-stream.sse");
  ASSERT_FALSE(so.replay.empty());
  loadgen::testing::TestLlmServer upstream(so);
  gateway::testing::TestGateway gw(traced_config(upstream.base_url(), endpoint, 1.0));
  ASSERT_TRUE(gw.ok());
  ASSERT_EQ(gw.post("/v1/chat/completions", R"({"model":"tiny","stream":true,"messages":[]})").status, 200);
  ASSERT_TRUE(testing::wait_until([&] { return receiver.spans().size() >= 10; }, 20s)) << receiver.log();
  const auto spans = receiver.spans();
  const json* client = find_kind(spans, 3);
  ASSERT_NE(client, nullptr);
  std::map<std::string, json> derived;
  for (const json& s : spans) {
    if (s["parentSpanId"] == (*client)["spanId"]) derived[s["name"]] = s;
  }
  ASSERT_EQ(derived.size(), 2U) << receiver.log();
  const json& prefill = derived["prefill"];
  const json& decode = derived["decode"];
  for (const json* s : {&prefill, &decode}) {
    EXPECT_EQ((*s)["attributes"]["inferscope.derived"], true);
    EXPECT_EQ((*s)["kind"], 1);
    EXPECT_GE(ns(*s, "start"), ns(*client, "start"));
    EXPECT_LE(ns(*s, "end"), ns(*client, "end"));
  }
  EXPECT_EQ(attr_string(prefill, "inferscope.stage"), "prefill");
  EXPECT_EQ(attr_int(prefill, "gen_ai.usage.input_tokens"), 71);
  EXPECT_EQ(attr_int(decode, "gen_ai.usage.output_tokens"), 64);
  EXPECT_LE(ns(prefill, "end"), ns(decode, "start"));
  // the replay arrives at once, faster than llama.cpp took: the spans are cut at the call's start
  EXPECT_LE(seconds(prefill), 1.369e-3 + 1e-9);
  EXPECT_LE(seconds(decode), 13.27e-3 + 1e-9);
}

// Tests the gateway's exemplars with --trace-sample 0 and --trace-slow 1s in front of serve:
// plain requests are not exported and leave no exemplar; a slow one (serve's preprocess made
// 1.5 s long) and a failed one (serve answers 500) are, and their trace ids, as the receiver
// decoded them from the gateway's roots, are the exemplars of the latency histograms of the
// gateway's OpenMetrics exposition (the 2xx and 5xx series of e2e each name their own; TTFT
// only the slow one, the failed one had no first token). Its text 0.0.4 carries none.
TEST(GatewayOtlpIntegrationTest, ExemplarsNameExportedTracesInOpenMetricsOnly) {
  Receiver receiver;
  const std::string endpoint = receiver.url();
  ASSERT_FALSE(endpoint.empty()) << receiver.log();
  Serve serve(endpoint, 0.0, std::nullopt, true);
  ASSERT_NE(serve.port(), 0) << serve.log();
  gateway::GatewayConfig config = traced_config(gateway::testing::url(serve.port()), endpoint, 0.0);
  config.tracing.policy.slow_seconds = 1.0;
  config.metrics_port = 0;
  gateway::testing::TestGateway gw(std::move(config));
  ASSERT_TRUE(gw.ok());
  const std::uint16_t metrics_port = gw.gateway().metrics_port();
  ASSERT_NE(metrics_port, 0);
  const std::string body = serve::testing::chat_body("a b c", 2, true);

  for (int i = 0; i < 3; ++i) ASSERT_EQ(gw.post("/v1/chat/completions", body).status, 200);  // neither sampled nor slow
  gw.scrape_after(3);
  EXPECT_TRUE(exemplar_trace_ids(metrics_port).empty()) << "an exemplar for a request that was not exported";

  const auto set_faults = [&](const std::string& faults) {
    return serve::testing::request(serve.port(), http::verb::post, "/admin/faults", faults).status;
  };
  ASSERT_EQ(set_faults(R"({"preprocess_slowdown":{"factor":1,"add_ms":30000}})"), 200);
  ASSERT_EQ(gw.post("/v1/chat/completions", body).status, 200);  // slow: exported
  ASSERT_EQ(set_faults(R"({"clear":true,"error_rate":1})"), 200);
  ASSERT_EQ(gw.post("/v1/chat/completions", body).status, 500);  // failed: exported
  gw.scrape_after(5);

  std::string slow_id;
  std::string failed_id;
  ASSERT_TRUE(testing::wait_until([&] {
    for (const json& s : of_service(receiver.spans(), "inferscope-gateway")) {
      if (s["kind"] != 2) continue;
      (attr_int(s, "http.response.status_code") == 500 ? failed_id : slow_id) = s["traceId"].get<std::string>();
    }
    return !slow_id.empty() && !failed_id.empty();
  }, 20s)) << receiver.log();
  std::set<std::string> gateway_roots;
  for (const json& s : of_service(receiver.spans(), "inferscope-gateway")) {
    if (s["kind"] == 2) gateway_roots.insert(s["traceId"].get<std::string>());
  }
  ASSERT_EQ(gateway_roots, (std::set<std::string>{slow_id, failed_id}));

  const auto exemplars = exemplar_trace_ids(metrics_port);
  const auto ids = [&exemplars](const char* family) {
    const auto it = exemplars.find(family);
    return it == exemplars.end() ? std::set<std::string>{} : it->second;
  };
  EXPECT_EQ(ids("inferscope_request_duration_seconds"), (std::set<std::string>{slow_id, failed_id}));
  EXPECT_EQ(ids("inferscope_time_to_first_token_seconds"), std::set<std::string>{slow_id});
  EXPECT_TRUE(ids("inferscope_stage_duration_seconds").count(slow_id) > 0);
  EXPECT_EQ(ids("gen_ai_client_operation_duration_seconds"), (std::set<std::string>{slow_id, failed_id}));
  EXPECT_EQ(ids("gen_ai_client_operation_time_to_first_chunk_seconds"), std::set<std::string>{slow_id});
  for (const auto& [family, names] : exemplars) {
    for (const std::string& id : names) {
      EXPECT_TRUE(gateway_roots.count(id) > 0) << family << " names trace " << id << ", which the gateway never exported";
    }
  }

  const std::string text = serve::testing::request(metrics_port, http::verb::get, "/metrics").body;
  EXPECT_NE(text.find("inferscope_request_duration_seconds_bucket"), std::string::npos);
  EXPECT_EQ(text.find("trace_id"), std::string::npos) << "an exemplar in text 0.0.4";
  EXPECT_TRUE(metrics::parse_exposition(text, metrics::ExpositionTextFormat::kPrometheus004).ok());
}

}  // namespace
}  // namespace inferscope::trace
