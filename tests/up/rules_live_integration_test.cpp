// Tests the generated rules against a real `inferscope serve` scraped by real Prometheus (1 s
// scrape and evaluation): the inferscope dialect and the vLLM dialect (serve's vllm:* family, as a
// second job on the same target) both produce their recorded series from the real exposition,
// no "latency metrics absent" alert fires on either, and an error_rate fault injected through
// serve's admin API fires InferscopeErrorRatioHigh, which resolves once the fault is cleared.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "alerts/rules_generator.h"
#include "net/blocking_client.h"
#include "stack_test_support.h"
#include "support/prometheus_process.h"
#include "support/test_process.h"

namespace inferscope::alerts {
namespace {

using dialect::DialectId;
using up::testing::query_value;
using up::testing::TempDir;
using up::testing::wait_until;
using namespace std::chrono_literals;

// inferscope_process describes the inferscope binary run with `args`, stdout and stderr to `log`.
inferscope::testing::ProcessOptions inferscope_process(std::vector<std::string> args,
                                                       const std::filesystem::path& log) {
  return {.binary = INFERSCOPE_BINARY, .args = std::move(args), .stdout_file = log, .stderr_file = log};
}

TEST(RulesLiveTest, RulesWorkOnRealServeExposition) {
  ASSERT_TRUE(up::testing::stack_binaries_installed());
  TempDir dir;
  inferscope::testing::TestProcess serve(inferscope_process(
      {"serve", "--port", "0", "--enable-admin", "--time-scale", "20", "--model", "m"}, dir.path() / "serve.log"));
  int port = 0;
  ASSERT_TRUE(wait_until(
      [&] {
        std::smatch m;
        const std::string text = serve.stdout_text();
        if (std::regex_search(text, m, std::regex(R"(listening on http://127\.0\.0\.1:(\d+))"))) port = std::stoi(m[1]);
        return port != 0;
      },
      15s))
      << serve.stdout_text();
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  inferscope::testing::TestProcess load(
      inferscope_process({"bench", "--base-url", base, "--request-rate", "20", "--duration", "90s",
                          "--random-input-len", "64", "--random-output-len", "16", "--timeout", "20s"},
                         dir.path() / "bench.log"));

  RulesConfig config;
  config.targets = {{"serve", DialectId::kInferscope}, {"serve-vllm", DialectId::kVllm}};
  config.evaluation_interval = 1s;
  config.rate_window = 5s;
  for (const char* alert : kTargetAlerts) config.alert_for[alert] = 0ms;
  auto rules = generate_rules(config);
  ASSERT_TRUE(rules) << rules.error().message;
  std::string prometheus_yml = "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n";
  for (const RuleFile& f : rules->files) {
    std::ofstream(dir.path() / f.name) << f.text;
    prometheus_yml += "  - " + (dir.path() / f.name).string() + "\n";
  }
  prometheus_yml += "scrape_configs:\n";
  for (const char* job : {"serve", "serve-vllm"}) {
    prometheus_yml += std::string("  - job_name: ") + job + "\n    static_configs:\n      - targets: ['127.0.0.1:" +
                      std::to_string(port) + "']\n";
  }
  inferscope::testing::PrometheusProcess prometheus(prometheus_yml);
  ASSERT_TRUE(prometheus.ok()) << prometheus.error();
  const std::string prom = prometheus.url();

  // Every recorded series the dashboard and alerts rely on exists for both dialects.
  for (const char* job : {"serve", "serve-vllm"}) {
    for (const char* series : {"inferscope:e2e_seconds:p99", "inferscope:ttft_seconds:p95",
                               "inferscope:tpot_seconds:p95", "inferscope:itl_seconds:p95", "inferscope:requests:rate",
                               "inferscope:generation_tokens:rate", "inferscope:waiting", "inferscope:kv_usage",
                               "inferscope:errors:ratio"}) {
      const std::string query = std::string(series) + "{job=\"" + job + "\",model=\"m\"}";
      EXPECT_TRUE(wait_until([&] { return query_value(prom, query).has_value(); }, 40s)) << query;
    }
    const std::string stage = std::string("inferscope:stage_seconds:mean{job=\"") + job + "\",stage=\"prefill\"}";
    EXPECT_TRUE(wait_until([&] { return query_value(prom, stage).has_value(); }, 20s)) << stage;
  }
  EXPECT_TRUE(query_value(prom, "inferscope:gpu_memory:ratio{job=\"serve\"}").has_value());
  EXPECT_GT(query_value(prom, "inferscope:requests:rate{job=\"serve\"}").value_or(0), 1);
  // The real expositions carry every expected latency family: no absent alert, no error alert.
  EXPECT_FALSE(query_value(prom, "ALERTS{alertname=\"InferscopeLatencyMetricsAbsent\"}").has_value());
  EXPECT_FALSE(query_value(prom, "ALERTS{alertname=\"InferscopeErrorRatioHigh\"}").has_value());

  auto set_fault = [&](const std::string& body) {
    auto reply = net::blocking_http_request("POST", base + "/admin/faults", body, "application/json");
    ASSERT_TRUE(reply) << reply.error().message;
    ASSERT_EQ(reply->status, 200) << reply->body;
  };
  set_fault(R"({"error_rate": 0.5})");
  const std::string firing = R"(ALERTS{alertname="InferscopeErrorRatioHigh",job="serve",model="m",alertstate="firing"})";
  EXPECT_TRUE(wait_until([&] { return query_value(prom, firing).has_value(); }, 30s))
      << "errors:ratio=" << query_value(prom, "inferscope:errors:ratio{job=\"serve\"}").value_or(-1);
  set_fault(R"({"error_rate": null})");
  EXPECT_TRUE(wait_until([&] { return !query_value(prom, firing).has_value(); }, 30s));
}

}  // namespace
}  // namespace inferscope::alerts
