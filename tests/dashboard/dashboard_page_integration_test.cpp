// End-to-end test of the dashboard page (the CLI binary, INFERSCOPE_BINARY): `inferscope serve`
// under load from `inferscope bench`,
// `inferscope up` (real Prometheus, Alertmanager, node-exporter on ephemeral loopback ports)
// serving the page, and Debian's Chromium driven by playwright-core (web/test/page_check.js).
// Three phases: every panel draws data; a decode fault brings the firing alert and the doctor's
// finding onto the page; Prometheus stopped (SIGSTOP) turns
// every panel into a "Prometheus unreachable" notice. A second test adds a redis target with real
// RQ workers (python3-rq) whose jobs call serve: the Queue row appears and every chart in it draws.
// A third: before any serving target is scraped, one banner says what is missing and each panel
// says "no data" once. A fourth sends serve's spans to up's OTLP receiver and opens a slow
// request's waterfall from the "Slow requests" table during a decode fault. A fifth runs serve as
// a disaggregated prefill/decode fleet: the Disaggregated fleet row draws (a plain serve's page
// collapses it, as the first test checks, with the features row drawn). Screenshots go to the
// build dir.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/blocking_client.h"
#include "net/http_server.h"
#include "net/router.h"
#include "queue/queue_test_support.h"
#include "up/cli/up_process.h"
#include "up/stack_test_support.h"
#include "support/loopback_port.h"
#include "support/stopped_process.h"

