// Tests that Debian's promtool accepts everything ServeMetrics exposes (all dialects, legacy
// aliases, simulated GPU), apart from the two lints that exact compatibility forces on us.
#include "serve/serve_metrics.h"

#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/exposition_parser.h>

#include "support/peers.h"
#include "support/promtool.h"

namespace inferscope::serve {
namespace {

// full_exposition renders a registry holding every ServeMetrics family with data in it.
std::string full_exposition(metrics::ExpositionFormat format) {
  metrics::Registry registry;
  ServeMetricsOptions o;
  o.model_names = {"sim-8b", "sim-8b-alias"};
  o.dialects = {"inferscope", "vllm", "gen_ai"};
  o.vllm_legacy_aliases = true;
  ServeMetrics m(registry, o);
  m.set_engine_stats_source([] {
    EngineStats s;
    s.running = 2;
    s.kv_usage = 0.3;
    s.gpu_memory_total_bytes = 80e9;
    return s;
  });
  const auto t0 = timeline::Clock::now();
  timeline::RequestTimeline t(t0);
  t.mark(timeline::Moment::kPreprocessed, t0 + std::chrono::milliseconds(2));
  t.add_dependency("embedding", t0 + std::chrono::milliseconds(2), t0 + std::chrono::milliseconds(5));
  t.mark(timeline::Moment::kScheduled, t0 + std::chrono::milliseconds(6));
  t.add_output(t0 + std::chrono::milliseconds(20), 1);
  t.add_output(t0 + std::chrono::milliseconds(30), 2);
  t.set_prompt_tokens(100);
  t.finish(timeline::FinishReason::kLength, t0 + std::chrono::milliseconds(31));
  m.record_request(t, {"sim-8b", "/v1/chat/completions", 200, 3, 1});
  m.on_step(StepInfo{100, 1, 0.02, t0});
  std::string text;
  metrics::render(registry, format, text);
  return text;
}

// Tests that promtool finds nothing but the colon lint on vllm: names, the "_total" lint on vLLM's
// histogram vllm:iteration_tokens_total and the camelCase label lint on DCGM_FI_* names (DCGM's own
// `modelName` label), and that it parses the text (rc 0 or 3).
TEST(ServeMetricsIntegrationTest, PromtoolAcceptsExposition) {
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kPromtool}));
  const inferscope::testing::PromtoolResult result =
      inferscope::testing::run_promtool_check_metrics(full_exposition(metrics::ExpositionFormat::kPrometheusText004));
  ASSERT_TRUE(result.exit_code == 0 || result.exit_code == 3) << result.exit_code << "\n" << result.output;
  std::istringstream lines(result.output);
  std::string line;
  int colon_lints = 0;
  int iteration_tokens_lints = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    if (line.rfind("vllm:", 0) == 0 && line.ends_with(" metric names should not contain ':'")) {
      ++colon_lints;
      continue;
    }
    // vLLM's own name for a histogram (MetricOptions::foreign_name): the lint is vLLM's to fix.
    if (line == "vllm:iteration_tokens_total non-counter metrics should not have \"_total\" suffix") {
      ++iteration_tokens_lints;
      continue;
    }
    if (line.rfind("DCGM_FI_", 0) == 0 &&
        line.ends_with(" label names should be written in 'snake_case' not 'camelCase'")) {
      continue;
    }
    ADD_FAILURE() << "unexpected promtool finding: " << line;
  }
  EXPECT_GE(colon_lints, 15) << result.output;  // every dashboard metric at least
  EXPECT_EQ(iteration_tokens_lints, 1) << result.output;  // exposed, parsed, and only that lint
}

// Tests that the OpenMetrics rendering of the same registry parses and validates strictly.
TEST(ServeMetricsIntegrationTest, OpenMetricsParses) {
  const std::string text = full_exposition(metrics::ExpositionFormat::kOpenMetrics100);
  auto parsed = metrics::parse_exposition(text, metrics::ExpositionTextFormat::kOpenMetrics100);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const auto valid = metrics::validate_exposition(*parsed);
  EXPECT_TRUE(valid.ok()) << valid.error().message;
  EXPECT_NE(metrics::find_family(*parsed, "vllm:request_success"), nullptr);
}

}  // namespace
}  // namespace inferscope::serve
