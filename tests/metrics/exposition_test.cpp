// Tests for the rendering half of include/inferscope/metrics/exposition.h: byte-exact golden
// outputs in Prometheus text 0.0.4 and OpenMetrics 1.0.0.
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/registry.h>

#include <gtest/gtest.h>

#include <string>

namespace inferscope::metrics {
namespace {

// fill registers one family of each kind with escapes, units, labels and an empty family.
void fill(Registry& registry) {
  auto& requests = registry.counter({.name = "app_requests_total",
                                     .help = "Requests \"handled\".\nBy route; C:\\path",
                                     .label_names = {"route", "code"}});
  requests.with({"/v1/chat", "2xx"}).add(3);
  requests.with({"a\"b\\c\nd", "5xx"}).add(0.5);
  registry.gauge({.name = "app_temperature_celsius", .help = "Temperature.", .unit = "celsius"})
      .with({})
      .set(21.5);
  Histogram decode = registry
                         .histogram({{.name = "app_latency_seconds",
                                      .help = "Latency.",
                                      .label_names = {"stage"},
                                      .unit = "seconds"},
                                     {0.005, 0.5, 1, 2.5e6}})
                         .with({"decode"});
  decode.observe(0.001);
  decode.observe(0.75);
  decode.observe(4e6);
  registry.gauge({.name = "app_idle", .help = "Never set.", .label_names = {"x"}});
}

// Tests the whole 0.0.4 exposition byte for byte.
TEST(ExpositionTest, PrometheusText004Golden) {
  Registry registry;
  fill(registry);
  std::string out;
  render(registry, ExpositionFormat::kPrometheusText004, out);
  EXPECT_EQ(out,
            "# HELP inferscope_metrics_series_dropped_total Label sets refused by Family::with() and sent to "
            "the overflow series, by family and reason.\n"
            "# TYPE inferscope_metrics_series_dropped_total counter\n"
            "# HELP inferscope_metrics_values_rejected_total Values ignored by Counter::add (negative or NaN) "
            "and Histogram::observe (NaN), and exemplars dropped for invalid labels, by family.\n"
            "# TYPE inferscope_metrics_values_rejected_total counter\n"
            "# HELP app_requests_total Requests \"handled\".\\nBy route; C:\\\\path\n"
            "# TYPE app_requests_total counter\n"
            "app_requests_total{route=\"/v1/chat\",code=\"2xx\"} 3\n"
            "app_requests_total{route=\"a\\\"b\\\\c\\nd\",code=\"5xx\"} 0.5\n"
            "# HELP app_temperature_celsius Temperature.\n"
            "# TYPE app_temperature_celsius gauge\n"
            "app_temperature_celsius 21.5\n"
            "# HELP app_latency_seconds Latency.\n"
            "# TYPE app_latency_seconds histogram\n"
            "app_latency_seconds_bucket{stage=\"decode\",le=\"0.005\"} 1\n"
            "app_latency_seconds_bucket{stage=\"decode\",le=\"0.5\"} 1\n"
            "app_latency_seconds_bucket{stage=\"decode\",le=\"1\"} 2\n"
            "app_latency_seconds_bucket{stage=\"decode\",le=\"2.5e+06\"} 2\n"
            "app_latency_seconds_bucket{stage=\"decode\",le=\"+Inf\"} 3\n"
            "app_latency_seconds_sum{stage=\"decode\"} 4000000.751\n"
            "app_latency_seconds_count{stage=\"decode\"} 3\n"
            "# HELP app_idle Never set.\n"
            "# TYPE app_idle gauge\n");
}

// Tests the whole OpenMetrics exposition byte for byte: family names without _total, UNIT, HELP
// escaping of quotes, canonical le, # EOF.
TEST(ExpositionTest, OpenMetrics100Golden) {
  Registry registry;
  fill(registry);
  std::string out;
  render(registry, ExpositionFormat::kOpenMetrics100, out);
  EXPECT_EQ(out,
            "# HELP inferscope_metrics_series_dropped Label sets refused by Family::with() and sent to "
            "the overflow series, by family and reason.\n"
            "# TYPE inferscope_metrics_series_dropped counter\n"
            "# HELP inferscope_metrics_values_rejected Values ignored by Counter::add (negative or NaN) "
            "and Histogram::observe (NaN), and exemplars dropped for invalid labels, by family.\n"
            "# TYPE inferscope_metrics_values_rejected counter\n"
            "# HELP app_requests Requests \\\"handled\\\".\\nBy route; C:\\\\path\n"
            "# TYPE app_requests counter\n"
            "app_requests_total{route=\"/v1/chat\",code=\"2xx\"} 3\n"
            "app_requests_total{route=\"a\\\"b\\\\c\\nd\",code=\"5xx\"} 0.5\n"
            "# HELP app_temperature_celsius Temperature.\n"
            "# TYPE app_temperature_celsius gauge\n"
            "# UNIT app_temperature_celsius celsius\n"
            "app_temperature_celsius 21.5\n"
            "# HELP app_latency_seconds Latency.\n"
            "# TYPE app_latency_seconds histogram\n"
            "# UNIT app_latency_seconds seconds\n"
            "app_latency_seconds_bucket{stage=\"decode\",le=\"0.005\"} 1\n"
            "app_latency_seconds_bucket{stage=\"decode\",le=\"0.5\"} 1\n"
            "app_latency_seconds_bucket{stage=\"decode\",le=\"1.0\"} 2\n"
            "app_latency_seconds_bucket{stage=\"decode\",le=\"2.5e+06\"} 2\n"
            "app_latency_seconds_bucket{stage=\"decode\",le=\"+Inf\"} 3\n"
            "app_latency_seconds_sum{stage=\"decode\"} 4000000.751\n"
            "app_latency_seconds_count{stage=\"decode\"} 3\n"
            "# HELP app_idle Never set.\n"
            "# TYPE app_idle gauge\n"
            "# EOF\n");
}

// Tests the vllm: dialect: decimal_le prints Python-style le in 0.0.4 too.
TEST(ExpositionTest, DecimalLeDialect) {
  Registry registry;
  registry.histogram({{.name = "vllm:e2e_request_latency_seconds", .help = "E2E."}, {0.3, 1, 2.5, 20}, true});
  std::string out;
  render(registry, ExpositionFormat::kPrometheusText004, out);
  EXPECT_NE(out.find("vllm:e2e_request_latency_seconds_bucket{le=\"0.3\"} 0\n"
                     "vllm:e2e_request_latency_seconds_bucket{le=\"1.0\"} 0\n"
                     "vllm:e2e_request_latency_seconds_bucket{le=\"2.5\"} 0\n"
                     "vllm:e2e_request_latency_seconds_bucket{le=\"20.0\"} 0\n"
                     "vllm:e2e_request_latency_seconds_bucket{le=\"+Inf\"} 0\n"),
            std::string::npos)
      << out;
}

// Tests that series print in creation order, families in registration order, overflow last.
TEST(ExpositionTest, DeterministicOrder) {
  Registry registry;
  auto& b = registry.gauge({.name = "b", .help = "h", .label_names = {"k"}, .max_series = 2});
  registry.gauge({.name = "a", .help = "h"});
  b.with({"z"}).set(1);
  b.with({"zz"}).set(1);  // family full from here on
  b.with({"m"}).set(2);
  std::string out;
  render(registry, ExpositionFormat::kPrometheusText004, out);
  EXPECT_NE(out.find("# TYPE b gauge\nb{k=\"z\"} 1\nb{k=\"zz\"} 1\nb{k=\"__overflow__\"} 2\n# HELP a h\n"),
            std::string::npos)
      << out;
}

// Tests that OpenMetrics omits _sum for histograms with negative thresholds (the sum is then no
// counter), while 0.0.4 keeps it.
TEST(ExpositionTest, NegativeThresholdsDropSumInOpenMetrics) {
  Registry registry;
  registry.histogram({{.name = "delta", .help = "h"}, {-1, 0, 1}}).with({}).observe(-0.5);
  std::string om;
  render(registry, ExpositionFormat::kOpenMetrics100, om);
  EXPECT_EQ(om.find("delta_sum"), std::string::npos) << om;
  EXPECT_NE(om.find("delta_count 1\n"), std::string::npos) << om;
  std::string text;
  render(registry, ExpositionFormat::kPrometheusText004, text);
  EXPECT_NE(text.find("delta_sum -0.5\n"), std::string::npos) << text;
}

// Tests that render appends rather than overwrites.
TEST(ExpositionTest, RenderAppends) {
  Registry registry;
  std::string out = "prefix\n";
  render(registry, ExpositionFormat::kPrometheusText004, out);
  EXPECT_TRUE(out.starts_with("prefix\n# HELP "));
}

}  // namespace
}  // namespace inferscope::metrics
