// Tests for include/inferscope/metrics/registry.h: registration validation and collect hooks.
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/registry.h>

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace inferscope::metrics {
namespace {

// Tests that foreign_name lets another system's histogram keep its "_total" name (vLLM's
// vllm:iteration_tokens_total), renders it under that name in both formats, and still enforces
// the other rules.
TEST(RegistryTest, ForeignNameAllowsHistogramEndingInTotal) {
  Registry registry;
  HistogramOptions o{{.name = "vllm:iteration_tokens_total", .help = "Histogram of number of tokens per engine_step."},
                     {1, 8, 16}};
  EXPECT_THROW(registry.histogram(o), std::invalid_argument);  // our own rule, without the escape
  o.foreign_name = true;
  registry.histogram(o).with({}).observe(9);
  std::string text;
  render(registry, ExpositionFormat::kPrometheusText004, text);
  EXPECT_NE(text.find("# TYPE vllm:iteration_tokens_total histogram\n"), std::string::npos) << text;
  EXPECT_NE(text.find("vllm:iteration_tokens_total_bucket{le=\"16\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("vllm:iteration_tokens_total_count 1\n"), std::string::npos) << text;
  text.clear();
  render(registry, ExpositionFormat::kOpenMetrics100, text);
  EXPECT_NE(text.find("vllm:iteration_tokens_total_count 1\n"), std::string::npos) << text;
  EXPECT_THROW(registry.histogram(o), std::invalid_argument);  // still a duplicate
  HistogramOptions reserved{{.name = "x_sum", .help = "h", .foreign_name = true}, {1}};
  EXPECT_THROW(registry.histogram(reserved), std::invalid_argument);  // reserved suffix still refused
  EXPECT_THROW(registry.counter({.name = "c", .help = "h", .foreign_name = true}), std::invalid_argument);
}

// Tests that every documented registration misuse throws std::invalid_argument.
TEST(RegistryTest, RegistrationErrorsThrow) {
  Registry registry;
  const auto counter = [&](MetricOptions o) { registry.counter(o); };
  const auto gauge = [&](MetricOptions o) { registry.gauge(o); };
  EXPECT_THROW(counter({.name = "requests", .help = "h"}), std::invalid_argument);        // no _total
  EXPECT_THROW(counter({.name = "_total", .help = "h"}), std::invalid_argument);          // empty base
  EXPECT_THROW(gauge({.name = "g_total", .help = "h"}), std::invalid_argument);           // _total
  EXPECT_THROW(gauge({.name = "1g", .help = "h"}), std::invalid_argument);                // bad start
  EXPECT_THROW(gauge({.name = "g-x", .help = "h"}), std::invalid_argument);               // bad char
  EXPECT_THROW(gauge({.name = "", .help = "h"}), std::invalid_argument);
  EXPECT_THROW(gauge({.name = "g_count", .help = "h"}), std::invalid_argument);           // reserved
  EXPECT_THROW(gauge({.name = "g_bucket", .help = "h"}), std::invalid_argument);
  EXPECT_THROW(counter({.name = "c_sum_total", .help = "h"}), std::invalid_argument);
  EXPECT_THROW(gauge({.name = "g", .help = "h", .label_names = {"__x"}}), std::invalid_argument);
  EXPECT_THROW(gauge({.name = "g", .help = "h", .label_names = {"a-b"}}), std::invalid_argument);
  EXPECT_THROW(gauge({.name = "g", .help = "h", .label_names = {"le"}}), std::invalid_argument);
  EXPECT_THROW(gauge({.name = "g", .help = "h", .label_names = {"quantile"}}), std::invalid_argument);
  EXPECT_THROW(gauge({.name = "g", .help = "h", .label_names = {"a", "a"}}), std::invalid_argument);
  EXPECT_THROW(gauge({.name = "g", .help = "bad \xff utf8"}), std::invalid_argument);
  EXPECT_THROW(gauge({.name = "g_bytes", .help = "h", .unit = "seconds"}), std::invalid_argument);
  EXPECT_THROW(gauge({.name = "inferscope_metrics_series_dropped", .help = "h"}), std::invalid_argument);
  EXPECT_NO_THROW(gauge({.name = "g_seconds", .help = "h", .unit = "seconds"}));
  EXPECT_NO_THROW(counter({.name = "c_seconds_total", .help = "h", .unit = "seconds"}));
  EXPECT_NO_THROW(gauge({.name = "vllm:num_requests_running", .help = "h"}));
}

// Tests that names clashing in the exposition are refused: duplicates and generated names.
TEST(RegistryTest, ClashingNamesThrow) {
  Registry registry;
  registry.counter({.name = "x_total", .help = "h"});
  EXPECT_THROW(registry.counter({.name = "x_total", .help = "h"}), std::invalid_argument);
  EXPECT_THROW(registry.gauge({.name = "x", .help = "h"}), std::invalid_argument);  // OM family "x"
  registry.histogram({{.name = "lat", .help = "h"}, {1}});
  EXPECT_THROW(registry.gauge({.name = "lat", .help = "h"}), std::invalid_argument);
  EXPECT_THROW(registry.counter({.name = "lat_total", .help = "h"}), std::invalid_argument);  // OM "lat"
}

// Tests that bucket bounds must be finite and strictly increasing.
TEST(RegistryTest, BadBucketsThrow) {
  Registry registry;
  const auto histogram = [&](std::vector<double> buckets) {
    registry.histogram({{.name = "h", .help = "h"}, std::move(buckets)});
  };
  EXPECT_THROW(histogram({1, 1}), std::invalid_argument);
  EXPECT_THROW(histogram({2, 1}), std::invalid_argument);
  EXPECT_THROW(histogram({1, INFINITY}), std::invalid_argument);
  EXPECT_THROW(histogram({std::nan("")}), std::invalid_argument);
  EXPECT_NO_THROW(histogram({-1, 0, 1}));
}

// Tests that zero limits are refused.
TEST(RegistryTest, ZeroLimitsThrow) {
  EXPECT_THROW(Registry(RegistryOptions{.max_series_per_family = 0}), std::invalid_argument);
  EXPECT_THROW(Registry(RegistryOptions{.max_series_total = 0}), std::invalid_argument);
}

// Tests that collect hooks run before each render and can update gauges.
TEST(RegistryTest, CollectHooksRunBeforeRender) {
  Registry registry;
  Gauge g = registry.gauge({.name = "scrapes", .help = "h"}).with({});
  int runs = 0;
  registry.add_collect_hook([&] { g.set(++runs); });
  std::string out;
  render(registry, ExpositionFormat::kPrometheusText004, out);
  render(registry, ExpositionFormat::kPrometheusText004, out);
  EXPECT_EQ(runs, 2);
  EXPECT_NE(out.find("scrapes 1\n"), std::string::npos);
  EXPECT_NE(out.find("scrapes 2\n"), std::string::npos);
}

// Tests that unlabelled families are exported from registration on, at zero.
TEST(RegistryTest, UnlabelledFamiliesAreAlwaysExported) {
  Registry registry;
  registry.counter({.name = "c_total", .help = "h"});
  registry.histogram({{.name = "h", .help = "h"}, {1}});
  std::string out;
  render(registry, ExpositionFormat::kPrometheusText004, out);
  EXPECT_NE(out.find("c_total 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("h_bucket{le=\"+Inf\"} 0\nh_sum 0\nh_count 0\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace inferscope::metrics
