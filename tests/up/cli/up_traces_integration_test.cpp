// Traces into `inferscope up` (INFERSCOPE_BINARY) end to end: a real OpenTelemetry JS SDK from npm
// (tests/trace/otlp_sdk_sender.js: sdk-trace-base 1.25.1 with exporter-trace-otlp-proto 0.52.1,
// gzip, and with exporter-trace-otlp-http 0.52.1, OTLP JSON) and an in-process serve with
// --otlp-endpoint pointed at up's api port send spans to POST /v1/traces; GET /api/traces/{id}
// gives them back intact (ids, parents, times, kinds, statuses, attributes of each type) and
// GET /api/traces lists them with their stages; up's own /metrics counts them; a body of another
// media type is refused with 415. And after an `inferscope bench` run against serve under up, the
// trace ids up's Prometheus holds as exemplars are in up's store.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "net/blocking_client.h"
#include "promapi/prometheus_client.h"
#include "serve/server.h"
#include "up/cli/up_process.h"
#include "up/stack_test_support.h"
#include "support/loopback_port.h"
#include "support/peers.h"
#include "support/test_process.h"

namespace inferscope::up::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// get_json GETs `url` and parses a 200 answer; null otherwise.
json get_json(const std::string& url) {
  auto r = net::blocking_http_request("GET", url);
  if (!r || r->status != 200) return json();
  return json::parse(r->body, nullptr, false);
}

// wait_trace waits until up's store returns `count` spans of `trace_id`.
json wait_trace(const std::string& api, const std::string& trace_id, std::size_t count) {
  json trace;
  wait_until(
      [&] {
        trace = get_json(api + "/api/traces/" + trace_id);
        return trace.is_object() && trace["spans"].size() >= count;
      },
      20s);
  return trace;
}

const json* span_named(const json& trace, const std::string& name) {
  for (const json& s : trace["spans"]) {
    if (s["name"] == name) return &s;
  }
  return nullptr;
}

class UpTracesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(stack_binaries_installed());
    // The target is never scraped successfully (nothing listens on port 1): up runs all the same.
    up_ = std::make_unique<UpProcess>(std::vector<std::string>{
        "up", "--target", "sim=inferscope@http://127.0.0.1:1/metrics", "--port", "0", "--prometheus-port", "0",
        "--alertmanager-port", "0", "--state-dir", (dir_.path() / "state").string()});
    auto ready = up_->wait_ready(90s);
    ASSERT_TRUE(ready) << up_->output();
    api_ = ready->api;
  }

  TempDir dir_;
  std::unique_ptr<UpProcess> up_;
  std::string api_;
};

// send_sdk_trace runs tests/trace/otlp_sdk_sender.js (`protocol`: protobuf or json) as `service`
// against up's receiver and returns what it reports it sent (null when it failed).
json send_sdk_trace(const std::string& api, const std::filesystem::path& dir, const std::string& protocol,
                    const std::string& service) {
  inferscope::testing::TestProcess sender(
      {.binary = "/usr/bin/node",
       .args = {std::string(INFERSCOPE_SOURCE_DIR) + "/tests/trace/otlp_sdk_sender.js", api + "/v1/traces", protocol,
                service},
       .env = {std::string("NODE_PATH=") + INFERSCOPE_WEB_NODE_MODULES},
       .stdout_file = dir / (protocol + "-sender.out"),
       .stderr_file = dir / (protocol + "-sender.err")});
  EXPECT_TRUE(sender.started()) << sender.start_error();
  EXPECT_EQ(sender.wait_exit(60s), 0) << sender.stdout_text() << sender.stderr_text();
  json sent = json::parse(sender.stdout_text(), nullptr, false);
  EXPECT_TRUE(sent.is_object() && sent.contains("spans")) << sender.stdout_text() << sender.stderr_text();
  return sent.is_object() && sent.contains("spans") ? sent : json();
}