namespace inferscope::dashboard {
namespace {

using up::testing::UpProcess;
using namespace std::chrono_literals;

std::string url_of_serve(UpProcess& serve) {
  auto line = serve.wait_line("listening on http://", 20s);
  if (!line) return "";
  const auto start = line->find("http://");
  return line->substr(start, line->find(' ', start) - start);
}

// bench_args loads `serve_url` with 256-token prompts and 32-token answers at `stages`.
std::vector<std::string> bench_args(const std::string& serve_url, const std::string& stages) {
  return {"bench", "--base-url", serve_url, "--no-progress", "--seed", "7", "--random-input-len", "256",
          "--random-output-len", "32", "--stages", stages};
}

// run_page_check runs the node driver to completion (bounded by its own --timeout) and returns
// its JSON verdict line.
nlohmann::json run_page_check(const std::string& api, const std::string& expect, const std::string& screenshot,
                              bool doctor_optional, const std::string& query = "", const std::string& banner = "",
                              const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {std::string("NODE_PATH=") + INFERSCOPE_WEB_NODE_MODULES,
                                   "node", std::string(INFERSCOPE_SOURCE_DIR) + "/web/test/page_check.js",
                                   "--url", api, "--expect", expect, "--screenshot", screenshot, "--timeout", "45"};
  if (doctor_optional) args.insert(args.end(), {"--doctor", "optional"});
  if (!query.empty()) args.insert(args.end(), {"--query", query});
  if (!banner.empty()) args.insert(args.end(), {"--banner", banner});
  args.insert(args.end(), extra.begin(), extra.end());
  std::string last;
  auto child = up::ChildProcess::spawn({.binary = "/usr/bin/env", .args = args, .log_file = {}},
                                          [&last](std::string_view line) { if (!line.empty() && line[0] == '{') last = line; });
  if (!child) return {{"ok", false}, {"errors", {child.error().message}}};
  auto exit = (*child)->wait_for(90s);
  if (!exit) (*child)->terminate(2s);
  (*child)->wait_output_closed();
  auto verdict = nlohmann::json::parse(last, nullptr, false);
  if (verdict.is_discarded()) return {{"ok", false}, {"errors", {"no verdict from page_check.js: " + last}}};
  return verdict;
}

std::optional<int> prometheus_pid(const std::string& api) {
  auto reply = net::blocking_http_request("GET", api + "/api/status", {}, {}, 10s);
  if (!reply || reply->status != 200) return std::nullopt;
  auto status = nlohmann::json::parse(reply->body, nullptr, false);
  if (status.is_discarded()) return std::nullopt;
  for (const auto& c : status.value("children", nlohmann::json::array())) {
    if (c.value("name", "") == "prometheus") return c.value("pid", 0);
  }
  return std::nullopt;
}

// panel_of returns the panel `id` of a page_check verdict (null when the page has none).
nlohmann::json panel_of(const nlohmann::json& verdict, const std::string& id) {
  for (const auto& p : verdict.value("panels", nlohmann::json::array())) {
    if (p.value("id", "") == id) return p;
  }
  return nullptr;
}

// row_of returns the row `id` of a page_check verdict ({id, state: shown|collapsed, reason}), or {}.
nlohmann::json row_of(const nlohmann::json& verdict, const std::string& id) {
  for (const auto& r : verdict.value("rows", nlohmann::json::array())) {
    if (r.value("id", "") == id) return r;
  }
  return nlohmann::json::object();
}

// DataAnswer is up's own data endpoint's answer (15 min range) beside the series labels of the
// panels asked for; a panel without data adds no label, so the caller's label checks fail on it.
struct DataAnswer {
  nlohmann::json body;
  std::vector<std::string> labels;
};
DataAnswer data_answer(const std::string& api, std::initializer_list<const char*> panel_ids) {
  DataAnswer answer;
  auto reply = net::blocking_http_request("GET", api + "/api/dashboard/data?range=15m", {}, {}, 20s);
  EXPECT_TRUE(reply && reply->status == 200) << (reply ? reply->body : reply.error().message);
  if (!reply || reply->status != 200) return answer;
  answer.body = nlohmann::json::parse(reply->body, nullptr, false);
  EXPECT_FALSE(answer.body.is_discarded()) << reply->body;
  if (answer.body.is_discarded()) return answer;
  const auto panels = answer.body.value("panels", nlohmann::json::object());
  for (const char* id : panel_ids) {
    const auto series = panels.value(id, nlohmann::json::object())
                            .value("timeseries", nlohmann::json::object())
                            .value("series", nlohmann::json::array());
    for (const auto& s : series) answer.labels.push_back(s.value("label", ""));
  }
  return answer;
}

// Tests that the page draws every panel from a loaded server, shows a fault's alert (and the
// doctor's finding), and says "unreachable" on every panel when Prometheus stops answering.
TEST(DashboardPageIntegrationTest, DataThenFaultThenPrometheusDown) {
  ASSERT_TRUE(up::testing::stack_binaries_installed());
  ASSERT_TRUE(
      inferscope::testing::peers_installed({inferscope::testing::kNodeExporter, inferscope::testing::kChromium}));
  const std::filesystem::path artifacts = INFERSCOPE_ARTIFACT_DIR;
  std::filesystem::create_directories(artifacts);
  up::testing::TempDir dir;

  // Speculative decoding and LoRA adapters on, so the engine-features row has data to draw like
  // every other chart (the prefix cache and the one data-parallel rank are always there).
  UpProcess serve({"serve", "--port", "0", "--enable-admin", "--max-num-seqs", "32", "--duration", "240",
                   "--speculative-tokens", "2", "--lora-modules", "support-bot"});
  ASSERT_TRUE(serve.started()) << serve.start_error();
  const std::string serve_url = url_of_serve(serve);
  ASSERT_FALSE(serve_url.empty()) << serve.output();

  // Fast alerting so a fault shows within seconds: 1 s scrapes, a 1 s e2e p95 SLO held for 5 s.
  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "scrape_interval: 1s\nslo:\n  e2e_p95: 1s\n  e2e_p99: 2s\n"
                        << "alerts:\n  for:\n    InferscopeE2eP95OverSlo: 5s\n    InferscopeE2eP99OverSlo: 5s\n";
  UpProcess up({"up", "--config", config.string(), "--target", "serve=" + serve_url + "/metrics", "--port", "0",
                "--prometheus-port", "0", "--alertmanager-port", "0", "--state-dir", (dir.path() / "state").string(),
                "--node-exporter"});
  ASSERT_TRUE(up.started()) << up.start_error();
  auto ready = up.wait_ready(60s);
  ASSERT_TRUE(ready) << up.output();

  UpProcess bench(bench_args(serve_url, "150s:rate=4"));
  ASSERT_TRUE(bench.started()) << bench.start_error();
  const auto bench_started = std::chrono::steady_clock::now();

  auto data = run_page_check(ready->api, "data", (artifacts / "dashboard-data.png").string(), true, "", "",
                             {"--axes", "1280,1600"});
  EXPECT_TRUE(data.value("ok", false)) << data.dump(1) << "\nserve:\n" << serve.output() << "\nup:\n" << up.output()
                                       << "\nbench:\n" << bench.output();
  // Axis layout, from the rendered text boxes on every chart's canvas at both widths: no axis title
  // over a tick label (page_check.js fails otherwise; here: that the check saw titles and labels).
  // And a stack a minute old has less data than the 15 min range: those time axes start at their
  // first sample.
  const auto axes = data.value("axes", nlohmann::json::array());
  ASSERT_EQ(axes.size(), 2u) << data.dump(1);
  for (const auto& width : axes) {
    EXPECT_GT(width.value("titles", 0), 20) << width.dump();
    EXPECT_GT(width.value("ticks", 0), 100) << width.dump();
  }
  EXPECT_GT(data.value("time_axes", nlohmann::json::object()).value("shorter", 0), 10) << data.dump(1);
  // Nothing sends spans here: the table says so and where to send them, not an empty list.
  std::string slow_requests;
  for (const auto& p : data.value("panels", nlohmann::json::array())) {
    if (p.value("id", "") == "slow-requests") slow_requests = p.value("message", "");
  }
  EXPECT_EQ(slow_requests, "no traces received yet — point --otlp-endpoint at " + ready->api + "/v1/traces")
      << data.dump(1);
  // The engine-features row draws every chart with the features on; the disaggregated row, whose
  // series a plain serve does not expose, is collapsed with its reason said once.
  for (const char* id : {"prefix_cache", "prefix_hit_rate", "spec_decode", "spec_acceptance", "lora", "rank_e2e_p99"}) {
    const auto panel = panel_of(data, id);
    ASSERT_FALSE(panel.is_null()) << id << " missing from the page: " << data.dump(1);
    EXPECT_EQ(panel.value("state", ""), "ok") << panel.dump();
    EXPECT_GT(panel.value("canvas", 0), 0) << panel.dump();
  }
  EXPECT_EQ(row_of(data, "features").value("state", ""), "shown") << data["rows"].dump();
  const auto disagg = row_of(data, "disagg");
  EXPECT_EQ(disagg.value("state", ""), "collapsed") << data["rows"].dump();
  EXPECT_EQ(disagg.value("reason", "").rfind("no data: target job=serve exposes none of this row's series: ", 0), 0u)
      << disagg.dump();
  EXPECT_NE(disagg.value("reason", "").find("--prefill-workers"), std::string::npos) << disagg.dump();

  // The doctor compares the fault with a healthy baseline: give the load 40 s before the fault.
  std::this_thread::sleep_until(bench_started + 40s);
  auto doctor = net::blocking_http_request("GET", ready->api + "/api/doctor?window=20s&baseline=30s", {}, {}, 20s);
  // up always serves /api/doctor (503 until Prometheus is ready): the doctor panel is required.
  ASSERT_TRUE(doctor && doctor->status != 404) << (doctor ? doctor->body : doctor.error().message);
  auto fault = net::blocking_http_request("POST", serve_url + "/admin/faults", R"({"decode_slowdown":20})",
                                            "application/json", 10s);
  ASSERT_TRUE(fault && fault->status == 200) << (fault ? fault->body : fault.error().message);
  auto faulted = run_page_check(ready->api, "fault", (artifacts / "dashboard-fault.png").string(),
                                /*doctor_optional=*/false, "doctor_window=20s&doctor_baseline=30s");
  EXPECT_TRUE(faulted.value("ok", false)) << faulted.dump(1) << "\n" << up.output();

  auto pid = prometheus_pid(ready->api);
  ASSERT_TRUE(pid && *pid > 0);
  inferscope::testing::StoppedProcess stalled(*pid, 10s);
  ASSERT_TRUE(stalled.stopped()) << "Prometheus did not stop";
  auto down = run_page_check(ready->api, "nodata", (artifacts / "dashboard-prometheus-down.png").string(), true);
  stalled.resume();
  EXPECT_TRUE(down.value("ok", false)) << down.dump(1);
}

// Tests that with a redis target the page gains the Queue row and that, with a real redis-server,
// RQ workers and jobs that call serve, every chart of it (depth beside e2e p99, oldest age and
// wait p95, workers by state, the GPU) draws data, as every other chart of the page does.
TEST(DashboardPageIntegrationTest, QueueRowDrawsWithRqWorkers) {
  ASSERT_TRUE(up::testing::stack_binaries_installed());
  ASSERT_TRUE(
      inferscope::testing::peers_installed({inferscope::testing::kNodeExporter, inferscope::testing::kChromium}));
  namespace qt = queue::testing;
  const std::filesystem::path artifacts = INFERSCOPE_ARTIFACT_DIR;
  std::filesystem::create_directories(artifacts);
  up::testing::TempDir dir;
  qt::RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();

  UpProcess serve({"serve", "--port", "0", "--max-num-seqs", "32", "--duration", "240", "--speculative-tokens", "2",
                   "--lora-modules", "support-bot"});
  ASSERT_TRUE(serve.started()) << serve.start_error();
  const std::string serve_url = url_of_serve(serve);
  ASSERT_FALSE(serve_url.empty()) << serve.output();
  qt::Worker worker("/usr/bin/rq", {"worker", "--url", redis.url(), "--path", qt::kPythonDir, "default"},
                    "Listening on default");

  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "scrape_interval: 1s\ntargets:\n  - name: serve\n    url: " << serve_url << "/metrics\n"
                        << "  - name: jobs\n    url: " << redis.url() << "\n    queues:\n      systems: [rq]\n";
  UpProcess up({"up", "--config", config.string(), "--port", "0", "--prometheus-port", "0", "--alertmanager-port", "0",
                "--state-dir", (dir.path() / "state").string(), "--node-exporter"});
  ASSERT_TRUE(up.started()) << up.start_error();
  auto ready = up.wait_ready(60s);
  ASSERT_TRUE(ready) << up.output();

  UpProcess bench(bench_args(serve_url, "90s:rate=4"));
  ASSERT_TRUE(bench.started()) << bench.start_error();
  // Jobs in batches while the page loads: some wait behind others (depth, oldest age), every one
  // is seen starting (wait) and calls serve.
  inferscope::testing::TempDir started("page-queue-started");
  std::atomic<bool> enqueuing{true};
  std::thread producer([&] {
    for (int batch = 0; batch < 30 && enqueuing; ++batch) {
      qt::enqueue({"rq", redis.url(), "default", "4", serve_url, "0.3", started.path().string()});
      std::this_thread::sleep_for(1s);
    }
  });
  auto data = run_page_check(ready->api, "data", (artifacts / "dashboard-queue.png").string(), true, "", "",
                             {"--axes", "1280,1600"});
  enqueuing = false;
  producer.join();
  EXPECT_TRUE(data.value("ok", false)) << data.dump(1) << "\nup:\n" << up.output() << "\nworker:\n" << worker.output();
  for (const char* id : {"jobqueue_depth", "jobqueue_wait", "jobqueue_workers", "jobqueue_gpu"}) {
    const auto panel = panel_of(data, id);
    ASSERT_FALSE(panel.is_null()) << id << " missing from the page: " << data.dump(1);
    EXPECT_EQ(panel.value("state", ""), "ok") << panel.dump();
    EXPECT_GT(panel.value("canvas", 0), 0) << panel.dump();
  }
  // The series the row drew are the queue's: ask the page's own data endpoint.
  const auto [body, labels] = data_answer(ready->api, {"jobqueue_depth", "jobqueue_wait", "jobqueue_workers"});
  const auto drawn = body.is_object() ? body.value("panels", nlohmann::json::object()) : nlohmann::json::object();
  for (const char* label : {"depth default (rq, jobs)", "e2e p99", "oldest age default (rq, jobs)",
                            "wait p95 default (rq, jobs)"}) {
    EXPECT_NE(std::find(labels.begin(), labels.end(), label), labels.end()) << label << " in " << drawn.dump();
  }
  EXPECT_TRUE(std::any_of(labels.begin(), labels.end(), [](const std::string& l) { return l.ends_with("(rq, jobs)") && (l.starts_with("idle") || l.starts_with("busy")); }))
      << drawn.value("jobqueue_workers", nlohmann::json::object()).dump();
  ASSERT_EQ(::kill(up.process().pid(), SIGTERM), 0);
  EXPECT_TRUE(up.wait_line("inferscope up: stopped", 30s)) << up.output();
}

// Tests the Disaggregated fleet row against `serve --prefill-workers 2 --decode-workers 2` under
// load: the row is shown (not collapsed) and each of its five charts draws data, from up's
// recorded series: waiting per pool (prefill and decode), load per endpoint with its pool, KV
// transfer p50/p95 and transfers/s, KV bytes/s, the router's prefix hit.
TEST(DashboardPageIntegrationTest, DisaggregatedRowDrawsForAServeFleet) {
  ASSERT_TRUE(up::testing::stack_binaries_installed());
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kChromium}));
  const std::filesystem::path artifacts = INFERSCOPE_ARTIFACT_DIR;
  std::filesystem::create_directories(artifacts);
  up::testing::TempDir dir;

  UpProcess serve({"serve", "--port", "0", "--max-num-seqs", "32", "--duration", "180", "--prefill-workers", "2",
                   "--decode-workers", "2"});
  ASSERT_TRUE(serve.started()) << serve.start_error();
  const std::string serve_url = url_of_serve(serve);
  ASSERT_FALSE(serve_url.empty()) << serve.output();

  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "scrape_interval: 1s\n";
  UpProcess up({"up", "--config", config.string(), "--target", "serve=" + serve_url + "/metrics", "--port", "0",
                "--prometheus-port", "0", "--alertmanager-port", "0", "--state-dir", (dir.path() / "state").string()});
  ASSERT_TRUE(up.started()) << up.start_error();
  auto ready = up.wait_ready(60s);
  ASSERT_TRUE(ready) << up.output();

  UpProcess bench(bench_args(serve_url, "90s:rate=4"));
  ASSERT_TRUE(bench.started()) << bench.start_error();

  auto data = run_page_check(ready->api, "data", (artifacts / "dashboard-disagg.png").string(), true, "", "",
                             {"--rows", "disagg", "--axes", "1280,1600"});
  EXPECT_TRUE(data.value("ok", false)) << data.dump(1) << "\nserve:\n" << serve.output() << "\nup:\n" << up.output();
  EXPECT_EQ(row_of(data, "disagg").value("state", ""), "shown") << data["rows"].dump();
  for (const char* id : {"pool_waiting", "endpoint_load", "kv_transfer_time", "kv_transfer_bandwidth", "route_prefix_hit"}) {
    const auto panel = panel_of(data, id);
    ASSERT_FALSE(panel.is_null()) << id << " missing from the page: " << data.dump(1);
    EXPECT_EQ(panel.value("state", ""), "ok") << panel.dump();
    EXPECT_GT(panel.value("canvas", 0), 0) << panel.dump();
  }
  // The series the row drew are the fleet's, per pool and per endpoint: ask the page's own data endpoint.
  const auto [body, labels] =
      data_answer(ready->api, {"pool_waiting", "endpoint_load", "kv_transfer_time", "kv_transfer_bandwidth"});
  const auto rows = body.is_object() ? body.value("rows", nlohmann::json::object()) : nlohmann::json::object();
  EXPECT_EQ(rows.value("disagg", nlohmann::json::object()).value("status", ""), "shown") << rows.dump();
  std::string drawn;
  for (const auto& l : labels) drawn += "'" + l + "' ";
  for (const char* label : {"waiting prefill", "waiting decode", "prefill-0 (prefill)", "prefill-1 (prefill)",
                            "decode-0 (decode)", "decode-1 (decode)", "transfers/s"}) {
    EXPECT_NE(std::find(labels.begin(), labels.end(), label), labels.end()) << label << " in " << drawn;
  }
  // Per model where the recorded series has one (the transfer time); serve's bytes/s is per job.
  for (const char* prefix : {"p50 ", "p95 ", "bytes/s"}) {
    EXPECT_TRUE(std::any_of(labels.begin(), labels.end(), [&](const std::string& l) { return l.starts_with(prefix); }))
        << prefix << " in " << drawn;
  }
  ASSERT_EQ(::kill(up.process().pid(), SIGTERM), 0);
  EXPECT_TRUE(up.wait_line("inferscope up: stopped", 30s)) << up.output();
}

