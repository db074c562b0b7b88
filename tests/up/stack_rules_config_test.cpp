// Tests of stack_rules_config.h: up's config mapped onto the rules generator's config.
#include "up/stack_rules_config.h"

#include <gtest/gtest.h>

namespace inferscope::up {
namespace {

using dialect::DialectId;
using namespace std::chrono_literals;

// Tests the mapping from up's config: kinds to dialects, thresholds, `for` overrides, windows.
TEST(StackRulesConfigTest, FromStackConfig) {
  config::StackConfig stack;
  stack.targets.resize(2);
  stack.targets[0].name = "v";
  stack.targets[0].kind = "vllm";
  stack.targets[1].name = "x";  // kind stays "auto": not detected
  stack.slo.ttft_p95_seconds = 1.5;
  stack.alert_for[alerts::kKvCacheFull] = 30s;
  stack.scrape_interval = 1s;
  stack.evaluation_interval = 1s;
  const alerts::RulesConfig config = rules_config_from(stack);
  ASSERT_EQ(config.targets.size(), 2u);
  EXPECT_EQ(config.targets[0].dialect, DialectId::kVllm);
  EXPECT_EQ(config.targets[1].dialect, std::nullopt);
  EXPECT_EQ(config.slo.ttft_p95_seconds, 1.5);
  EXPECT_EQ(config.alert_for.at(alerts::kKvCacheFull), 30s);
  EXPECT_EQ(config.evaluation_interval, 1s);
  EXPECT_EQ(config.rate_window, 12s);
  EXPECT_EQ(rate_window_for(5s), 1min);
  EXPECT_EQ(rate_window_for(30s), 5min);
  EXPECT_EQ(rate_window_for(100ms), 10s);
}

// Tests that the config's alert windows reach the rules config and unset ones keep the rules' 1h / 15m / 24h.
TEST(StackRulesConfigTest, AlertWindows) {
  auto c = config::parse_stack_config("targets: [{url: http://127.0.0.1:8000}]\n"
                                      "alerts: {throughput_baseline_offset: 30s, notification_window: 20s, "
                                      "feature_baseline_offset: 2m}\n",
                                      "t.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const alerts::RulesConfig rules = rules_config_from(*c);
  EXPECT_EQ(rules.throughput_baseline_offset, 30s);
  EXPECT_EQ(rules.notification_window, 20s);
  EXPECT_EQ(rules.feature_baseline_offset, 2min);
  auto plain = config::parse_stack_config("targets: [{url: http://127.0.0.1:8000}]\n", "t.yaml");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(rules_config_from(*plain).throughput_baseline_offset, alerts::RulesConfig{}.throughput_baseline_offset);
  EXPECT_EQ(rules_config_from(*plain).notification_window, alerts::RulesConfig{}.notification_window);
  EXPECT_EQ(rules_config_from(*plain).feature_baseline_offset, 24h);
}

}  // namespace
}  // namespace inferscope::up
