// Integration test: Debian's `promtool check metrics` accepts inferscope's 0.0.4 exposition of a
// registry that uses every feature; OpenMetrics output is checked structurally (promtool only
// parses 0.0.4).
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/registry.h>

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>
#include <string>

#include "support/peers.h"
#include "support/promtool.h"

namespace inferscope::metrics {
namespace {

void fill_everything(Registry& registry) {
  auto& requests = registry.counter({.name = "app_requests_total",
                                     .help = "Requests \"handled\".\nSecond line with a \\ backslash.",
                                     .label_names = {"route", "code"},
                                     .max_series = 3});
  requests.with({"/v1/chat", "2xx"}).add(3);
  requests.with({"quote\" back\\slash\nnewline caf\xc3\xa9", "5xx"}).add(0.5);
  requests.with({"bad \xff utf8", "4xx"}).inc();  // invalid -> overflow
  for (int i = 0; i < 5; ++i) requests.with({"/r" + std::to_string(i), "2xx"}).inc();  // limit -> overflow
  requests.with({"/v1/chat", "2xx"}).add(-1);      // rejected
  auto& gauges = registry.gauge({.name = "app_queue_depth", .help = "Queue.", .label_names = {"queue"}});
  gauges.with({"nan"}).set(std::nan(""));
  gauges.with({"inf"}).set(INFINITY);
  gauges.with({"neg"}).set(-1e-300);
  registry.gauge({.name = "app_temperature_celsius", .help = "T.", .unit = "celsius"}).with({}).set(21.5);
  registry.gauge({.name = "app_empty_family", .help = "No series.", .label_names = {"x"}});
  HistogramOptions latency{
      {.name = "app_latency_seconds", .help = "Latency.", .label_names = {"stage"}, .unit = "seconds"},
      default_latency_buckets()};
  auto& histograms = registry.histogram(latency);
  for (double v : {0.0005, 0.02, 3.0, 100.0, -1.0}) histograms.with({"decode"}).observe(v);
  histograms.with({"prefill"}).observe(std::nan(""));
  registry.histogram({{.name = "app_vllm_style_seconds", .help = "Python-style le."}, {0.5, 1, 2}, true})
      .with({})
      .observe(1);
}

// Tests that promtool exits 0 (no parse error, no lint problem) on the 0.0.4 exposition.
TEST(PromtoolIntegrationTest, Text004PassesPromtool) {
  ASSERT_TRUE(testing::peers_installed({testing::kPromtool}));
  Registry registry;
  fill_everything(registry);
  std::string text;
  render(registry, ExpositionFormat::kPrometheusText004, text);
  ASSERT_NE(text.find("__overflow__"), std::string::npos);
  const auto result = testing::run_promtool_check_metrics(text);
  EXPECT_EQ(result.exit_code, 0) << result.output << "\n--- exposition ---\n" << text;
}

// Tests that promtool really fails on broken input, so the check above cannot pass vacuously.
TEST(PromtoolIntegrationTest, PromtoolRejectsBrokenText) {
  ASSERT_TRUE(testing::peers_installed({testing::kPromtool}));
  EXPECT_NE(testing::run_promtool_check_metrics("# HELP x a\nb\n# TYPE x gauge\nx 1\n").exit_code, 0);
}

// Tests OpenMetrics structure: # EOF once and last, every family's lines contiguous and after its
// TYPE, counters' TYPE without _total and samples with it.
TEST(PromtoolIntegrationTest, OpenMetricsStructure) {
  Registry registry;
  fill_everything(registry);
  std::string text;
  render(registry, ExpositionFormat::kOpenMetrics100, text);
  ASSERT_TRUE(text.ends_with("\n# EOF\n"));
  EXPECT_EQ(text.find("# EOF"), text.size() - 6);
  std::istringstream lines(text);
  std::string line;
  std::string current;  // family whose TYPE came last
  std::set<std::string> finished;
  while (std::getline(lines, line)) {
    if (line == "# EOF") break;
    ASSERT_FALSE(line.empty());
    ASSERT_EQ(line.find('\r'), std::string::npos);
    if (line.starts_with("# TYPE ")) {
      const std::string family = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_FALSE(family.ends_with("_total")) << line;
      EXPECT_TRUE(finished.insert(family).second) << "family repeated: " << family;
      current = family;
      continue;
    }
    if (line.starts_with("# HELP ") || line.starts_with("# UNIT ")) {
      const std::string family = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_FALSE(finished.contains(family) && family != current) << "metadata after samples: " << line;
      continue;
    }
    ASSERT_NE(line[0], '#') << line;
    ASSERT_FALSE(current.empty()) << "sample before any TYPE: " << line;
    EXPECT_TRUE(line.starts_with(current + "_") || line.starts_with(current + "{") || line.starts_with(current + " "))
        << "sample " << line << " outside its family " << current;
  }
}

}  // namespace
}  // namespace inferscope::metrics
