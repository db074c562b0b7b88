// The doctor's other paths against real processes: a stopped target (target_down), an endpoint
// without latency families (metrics_missing), a llama.cpp-style exposition replayed by a small
// test server, direct-scrape mode on three faults, and the CLI contract (exit codes, one-line
// errors, baseline files).
#include <gtest/gtest.h>
#include <inferscope/metrics/metrics_server.h>
#include <inferscope/metrics/registry.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>

#include "doctor/alert_diagnosis.h"
#include "doctor/check_metrics.h"
#include "doctor/diagnosis_format.h"
#include "doctor/doctor_api.h"
#include "doctor/doctor_routes.h"
#include "net/http_server.h"
#include "net/router.h"
#include "doctor/doctor_scenario_support.h"
#include "doctor/scrape_collector.h"
#include "promapi/prometheus_client.h"
#include "support/prometheus_process.h"
#include "support/wait_until.h"

namespace inferscope::doctor {
namespace {

bool has_cause(const Diagnosis& d, const std::string& cause) {
  for (const auto& f : d.findings)
    if (f.cause == cause) return true;
  return false;
}

// LlamaCppReplay serves llama.cpp b4748's metric set (names, types, HELP from the recorded
// sample) with counters advancing like a busy server: `decode_s_per_token` sets the decode time
// per generated token from now on.
class LlamaCppReplay {
 public:
  LlamaCppReplay() {
    auto counter = [&](const char* name, const char* help) {
      metrics::MetricOptions o;
      o.name = name;
      o.help = help;
      o.foreign_name = true;
      return registry_.counter(o).with({});
    };
    auto gauge = [&](const char* name, const char* help) {
      metrics::MetricOptions o;
      o.name = name;
      o.help = help;
      o.foreign_name = true;
      return registry_.gauge(o).with({});
    };
    prompt_tokens_ = counter("llamacpp:prompt_tokens_total", "Number of prompt tokens processed.");
    prompt_seconds_ = counter("llamacpp:prompt_seconds_total", "Prompt process time");
    predicted_ = counter("llamacpp:tokens_predicted_total", "Number of generation tokens processed.");
    predicted_seconds_ = counter("llamacpp:tokens_predicted_seconds_total", "Predict process time");
    decodes_ = counter("llamacpp:n_decode_total", "Total number of llama_decode() calls");
    kv_ = gauge("llamacpp:kv_cache_usage_ratio", "KV-cache usage. 1 means 100 percent usage.");
    processing_ = gauge("llamacpp:requests_processing", "Number of requests processing.");
    deferred_ = gauge("llamacpp:requests_deferred", "Number of requests deferred.");
    // Start from the recorded sample's values.
    prompt_tokens_.add(129);
    prompt_seconds_.add(0.326);
    predicted_.add(352);
    predicted_seconds_.add(8.214);
    decodes_.add(280);
    kv_.set(0.07);
    processing_.set(2);
    auto server = metrics::MetricsServer::start(registry_, {.port = 0});
    if (server) server_ = std::move(*server);
    ticker_ = std::thread([this] { tick(); });
  }
  ~LlamaCppReplay() {
    stop_ = true;
    ticker_.join();
    if (server_) server_->stop();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/metrics"; }
  void set_decode_seconds_per_token(double s) { decode_s_per_token_ = s; }

 private:
  void tick() {
    // Every 50 ms one request of 40 prompt / 64 generated tokens finishes (counters move at request end).
    while (!stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      prompt_tokens_.add(40);
      prompt_seconds_.add(40 * 0.0025);
      predicted_.add(64);
      predicted_seconds_.add(64 * decode_s_per_token_.load());
      decodes_.add(66);
    }
  }
  metrics::Registry registry_;
  metrics::Counter prompt_tokens_, prompt_seconds_, predicted_, predicted_seconds_, decodes_;
  metrics::Gauge kv_, processing_, deferred_;
  std::unique_ptr<metrics::MetricsServer> server_;
  std::atomic<double> decode_s_per_token_{0.020};
  std::atomic<bool> stop_{false};
  std::thread ticker_;
};

// Tests that a llama.cpp-style server (counters only) gets its dialect detected and a decode
// slowdown named from the seconds-per-token counter pair, in direct-scrape mode.
TEST(DoctorModesIntegrationTest, LlamaCppReplayDecodeSlowdown) {
  LlamaCppReplay replay;
  ScrapeOptions options{{replay.url()}, 6, 0.25};
  auto scraping = std::async(std::launch::async, [&] { return scrape_rounds(options); });
  std::this_thread::sleep_for(std::chrono::seconds(3));
  replay.set_decode_seconds_per_token(0.060);
  auto result = scraping.get();
  ASSERT_TRUE(result) << result.error().message;
  Snapshot snap = snapshot_from_scrapes(options, *result, "", nullptr);
  EXPECT_EQ(snap.dialect, "llamacpp");
  Diagnosis d = diagnose(snap);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "decode_slowdown") << to_text(d);

