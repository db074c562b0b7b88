// Tests of monitoring_stack.h against Debian's real Prometheus, Alertmanager and promtool on
// loopback ephemeral ports; the scrape target is the library's own MetricsServer.
#include "stack/monitoring_stack.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <inferscope/metrics/metrics_server.h>
#include <inferscope/metrics/registry.h>

#include <mutex>

#include "stack_test_support.h"

namespace inferscope::stack {
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
}  // namespace inferscope::stack