// check_stored_trace checks that up's store holds `sent` (what the sender reported) span for span,
// and that GET /api/traces lists it under `service` with its model, status and stages.
void check_stored_trace(const std::string& api, const json& sent, const std::string& service) {
  const std::string trace_id = sent["trace_id"];

  const json stored = wait_trace(api, trace_id, sent["spans"].size());
  ASSERT_TRUE(stored.is_object()) << service;
  EXPECT_EQ(stored["trace_id"], trace_id);
  ASSERT_EQ(stored["spans"].size(), sent["spans"].size()) << stored.dump(1);
  for (const json& want : sent["spans"]) {
    const json* got = nullptr;
    for (const json& s : stored["spans"]) {
      if (s["span_id"] == want["span_id"]) got = &s;
    }
    ASSERT_NE(got, nullptr) << want.dump();
    EXPECT_EQ((*got)["parent_span_id"], want["parent_span_id"]) << want["name"];
    EXPECT_EQ((*got)["name"], want["name"]);
    EXPECT_EQ((*got)["kind"], want["kind"]) << want["name"];
    EXPECT_EQ((*got)["status"], want["status"]) << want["name"];
    EXPECT_EQ(std::to_string((*got)["start_unix_ns"].get<std::uint64_t>()), want["start_unix_ns"]) << want["name"];
    EXPECT_EQ(std::to_string((*got)["end_unix_ns"].get<std::uint64_t>()), want["end_unix_ns"]) << want["name"];
    EXPECT_EQ((*got)["attributes"], want["attributes"]) << want["name"];
    EXPECT_EQ((*got)["service"], service);
  }
  // The root's attribute kinds, explicitly: int stays an integer, double a double.
  const json* root = span_named(stored, "chat sdk-model");
  ASSERT_NE(root, nullptr);
  EXPECT_TRUE((*root)["attributes"]["gen_ai.usage.output_tokens"].is_number_integer());
  EXPECT_TRUE((*root)["attributes"]["gen_ai.latency.e2e"].is_number_float());
  EXPECT_TRUE((*root)["attributes"]["inferscope.streamed"].is_boolean());
  EXPECT_EQ((*root)["attributes"]["gen_ai.response.finish_reasons"], json::array({"stop", "length"}));

  const json listed = get_json(api + "/api/traces?job=" + service);
  ASSERT_TRUE(listed.is_object());
  ASSERT_EQ(listed["traces"].size(), 1u) << listed.dump();
  const json& t = listed["traces"][0];
  EXPECT_EQ(t["trace_id"], trace_id);
  EXPECT_EQ(t["model"], "sdk-model");
  EXPECT_EQ(t["status"], "ok");
  EXPECT_NEAR(t["duration_s"].get<double>(), 0.875, 1e-6);
  EXPECT_NEAR(t["stages"]["queue"].get<double>(), 0.125, 1e-6);
  EXPECT_NEAR(t["stages"]["decode"].get<double>(), 0.75, 1e-6);
  EXPECT_FALSE(t["stages"].contains("lookup"));  // a grandchild, not a stage of the root
}

// Tests done-when item 1 of issue 18, and OTLP JSON of issue 30: spans from the OpenTelemetry JS
// SDK come back intact, sent in protobuf (exporter-trace-otlp-proto) and in JSON
// (exporter-trace-otlp-http, the JS SDK's default encoding).
TEST_F(UpTracesTest, OpenTelemetryJsSdkSpansComeBackIntact) {
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kNode}));
  const json protobuf_sent = send_sdk_trace(api_, dir_.path(), "protobuf", "sdk-sender");
  ASSERT_FALSE(protobuf_sent.is_null());
  check_stored_trace(api_, protobuf_sent, "sdk-sender");
  const json json_sent = send_sdk_trace(api_, dir_.path(), "json", "sdk-sender-json");
  ASSERT_FALSE(json_sent.is_null());
  check_stored_trace(api_, json_sent, "sdk-sender-json");

  // up's own counters on its /metrics.
  auto metrics = net::blocking_http_request("GET", api_ + "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("inferscope_up_trace_spans_received_total 8"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("inferscope_up_traces_stored_total 2"), std::string::npos);
  // Another media type is refused, and counted.
  auto text_post = net::blocking_http_request("POST", api_ + "/v1/traces", "{}", "text/plain");
  ASSERT_TRUE(text_post);
  EXPECT_EQ(text_post->status, 415);
}

// Tests `serve --otlp-endpoint <up>/v1/traces` end to end: serve's root and stage spans land in
// up's store, listed under job inferscope-serve with the model and the stages of that request.
TEST_F(UpTracesTest, ServeExportsIntoUp) {
  serve::ServerOptions o;
  o.port = 0;
  o.model_names = {"sim-a"};
  o.engine.time_scale = 20;
  o.seed = 7;
  o.tracing.otlp_endpoint = api_ + "/v1/traces";
  o.tracing.policy.sample_ratio = 1.0;
  auto serve = serve::Server::start(o);
  ASSERT_TRUE(serve) << serve.error().message;
  const std::string base = "http://127.0.0.1:" + std::to_string((*serve)->port());
  auto reply = net::blocking_http_request(
      "POST", base + "/v1/chat/completions",
      R"({"model":"sim-a","max_tokens":8,"messages":[{"role":"user","content":"hello there"}]})", "application/json",
      30s);
  ASSERT_TRUE(reply) << reply.error().message;
  ASSERT_EQ(reply->status, 200) << reply->body;

  json listed;
  ASSERT_TRUE(wait_until(
      [&] {
        listed = get_json(api_ + "/api/traces?job=inferscope-serve");
        return listed.is_object() && listed["traces"].size() == 1 && listed["traces"][0]["stages"].contains("send");
      },
      20s))
      << listed.dump() << up_->output();
  const json& t = listed["traces"][0];
  EXPECT_EQ(t["model"], "sim-a");
  EXPECT_EQ(t["name"], "chat sim-a");
  EXPECT_EQ(t["status"], "ok");
  double stage_total = 0;
  for (const char* stage : {"preprocess", "queue", "prefill", "decode", "postprocess", "send"}) {
    ASSERT_TRUE(t["stages"].contains(stage)) << stage << " " << t.dump();
    stage_total += t["stages"][stage].get<double>();
  }
  EXPECT_LE(stage_total, t["duration_s"].get<double>() + 1e-9);
  const json trace = wait_trace(api_, t["trace_id"], 7);
  ASSERT_EQ(trace["spans"].size(), 7u) << trace.dump(1);
  const json* root = span_named(trace, "chat sim-a");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ((*root)["kind"], "server");
  EXPECT_EQ((*root)["parent_span_id"], "");
  EXPECT_EQ((*root)["attributes"]["gen_ai.operation.name"], "chat");
  EXPECT_TRUE((*root)["attributes"]["gen_ai.usage.output_tokens"].is_number_integer());
  for (const json& s : trace["spans"]) {
    if (&s == root) continue;
    EXPECT_EQ(s["parent_span_id"], (*root)["span_id"]) << s["name"];
    EXPECT_EQ(s["kind"], "internal");
    EXPECT_EQ(s["service"], "inferscope-serve");
  }
}

