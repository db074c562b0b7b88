// Tests of monitoring_stack.h against Debian's real Prometheus, Alertmanager and promtool on
// loopback ephemeral ports; the scrape target is the library's own MetricsServer.
#include "up/monitoring_stack.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <inferscope/metrics/exposition_parser.h>
#include <inferscope/metrics/metrics_server.h>
#include <inferscope/metrics/registry.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <mutex>

#include "net/blocking_client.h"

#include "stack_test_support.h"

namespace inferscope::up {
namespace {

using namespace std::chrono_literals;
using testing::query_value;
using testing::TempDir;
using testing::wait_until;

struct Fixture {
  TempDir dir;
  metrics::Registry target_registry;
  std::unique_ptr<metrics::MetricsServer> target;
  metrics::Registry up_registry;
  std::mutex events_mutex;
  std::vector<std::string> events;
  config::StackConfig config;

  Fixture() {
    target_registry.counter({.name = "demo_requests_total", .help = "Requests."}).with({}).inc();
    target = std::move(metrics::MetricsServer::start(target_registry, {.port = 0}).value());
    config.targets.push_back(*config::parse_target_url("sim=http://127.0.0.1:" + std::to_string(target->port())));
    config.targets.back().kind = "inferscope";
    config.scrape_interval = 1s;
    config.port = 0;
    config.prometheus_port = 0;
    config.alertmanager_port = 0;
    config.state_dir = dir.path();
  }
  SupervisorEvents sink() {
    return [this](const std::string& line) {
      std::lock_guard lock(events_mutex);
      events.push_back(line);
    };
  }
  bool saw_event(const std::string& part) {
    std::lock_guard lock(events_mutex);
    for (const auto& e : events) {
      if (e.find(part) != std::string::npos) return true;
    }
    return false;
  }
};

// Tests that the stack starts both children on ephemeral ports, scrapes the target, and restarts
// a killed Prometheus on the same port with its data kept, after which scraping resumes.
TEST(MonitoringStackIntegrationTest, StartsScrapesAndRestartsPrometheus) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  Fixture f;
  auto stack = MonitoringStack::start(f.config, 1 /* no API in this test */, {}, f.up_registry, f.sink());
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const std::string prom = (*stack)->prometheus_url();
  ASSERT_FALSE((*stack)->alertmanager_url().empty());
  ASSERT_TRUE(wait_until([&] { return query_value(prom, "up{job=\"sim\"}") == 1.0; }, 20s))
      << "target never scraped as up";
  EXPECT_EQ(query_value(prom, "count(demo_requests_total{job=\"sim\",inferscope_kind=\"inferscope\"})"), 1.0);
  ASSERT_TRUE(wait_until([&] { return query_value(prom, "up{job=\"prometheus\"}") == 1.0; }, 20s))
      << "Prometheus does not scrape itself after the reload";

  const auto before = (*stack)->supervisor().status();
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[1].name, "prometheus");
  const int old_pid = before[1].pid;
  ASSERT_TRUE((*stack)->supervisor().kill_for_test("prometheus", SIGKILL));
  ASSERT_TRUE(wait_until([&] { return f.saw_event("prometheus restarted"); }, 30s)) << "no restart event";
  EXPECT_TRUE(f.saw_event("prometheus exited (signal 9"));
  const auto after = (*stack)->supervisor().status();
  EXPECT_NE(after[1].pid, old_pid);
  EXPECT_EQ(after[1].port, before[1].port);
  EXPECT_EQ(after[1].restarts, 1);
  EXPECT_TRUE(testing::process_alive(after[1].pid));
  EXPECT_FALSE(testing::process_alive(old_pid));
  // Scraping resumes, and the samples from before the kill are still there (data dir kept).
  ASSERT_TRUE(wait_until([&] { return query_value(prom, "up{job=\"sim\"}") == 1.0; }, 20s));
  const auto pids = (*stack)->supervisor().status();
  (*stack)->stop();
  for (const auto& c : pids) EXPECT_FALSE(testing::process_alive(c.pid)) << c.name << " still runs after stop";
}

struct StoredExemplar {
  std::string trace_id;
  double le = 0;  // the bucket's bound
  double value = 0;
  double timestamp = 0;
};

