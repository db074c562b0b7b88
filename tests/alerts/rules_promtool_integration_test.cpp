// Tests the generated rule files with Debian's promtool: `check rules` on every file, and
// `promtool test rules` for every alert of every dialect: synthetic series in each dialect's own
// names drive the alert; it must not fire on a spike shorter than its `for`, fire after a
// sustained condition with the right labels and annotations, and resolve when the condition ends.
#include "alerts/rules_generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "alerts/rule_scenarios.h"
#include "dialect/promql.h"
#include "support/peers.h"
#include "support/promtool_run.h"

namespace inferscope::alerts {
namespace {

using namespace rule_scenarios;
using inferscope::testing::run_promtool;

class RulesPromtoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kPromtool}));
    char pattern[] = "/tmp/inferscope-rules-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ + "/" + name) << text; }
  std::string dir_;
};

// Tests that `promtool check rules` accepts every generated file of every dialect (default
// config and the short test config), with no lint finding.
TEST_F(RulesPromtoolTest, CheckRulesAcceptsEveryFile) {
  for (const RulesConfig& base : {RulesConfig{}, test_config()}) {
    RulesConfig config = base;
    for (DialectId id : dialect::kAllDialects) config.targets.push_back({"t-" + std::string(dialect::to_string(id)), id});
    config.targets.push_back({"t-unknown", std::nullopt});
    // A custom target mapping every mappable role (each with its own unit's spelling).
    config.targets.push_back({"t-custom", DialectId::kCustom, every_role_mapped()});
    auto rules = generate_rules(config);
    ASSERT_TRUE(rules) << rules.error().message;
    for (const RuleFile& f : rules->files) {
      write(f.name, f.text);
      const auto result = run_promtool({"check", "rules", "--lint-fatal", f.name}, dir_);
      EXPECT_EQ(result.exit_code, 0) << f.name << ":\n" << result.output;
      EXPECT_NE(result.output.find("SUCCESS"), std::string::npos) << result.output;
    }
  }
}

// Tests every alert of every dialect with `promtool test rules` (fires after `for`, not on a
// shorter spike, resolves, labels and annotations as expected).
TEST_F(RulesPromtoolTest, EveryAlertOfEveryDialectFiresAndResolves) {
  std::size_t tested = 0;
  for (DialectId id : dialect::kAllDialects) {
    const Target target{id, "t-" + std::string(dialect::to_string(id))};
    RulesConfig config = test_config();
    config.targets = {{target.job, id}};
    auto rules = generate_rules(config);
    ASSERT_TRUE(rules) << rules.error().message;
    const RuleFile& file = rules->files.at(1);
    write(file.name, file.text);
    const std::string tests = dialect_alert_tests(target, file, tested);
    ASSERT_FALSE(tests.empty()) << "an alert of " << target.job << " has no scenario";
    const std::string test_name = "test-" + target.job + ".yml";
    write(test_name, promtool_test_file(file.name, tests));
    const auto result = run_promtool({"test", "rules", test_name}, dir_);
    EXPECT_EQ(result.exit_code, 0) << target.job << ":\n" << result.output;
  }
  EXPECT_GE(tested, 50u);
}

// Tests the common file: the watchdog always fires; relay failures fire and resolve.
TEST_F(RulesPromtoolTest, CommonAlerts) {
  RulesConfig config = test_config();
  auto rules = generate_rules(config);
  ASSERT_TRUE(rules);
  write(rules->files[0].name, rules->files[0].text);
  write("test-common.yml", promtool_test_file(rules->files[0].name, common_alert_tests()));
  const auto result = run_promtool({"test", "rules", "test-common.yml"}, dir_);
  EXPECT_EQ(result.exit_code, 0) << result.output;
}

// Tests the lazy guard: an inferscope target that never served a request has no latency series
// yet; that is not "metrics absent". Like `inferscope serve`, it exposes its outcome counters at 0
// from the start, so the guard must look at the counter's value, not only at its presence.
TEST_F(RulesPromtoolTest, IdleInferscopeTargetIsNotMissingMetrics) {
  RulesConfig config = test_config();
  config.targets = {{"t-idle", DialectId::kInferscope}};
  auto rules = generate_rules(config);
  ASSERT_TRUE(rules);
  write(rules->files[1].name, rules->files[1].text);
  const Target target{DialectId::kInferscope, "t-idle"};
  const MetricBinding& requests = *dialect::find_binding(target.id, Role::kRequests);
  Scenario idle{kLatencyMetricsAbsent,
                {up_series(target, [](int) { return false; }),
                 counter(std::string(requests.metric), target.series_labels(requests), [](int) { return 0.0; })},
                {{"10m", false}, {"29m", false}}, {}, {}};
  write("test-idle.yml", promtool_test_file(rules->files[1].name, render_scenario(idle)));
  const auto result = run_promtool({"test", "rules", "test-idle.yml"}, dir_);
  EXPECT_EQ(result.exit_code, 0) << result.output;
}

// Tests the queue target's file: promtool check rules, and every queue alert fires after its
// `for`, not on a shorter spike, resolves, with the expected labels and annotations (the eviction
// alert and the exporter's part of the down alert on the exporter's job q-redis); none is lacking.
TEST_F(RulesPromtoolTest, QueueAlertsFireAndResolve) {
  for (const RulesConfig& base : {RulesConfig{}, test_config()}) {
    RulesConfig config = base;
    config.queue_jobs = {kQueueJob};
    auto rules = generate_rules(config);
    ASSERT_TRUE(rules) << rules.error().message;
    ASSERT_EQ(rules->files.size(), 2u);
    const RuleFile& file = rules->files[1];
    EXPECT_EQ(file.name, "queue-q.rules.yml");
    write(file.name, file.text);
    const auto check = run_promtool({"check", "rules", "--lint-fatal", file.name}, dir_);
    EXPECT_EQ(check.exit_code, 0) << check.output;
    EXPECT_TRUE(rules->lacking[kQueueJob].empty());
    for (const char* alert : kQueueAlerts) {
      EXPECT_NE(file.text.find(std::string("- alert: ") + alert + "\n"), std::string::npos) << alert;
    }
  }
  RulesConfig config = test_config();
  config.queue_jobs = {kQueueJob};
  auto rules = generate_rules(config);
  ASSERT_TRUE(rules);
  write(rules->files[1].name, rules->files[1].text);
  write("test-queue.yml", promtool_test_file(rules->files[1].name, queue_alert_tests()));
  const auto result = run_promtool({"test", "rules", "test-queue.yml"}, dir_);
  EXPECT_EQ(result.exit_code, 0) << result.output;
}

}  // namespace
}  // namespace inferscope::alerts