  auto fetched = fetch_exposition(replay.url(), std::chrono::seconds(5));
  ASSERT_TRUE(fetched) << fetched.error().message;
  MetricsCheck check = check_exposition(replay.url(), *fetched);
  ASSERT_EQ(check.dialects.size(), 1u);
  EXPECT_EQ(check.dialects[0], "llamacpp");
  EXPECT_TRUE(check.missing.empty()) << to_text(check);
}

// Tests direct-scrape mode (first half vs second half, no Prometheus) on three faults at once,
// and a decode slowdown on a server exposing only vLLM's names.
TEST(DoctorModesIntegrationTest, DirectScrapeThreeFaults) {
  struct Case {
    const char* faults;
    const char* cause;
    const char* stage;
    bool vllm_only = false;  // serve exposes only vLLM's names and buckets (coarse ITL buckets)
  };
  const Case cases[] = {{R"({"decode_slowdown": 3})", "decode_slowdown", "decode"},
                        {R"({"dependency": {"name": "embedding", "mean_ms": 150}})", "dependency_slowdown", "dependency"},
                        {R"({"worker_stall": {"for_ms": 2000, "every_s": 4}})", "worker_stall", "queue"},
                        {R"({"decode_slowdown": 3})", "decode_slowdown", "decode", true}};
  std::vector<std::future<std::string>> runs;
  for (const Case& c : cases) {
    runs.push_back(std::async(std::launch::async, [c]() -> std::string {
      auto options_for_server = testing::scenario_server_options();
      if (c.vllm_only) options_for_server.dialects = {"vllm"};
      auto server = serve::Server::start(options_for_server);
      if (!server) return "cannot start: " + server.error().message;
      testing::LoadDriver driver((*server)->port(), testing::LoadShape{});
      std::this_thread::sleep_for(std::chrono::seconds(2));
      ScrapeOptions options{{"http://127.0.0.1:" + std::to_string((*server)->port()) + "/metrics"}, 20, 0.5};
      auto scraping = std::async(std::launch::async, [&] { return scrape_rounds(options); });
      std::this_thread::sleep_for(std::chrono::seconds(10));
      testing::set_faults((*server)->port(), c.faults);
      auto result = scraping.get();
      driver.stop();
      (*server)->stop();
      if (!result) return result.error().message;
      Snapshot snap = snapshot_from_scrapes(options, *result, "", nullptr);
      if (c.vllm_only && snap.dialect.rfind("vllm", 0) != 0) return "vLLM-only server detected as " + snap.dialect;
      Diagnosis d = diagnose(snap);
      if (d.verdict == "degraded" && !d.findings.empty() && d.findings.front().cause == c.cause &&
          d.findings.front().stage == c.stage)
        return "";
      return std::string(c.cause) + " not found:\n" + to_text(d);
    }));
  }
  for (auto& r : runs) EXPECT_EQ(r.get(), "");
}

// Tests that a target that stopped reads target_down and an endpoint without latency families
// reads metrics_missing, both no_data, through real Prometheus.
TEST(DoctorModesIntegrationTest, TargetDownAndMetricsMissing) {
  auto server = serve::Server::start(testing::scenario_server_options());
  ASSERT_TRUE(server) << server.error().message;
  // An endpoint that lost its latency families: request counts and engine gauges only.
  metrics::Registry registry;
  metrics::MetricOptions requests_opts;
  requests_opts.name = "inferscope_requests_total";
  requests_opts.help = "Requests.";
  auto requests = registry.counter(requests_opts).with({});
  metrics::MetricOptions running_opts;
  running_opts.name = "inferscope_engine_requests_running";
  running_opts.help = "Running.";
  auto running = registry.gauge(running_opts).with({});
  running.set(1);
  requests.add(5);
  auto bare = metrics::MetricsServer::start(registry, {.port = 0});
  ASSERT_TRUE(bare) << bare.error().message;

  std::string config = "global:\n  scrape_interval: 1s\nscrape_configs:\n"
                       "  - job_name: serve\n    static_configs:\n      - targets: ['127.0.0.1:" +
                       std::to_string((*server)->port()) +
                       "']\n  - job_name: bare\n    static_configs:\n      - targets: ['127.0.0.1:" +
                       std::to_string((*bare)->port()) + "']\n";
  inferscope::testing::PrometheusProcess prom(config);
  ASSERT_TRUE(prom.ok()) << prom.error();
  testing::LoadDriver driver((*server)->port(), testing::LoadShape{});
  // Prometheus starts scraping a few seconds after it listens; wait for the first latency series
  // (bounded), then give the baseline and window time to fill.
  auto client = promapi::PrometheusClient::create(prom.url());
  ASSERT_TRUE(client);
  ASSERT_TRUE(inferscope::testing::wait_until(
      [&] {
        auto r = client->query("inferscope_request_duration_seconds_count{job=\"serve\"}");
        return r && !r->series.empty();
      },
      std::chrono::seconds(20), std::chrono::milliseconds(100)));
  const auto first_scrape = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(8));
  // GET /api/doctor as `inferscope up` serves it: JSON on success, OpenAI errors naming the parameter.
  std::string prom_url;
  net::Router router;
  add_doctor_routes(router, [&prom_url] { return prom_url; });
  auto api = net::HttpServer::start({.port = 0, .io_threads = 2}, router.handler());
  ASSERT_TRUE(api) << api.error().message;
  auto get = [&](const std::string& target) {
    return serve::testing::request((*api)->port(), serve::testing::http::verb::get, target);
  };
  EXPECT_EQ(get("/api/doctor").status, 503);
  prom_url = prom.url();
  // A baseline reaching back before Prometheus scraped anything says so.
  auto early = get("/api/doctor?window=3s&baseline=60s&selector=%7Bjob%3D%22serve%22%7D");
  ASSERT_EQ(early.status, 200) << early.body;
  EXPECT_NE(early.body.find("baseline has requests in only"), std::string::npos) << early.body;
  auto ok = get("/api/doctor?window=3s&baseline=4s&selector=%7Bjob%3D%22serve%22%7D");
  ASSERT_EQ(ok.status, 200) << ok.body;
  auto json = nlohmann::json::parse(ok.body, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << ok.body;
  EXPECT_EQ(json["schema_version"], 1);
  EXPECT_EQ(json["verdict"], "healthy") << ok.body;
  auto bad = get("/api/doctor?window=5x");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(nlohmann::json::parse(bad.body, nullptr, false)["error"]["param"], "window") << bad.body;
  (*api)->stop();

  // An alert on a stack younger than the default 5m window + 30m baseline: the doctor compares
  // within the history there is (about 20 s here: two 10 s halves) and says so, instead of
  // "too few finished requests".
  std::this_thread::sleep_until(first_scrape + std::chrono::seconds(20));
  // The alert's own expression comes from its generatorURL, as Prometheus escapes it.
  const std::string generator_url = prom.url() + "/graph?g0.expr=sum%28inferscope_requests_total%7Bjob%3D%22serve%22%7D%29+%3E+0&g0.tab=1";
  AlertDiagnosis alert = diagnose_alert(prom.url(), {{"job", "serve"}, {"alertname", "T"}}, generator_url);
  const std::string& md = alert.markdown;
  EXPECT_EQ(md.find("too few finished requests"), std::string::npos) << md;
  EXPECT_EQ(md.rfind("**Doctor: no data", 0), std::string::npos) << md;
  EXPECT_NE(md.find("the baseline was shortened from 30m to"), std::string::npos) << md;
  // What it keeps for the resolved message: the figures it saw, and the alert's own expression.
  auto record = record_from_json(alert.record);
  ASSERT_TRUE(record) << alert.record;
  EXPECT_EQ(record->alert_expr, "sum(inferscope_requests_total{job=\"serve\"})");
  ASSERT_GE(record->figures.size(), 3u) << alert.record;
  EXPECT_GT(record->figures[0].during, 0) << alert.record;   // requests served so far
  EXPECT_GT(record->figures.back().during, 0) << alert.record;  // e2e p95 in the window
  // When it resolves, "after" is read the same way: a request counter has only grown.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::string recovered = recovery_markdown(prom.url(), alert.record);
  EXPECT_NE(recovered.find("It fired with "), std::string::npos) << recovered;
  EXPECT_NE(recovered.find("- `sum(inferscope_requests_total{job=\"serve\"})` (the alert's expression): before "),
            std::string::npos)
      << recovered;
  EXPECT_NE(recovered.find("- e2e mean: before "), std::string::npos) << recovered;
  EXPECT_EQ(recovered.find("no data"), std::string::npos) << recovered;
  EXPECT_EQ(recovered.find("unknown"), std::string::npos) << recovered;
  // An alert that fired before Prometheus was ready kept no record: its firing is diagnosed at
  // its start time when it resolves, and the resolved message still says what recovered.
  const std::string without = recovery_without_record(prom.url(), {{"job", "serve"}, {"alertname", "T"}},
                                                      generator_url, record->fired_at);
  EXPECT_NE(without.find("- `sum(inferscope_requests_total{job=\"serve\"})` (the alert's expression): before "),
            std::string::npos)
      << without;

  driver.stop();
  const double stopped_at = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  (*server)->stop();
  // Prometheus marks the target down at its next scrape.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  DoctorRequest down{prom.url(), 0, 5, 20, "{job=\"serve\"}", ""};
  auto d = run_doctor(down);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->verdict, "no_data") << to_text(*d);
  EXPECT_TRUE(has_cause(*d, "target_down")) << to_text(*d);
  // A window that ended while every scrape succeeded is not judged by the target's health now.
  DoctorRequest before_stop{prom.url(), stopped_at - 0.5, 5, 20, "{job=\"serve\"}", ""};
  auto b = run_doctor(before_stop);
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_FALSE(has_cause(*b, "target_down")) << to_text(*b);