// Tests the page of an up whose serving target is not up yet (a newcomer's first look, and every
// page before the first scrape): one banner says what is missing, and each panel without data says "no data"
// once, pointing at the banner, instead of repeating its sentence two or three times.
TEST(DashboardPageIntegrationTest, NoServingTargetShowsOneBanner) {
  ASSERT_TRUE(up::testing::stack_binaries_installed());
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kChromium}));
  const std::filesystem::path artifacts = INFERSCOPE_ARTIFACT_DIR;
  std::filesystem::create_directories(artifacts);
  up::testing::TempDir dir;
  // The serving target is not up yet (its port closed: a server bound, then stopped).
  int closed_port = 0;
  {
    net::Router router;
    auto server = net::HttpServer::start({.port = 0, .log_name = "closed"}, router.handler());
    ASSERT_TRUE(server) << server.error().message;
    closed_port = (*server)->port();
    (*server)->stop();
  }
  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "scrape_interval: 1s\n";
  UpProcess up({"up", "--config", config.string(), "--target", "sim=http://127.0.0.1:" + std::to_string(closed_port) + "/metrics",
                "--port", "0", "--prometheus-port", "0", "--alertmanager-port", "0", "--state-dir",
                (dir.path() / "state").string()});
  ASSERT_TRUE(up.started()) << up.start_error();
  auto ready = up.wait_ready(60s);
  ASSERT_TRUE(ready) << up.output();
  // Before the first scrape the banner says Prometheus scraped nothing yet; the target is marked
  // down once a scrape failed.
  ASSERT_TRUE(up::testing::wait_until(
      [&] { return up::testing::query_value(ready->prometheus, "count(up{job=\"sim\"} == 0)") == 1; }, 30s))
      << up.output();
  auto page = run_page_check(ready->api, "banner", (artifacts / "dashboard-no-target.png").string(), true, "",
                             "no data: no scrape target of a known serving dialect");
  EXPECT_TRUE(page.value("ok", false)) << page.dump(1) << "\n" << up.output();
  EXPECT_NE(page["banner"].value("text", "").find("sim (down)"), std::string::npos) << page.dump(1);
}