// query_exemplars asks Prometheus' /api/v1/query_exemplars for `promql` over the last hour and
// returns every exemplar it holds (empty on any failure: the caller polls).
std::vector<StoredExemplar> query_exemplars(const std::string& prometheus_url, const std::string& promql) {
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string form = "query=" + promapi::url_encode(promql) + "&start=" + std::to_string(now - 3600) +
                           "&end=" + std::to_string(now + 60);
  auto reply = net::blocking_http_request("POST", prometheus_url + "/api/v1/query_exemplars", form,
                                          "application/x-www-form-urlencoded");
  std::vector<StoredExemplar> out;
  if (!reply || reply->status != 200) return out;
  const auto json = nlohmann::json::parse(reply->body, nullptr, false);
  if (json.is_discarded() || !json.contains("data") || !json["data"].is_array()) return out;
  for (const auto& series : json["data"]) {
    const auto le = metrics::parse_exposition_float(series["seriesLabels"].value("le", ""));
    for (const auto& exemplar : series["exemplars"]) {
      out.push_back({.trace_id = exemplar["labels"].value("trace_id", ""),
                     .le = le.value_or(std::nan("")),
                     .value = std::stod(exemplar.value("value", "nan")),
                     .timestamp = exemplar.value("timestamp", 0.0)});
    }
  }
  return out;
}

// Tests that up's Prometheus stores the trace_id exemplars a target exposes (OpenMetrics only),
// each on its value's bucket, and stores each once however many times it scrapes it: the library
// keeps every exemplar's original timestamp.
TEST(MonitoringStackIntegrationTest, StoresTargetExemplarsOnce) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  Fixture f;
  metrics::Histogram h = f.target_registry
                             .histogram({{.name = "demo_request_duration_seconds", .help = "Latency."}, {0.1, 1}})
                             .with({});
  const std::map<std::string, double> traces = {{"4bf92f3577b34da6a3ce929d0e0e4736", 0.05},
                                                {"0af7651916cd43dd8448eb211c80319c", 0.5},
                                                {"b7ad6b7169203331b7ad6b7169203331", 3.0}};
  const auto observed_at = std::chrono::system_clock::now();
  for (const auto& [trace_id, seconds] : traces) h.observe_with_exemplar(seconds, {{"trace_id", trace_id}}, observed_at);
  auto stack = MonitoringStack::start(f.config, 1, {}, f.up_registry, f.sink());
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const std::string prom = (*stack)->prometheus_url();
  const std::string query = "demo_request_duration_seconds_bucket{job=\"sim\"}";
  std::vector<StoredExemplar> stored;
  ASSERT_TRUE(wait_until([&] { return (stored = query_exemplars(prom, query)).size() >= traces.size(); }, 30s))
      << "Prometheus stored " << stored.size() << " exemplars";
  // Several more scrapes of the unchanged exemplars must not add copies.
  ASSERT_TRUE(wait_until([&] { return query_value(prom, "count_over_time(up{job=\"sim\"}[1m])") >= 4.0; }, 30s));
  stored = query_exemplars(prom, query);
  ASSERT_EQ(stored.size(), traces.size());
  const double expected_ts = std::chrono::duration<double>(observed_at.time_since_epoch()).count();
  for (const StoredExemplar& e : stored) {
    ASSERT_TRUE(traces.count(e.trace_id)) << e.trace_id;
    const double seconds = traces.at(e.trace_id);
    EXPECT_EQ(e.value, seconds) << e.trace_id;
    EXPECT_EQ(e.le, seconds <= 0.1 ? 0.1 : seconds <= 1 ? 1.0 : INFINITY) << e.trace_id;
    EXPECT_NEAR(e.timestamp, expected_ts, 0.002) << e.trace_id;
  }
  (*stack)->stop();
}

// Tests that a config promtool rejects stops the start with promtool's message and starts nothing.
TEST(MonitoringStackIntegrationTest, PromtoolErrorStopsTheStart) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  Fixture f;
  auto stack = MonitoringStack::start(f.config, 1, {{"broken.yml", "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up ==\n"}},
                                      f.up_registry, f.sink());
  ASSERT_FALSE(stack.ok());
  EXPECT_NE(stack.error().message.find("promtool check config"), std::string::npos) << stack.error().message;
}

// Tests that --check's file check reports every tool's verdict and the written paths.
TEST(MonitoringStackIntegrationTest, CheckWritesAndValidatesFiles) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  Fixture f;
  f.config.remote_write.push_back("http://127.0.0.1:1/api/v1/write");
  auto report = check_generated_files(f.config, {.api = 9300, .alertmanager = 9093}, {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(std::filesystem::exists(report->files.prometheus_yml));
  EXPECT_TRUE(std::filesystem::exists(report->files.alertmanager_yml));
  ASSERT_GE(report->tool_output.size(), 1u);
  EXPECT_NE(report->tool_output[0].find("SUCCESS"), std::string::npos) << report->tool_output[0];
  f.config.agent = true;
  auto agent = check_generated_files(f.config, {.api = 9300}, {});
  ASSERT_TRUE(agent.ok()) << agent.error().message;
}

}  // namespace
}  // namespace inferscope::up
