// Unit tests of the data presence family (causes_data_presence.cpp): empty is never healthy,
// missing metrics and down targets are findings before any latency is compared.
#include "doctor/diagnosis.h"

#include <gtest/gtest.h>

#include "doctor/diagnosis_support.h"

namespace inferscope::doctor {
namespace {

using namespace testing;

// Tests that empty is never healthy: no e2e metric, too few requests, missing roles, all targets down.
TEST(DiagnosisTest, EmptyIsNotHealthy) {
  Snapshot none = steady();
  none.latency.clear();
  none.stages.clear();
  EXPECT_EQ(run(none).verdict, "no_data");

  Snapshot few = steady();
  few.latency["e2e"].incident.count = 2;
  few.signals["running"].incident.mean = 0;
  EXPECT_EQ(run(few).verdict, "no_data");

  Snapshot missing = steady();
  missing.missing = {"ttft (inferscope_time_to_first_token_seconds)"};
  Diagnosis m = run(missing);
  EXPECT_EQ(m.verdict, "no_data");
  ASSERT_FALSE(m.findings.empty());
  EXPECT_EQ(m.findings.front().cause, "metrics_missing");

  Snapshot down = steady();
  down.targets_total = 1;
  down.targets_down = {"serve/127.0.0.1:1: connection refused"};
  Diagnosis t = run(down);
  EXPECT_EQ(t.verdict, "no_data");
  ASSERT_FALSE(t.findings.empty());
  EXPECT_EQ(t.findings.front().cause, "target_down");
}

// Tests that metrics missing beside a slowdown with no strong cause are the top finding without
// being named in the headline as its cause (they say nothing of what slowed), while a down
// target is named.
TEST(DataPresenceDiagnosisTest, MissingMetricsAreNotNamedAsTheSlowdownsCause) {
  Snapshot s = steady();
  s.latency["e2e"] = quantity(0.300, 0.600, 100, "s", 0.02);
  s.stages["queue"] = quantity(0.005, 0.305);
  s.signals["request_rate"] = quantity(5, 6.5, 100, "req/s", 0.02);  // a little more load: a weak cause
  s.missing = {"ttft (inferscope_time_to_first_token_seconds)", "tpot (inferscope_time_per_output_token_seconds)"};
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().cause, "metrics_missing") << to_text(d);
  EXPECT_EQ(d.headline, "degraded: mean e2e 300 ms -> 600 ms (+100%)") << to_text(d);

  s.missing.clear();
  s.targets_total = 2;
  s.targets_down = {"serve/10.0.0.2:8000: connection refused"};
  Diagnosis down = run(s);
  ASSERT_FALSE(down.findings.empty());
  EXPECT_EQ(down.findings.front().cause, "target_down") << to_text(down);
  EXPECT_EQ(down.headline, "degraded: mean e2e 300 ms -> 600 ms (+100%); top cause target_down") << to_text(down);
}

}  // namespace
}  // namespace inferscope::doctor