// Tests the traces on the page: serve exports every request's spans to up's receiver, a decode
// fault slows requests down, and in Chromium the slowest row of the "Slow requests" table, the
// e2e chart's highest exemplar point and a ?trace=<id> link (the doctor's example links) each
// open a waterfall whose decode bar is the widest stage bar and at least half the request; up's
// doctor gives the decode finding example traces whose decode span is their longest stage. Its
// screenshot is the one in docs/.
TEST(DashboardPageIntegrationTest, SlowRequestWaterfallShowsDecodeDuringDecodeFault) {
  ASSERT_TRUE(up::testing::stack_binaries_installed());
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kChromium}));
  const std::filesystem::path artifacts = INFERSCOPE_ARTIFACT_DIR;
  std::filesystem::create_directories(artifacts);
  up::testing::TempDir dir;

  // serve must know up's receiver before up knows serve: up gets a port that was free a moment ago.
  const int up_port = inferscope::testing::free_loopback_port();
  ASSERT_GT(up_port, 0);
  const std::string receiver = "http://127.0.0.1:" + std::to_string(up_port) + "/v1/traces";
  UpProcess serve({"serve", "--port", "0", "--enable-admin", "--max-num-seqs", "32", "--duration", "180",
                   "--otlp-endpoint", receiver, "--trace-sample", "1"});
  ASSERT_TRUE(serve.started()) << serve.start_error();
  const std::string serve_url = url_of_serve(serve);
  ASSERT_FALSE(serve_url.empty()) << serve.output();

  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "scrape_interval: 1s\n";
  UpProcess up({"up", "--config", config.string(), "--target", "serve=" + serve_url + "/metrics", "--port",
                std::to_string(up_port), "--prometheus-port", "0", "--alertmanager-port", "0", "--state-dir",
                (dir.path() / "state").string()});
  ASSERT_TRUE(up.started()) << up.start_error();
  auto ready = up.wait_ready(60s);
  ASSERT_TRUE(ready) << up.output();
  ASSERT_EQ(ready->api_port(), up_port) << up.output();

  UpProcess bench({"bench", "--base-url", serve_url, "--no-progress", "--seed", "7", "--random-input-len", "256",
                   "--random-output-len", "32", "--stages", "90s:rate=4"});
  ASSERT_TRUE(bench.started()) << bench.start_error();
  const auto bench_started = std::chrono::steady_clock::now();

  // A factor the engine still keeps up with at 4 requests/s, so decode (not a growing queue) is
  // what makes the slow requests slow; 20 s of it let the first slowed requests finish.
  std::this_thread::sleep_until(bench_started + 15s);
  auto fault = net::blocking_http_request("POST", serve_url + "/admin/faults", R"({"decode_slowdown":10})",
                                          "application/json", 10s);
  ASSERT_TRUE(fault && fault->status == 200) << (fault ? fault->body : fault.error().message);
  const double fault_at = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::this_thread::sleep_until(bench_started + 35s);

  // up's doctor cites requests from its own store: the decode finding's examples are requests
  // whose decode span is their longest stage (18 s of fault against the 14 s before it).
  auto doctor = net::blocking_http_request(
      "GET", ready->api + "/api/doctor?window=18s&baseline=14s&at=" + std::to_string(fault_at + 18), "", "", 60s);
  ASSERT_TRUE(doctor && doctor->status == 200) << (doctor ? doctor->body : doctor.error().message);
  const auto diagnosis = nlohmann::json::parse(doctor->body, nullptr, false);
  ASSERT_TRUE(diagnosis.is_object() && !diagnosis["findings"].empty()) << doctor->body;
  const auto& top = diagnosis["findings"][0];
  EXPECT_EQ(top["cause"], "decode_slowdown") << doctor->body;
  ASSERT_TRUE(top.contains("examples") && !top["examples"].empty()) << doctor->body;
  for (const auto& example : top["examples"]) {
    EXPECT_EQ(example["trace_id"].get<std::string>().size(), 32u);
    double longest = 0;
    std::string longest_stage;
    for (const auto& [stage, seconds] : example["stages"].items())
      if (seconds.get<double>() > longest) longest = seconds.get<double>(), longest_stage = stage;
    EXPECT_EQ(longest_stage, "decode") << example.dump();
  }

  auto from_table = run_page_check(ready->api, "waterfall", (artifacts / "trace-waterfall.png").string(), true, "", "",
                                   {"--via", "table", "--stage", "decode", "--min-share", "0.5"});
  EXPECT_TRUE(from_table.value("ok", false)) << from_table.dump(1) << "\nserve:\n" << serve.output()
                                             << "\nup:\n" << up.output();
  // The same from the e2e chart's highest exemplar point (serve puts the trace id of every
  // exported request on its latency buckets; up's Prometheus keeps them).
  auto from_exemplar = run_page_check(ready->api, "waterfall", (artifacts / "trace-waterfall-exemplar.png").string(),
                                      true, "", "", {"--via", "exemplar", "--stage", "decode", "--min-share", "0.5"});
  EXPECT_TRUE(from_exemplar.value("ok", false)) << from_exemplar.dump(1) << "\nup:\n" << up.output();
  // And from a link as the doctor's example traces give one (?trace=<id>): the slowest stored.
  auto slowest = net::blocking_http_request("GET", ready->api + "/api/traces?limit=1", "", "", 10s);
  ASSERT_TRUE(slowest && slowest->status == 200) << (slowest ? slowest->body : slowest.error().message);
  const auto listed = nlohmann::json::parse(slowest->body, nullptr, false);
  ASSERT_TRUE(listed.is_object() && !listed["traces"].empty()) << slowest->body;
  auto from_link = run_page_check(ready->api, "waterfall", (artifacts / "trace-waterfall-link.png").string(), true,
                                  "trace=" + listed["traces"][0]["trace_id"].get<std::string>(), "",
                                  {"--via", "link", "--stage", "decode", "--min-share", "0.5"});
  EXPECT_TRUE(from_link.value("ok", false)) << from_link.dump(1) << "\nup:\n" << up.output();
}

}  // namespace
}  // namespace inferscope::dashboard