  DoctorRequest missing{prom.url(), 0, 5, 20, "{job=\"bare\"}", ""};
  auto m = run_doctor(missing);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->verdict, "no_data") << to_text(*m);
  EXPECT_TRUE(has_cause(*m, "metrics_missing")) << to_text(*m);
  (*bare)->stop();
}

int run_cli(const std::string& args, std::string* out) {
  return testing::run_command(std::string(INFERSCOPE_BINARY) + " " + args, out);
}

// Tests the CLI contract: exit 0/1/2 by verdict, a saved baseline compared later, one-line
// errors naming the flag for bad input.
TEST(DoctorModesIntegrationTest, CliExitCodesAndBaselineFile) {
  auto server = serve::Server::start(testing::scenario_server_options());
  ASSERT_TRUE(server) << server.error().message;
  std::string url = "http://127.0.0.1:" + std::to_string((*server)->port()) + "/metrics";
  testing::LoadDriver driver((*server)->port(), testing::LoadShape{});
  std::this_thread::sleep_for(std::chrono::seconds(1));
  char dir[] = "/tmp/inferscope-doctor-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  std::string baseline = std::string(dir) + "/baseline.json";
  std::string out;
  int code = run_cli("doctor --scrape " + url + " --duration 6s --interval 500ms --save-baseline " + baseline, &out);
  EXPECT_EQ(code, 0) << out;
  testing::set_faults((*server)->port(), R"({"decode_slowdown": 3})");
  std::this_thread::sleep_for(std::chrono::seconds(1));
  code = run_cli("doctor --scrape " + url + " --duration 5s --interval 500ms --format json --baseline-file " + baseline,
                 &out);
  EXPECT_EQ(code, 1) << out;
  auto json = nlohmann::json::parse(out.substr(out.find('{')), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out;
  EXPECT_EQ(json["verdict"], "degraded");
  EXPECT_EQ(json["findings"][0]["cause"], "decode_slowdown") << out;

  code = run_cli("doctor --check-metrics http://127.0.0.1:1/metrics", &out);
  EXPECT_EQ(code, 2) << out;
  code = run_cli("doctor --prometheus http://127.0.0.1:1 --window 5x", &out);
  EXPECT_EQ(code, 3) << out;
  EXPECT_NE(out.find("--window"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  code = run_cli("doctor --scrape " + url + " --baseline-file /nonexistent/b.json --duration 1s", &out);
  EXPECT_EQ(code, 3) << out;
  EXPECT_NE(out.find("/nonexistent/b.json"), std::string::npos) << out;
  driver.stop();
  std::remove(baseline.c_str());
  rmdir(dir);
}

// Tests an exposition quirk on a real capture, live: SGLang's 2026 recording (the capture in
// ../shared/samples, copied to tests/dialect/testdata) served over HTTP as that server sends it.
// `doctor --check-metrics` calls it healthy (exit 0) and warns about each gauge that carries an
// `le` label, and the real Prometheus scraping the same text stores those gauges with the target
// up: the warning's "Prometheus ingests it" holds, so the quirk is no reason for a degraded verdict.
TEST(DoctorModesIntegrationTest, SglangRecordingIsHealthyWithAWarning) {
  const std::string recording = "sglang-main2026-qwen3.8-flash-next-metrics.txt";
  std::ifstream sample(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/dialect/testdata/" + recording);
  ASSERT_TRUE(sample) << "missing tests/dialect/testdata/" << recording;
  const std::string exposition((std::istreambuf_iterator<char>(sample)), std::istreambuf_iterator<char>());
  net::Router router;
  router.get("/metrics", [&exposition](const net::Request&) {
    net::Response r = net::Response::text(exposition);
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  });
  auto sglang = net::HttpServer::start({.port = 0, .log_name = "sglang-recording"}, router.handler());
  ASSERT_TRUE(sglang) << sglang.error().message;
  const std::string address = "127.0.0.1:" + std::to_string((*sglang)->port());
  const std::string url = "http://" + address + "/metrics";

  std::string out;
  EXPECT_EQ(run_cli("doctor --check-metrics " + url, &out), 0) << out;
  EXPECT_EQ(out.rfind("healthy: " + url + " \xe2\x80\x94 dialect sglang", 0), 0u) << out;
  const auto warnings_at = out.find("exposition warnings (not counted against the verdict):");
  ASSERT_NE(warnings_at, std::string::npos) << out;
  for (const char* gauge : {"sglang:routing_key_running_req_count", "sglang:routing_key_all_req_count"})
    EXPECT_NE(out.find(std::string("label le on \"") + gauge + "\" of a non-histogram family", warnings_at),
              std::string::npos)
        << gauge << "\n" << out;

  EXPECT_EQ(run_cli("doctor --check-metrics " + url + " --format json", &out), 0) << out;
  auto json = nlohmann::json::parse(out.substr(std::min(out.find('{'), out.size())), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out;
  EXPECT_EQ(json["verdict"], "healthy") << out;
  EXPECT_EQ(json["dialects"], nlohmann::json::array({"sglang"})) << out;
  EXPECT_TRUE(json["problems"].empty()) << out;
  EXPECT_EQ(json["warnings"].size(), 2u) << out;

  inferscope::testing::PrometheusProcess prom(inferscope::testing::scrape_config_for({address}, "1s", "sglang"));
  ASSERT_TRUE(prom.ok()) << prom.error();
  auto client = promapi::PrometheusClient::create(prom.url());
  ASSERT_TRUE(client);
  const auto stored = [&](const std::string& expr) {
    auto r = client->query(expr);
    return r && !r->series.empty();
  };
  EXPECT_TRUE(inferscope::testing::wait_until(
      [&] { return stored("up{job=\"sglang\"} == 1") && stored("sglang:routing_key_running_req_count{le!=\"\"}"); },
      std::chrono::seconds(30), std::chrono::milliseconds(200)))
      << "Prometheus did not store the le-labelled gauge of a healthy scrape";
  prom.stop();
  (*sglang)->stop();
}

}  // namespace
}  // namespace inferscope::doctor