// Tests done-when item 3 of issue 18: serve exports every request to up's receiver, up's
// Prometheus scrapes serve (OpenMetrics, exemplar storage on) during an `inferscope bench` run,
// and every trace id /api/v1/query_exemplars returns for the e2e histogram (and the TTFT and
// stage histograms) is in up's store.
TEST(UpTracesExemplarsTest, ExemplarIdsOfABenchRunAreInUpsStore) {
  ASSERT_TRUE(stack_binaries_installed());
  TempDir dir;
  // serve must know up's receiver before up knows serve: up gets a port that was free a moment ago.
  const int up_port = inferscope::testing::free_loopback_port();
  ASSERT_GT(up_port, 0);
  serve::ServerOptions o;
  o.port = 0;
  o.model_names = {"sim-a"};
  o.engine.time_scale = 20;
  o.seed = 7;
  o.tracing.otlp_endpoint = "http://127.0.0.1:" + std::to_string(up_port) + "/v1/traces";
  o.tracing.policy.sample_ratio = 1.0;
  auto serve = serve::Server::start(o);
  ASSERT_TRUE(serve) << serve.error().message;
  const std::string serve_url = "http://127.0.0.1:" + std::to_string((*serve)->port());

  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "scrape_interval: 1s\n";
  UpProcess up({"up", "--config", config.string(), "--target", "serve=" + serve_url + "/metrics", "--port",
                std::to_string(up_port), "--prometheus-port", "0", "--alertmanager-port", "0", "--state-dir",
                (dir.path() / "state").string()});
  auto ready = up.wait_ready(90s);
  ASSERT_TRUE(ready) << up.output();
  ASSERT_EQ(ready->api_port(), up_port) << up.output();

  const auto unix_now = [] {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  };
  const double bench_start = unix_now();
  inferscope::testing::TestProcess bench(
      {.binary = INFERSCOPE_BINARY,
       .args = {"bench", "--base-url", serve_url, "--no-progress", "--seed", "7", "--random-input-len", "64",
                "--random-output-len", "16", "--num-prompts", "40", "--max-concurrency", "4"},
       .stdout_file = dir.path() / "bench.out",
       .stderr_file = dir.path() / "bench.out"});
  ASSERT_TRUE(bench.started()) << bench.start_error();
  ASSERT_EQ(bench.wait_exit(120s), 0) << bench.stdout_text();

  auto prometheus = promapi::PrometheusClient::create(ready->prometheus);
  ASSERT_TRUE(prometheus) << prometheus.error().message;
  std::set<std::string> ids;
  ASSERT_TRUE(wait_until(
      [&] {
        auto answer = prometheus->query_exemplars(
            R"({__name__=~"inferscope_(request_duration|time_to_first_token|stage_duration)_seconds_bucket"})",
            bench_start - 5, unix_now() + 5);
        if (!answer) return false;
        ids.clear();
        bool e2e = false;
        for (const auto& series : *answer)
          for (const auto& exemplar : series.exemplars)
            if (auto id = exemplar.labels.find("trace_id"); id != exemplar.labels.end()) {
              ids.insert(id->second);
              e2e |= series.series_labels.at("__name__") == "inferscope_request_duration_seconds_bucket";
            }
        return e2e;
      },
      30s))
      << "no trace_id exemplar in Prometheus\n" << up.output();
  for (const std::string& id : ids) {
    ASSERT_EQ(id.size(), 32u) << id;
    const json trace = wait_trace(ready->api, id, 7);
    ASSERT_TRUE(trace.is_object()) << "exemplar " << id << " is not in up's store";
    const json* root = span_named(trace, "chat sim-a");
    ASSERT_NE(root, nullptr) << trace.dump(1);
    EXPECT_EQ((*root)["kind"], "server");
  }
  std::cout << ids.size() << " exemplar trace ids, all in up's store\n";
}

}  // namespace
}  // namespace inferscope::up::testing
