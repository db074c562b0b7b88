// Unit tests of the errors family (causes_errors.cpp): more failing requests are error_spike with
// no latency change, named as server-side failures or as rejected (4xx) requests by what rose.
#include "doctor/diagnosis.h"

#include <gtest/gtest.h>

#include "doctor/diagnosis_support.h"

namespace inferscope::doctor {
namespace {

using namespace testing;

// Tests that a burst of 4xx at unchanged latency is error_spike, said to be rejected requests
// with the client-side next step first after the spec's, and that server errors are said as such.
TEST(ErrorsDiagnosisTest, RejectedRequestsAndServerErrorsAreNamedApart) {
  Snapshot rejected = steady();
  rejected.signals["client_error_rate"] = quantity(0.0, 1.0, 100, "req/s");
  rejected.signals["client_error_rate"].baseline = window(0, 0);
  Diagnosis d = run(rejected);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty());
  const Finding& f = d.findings.front();
  EXPECT_EQ(f.cause, "error_spike") << to_text(d);
  EXPECT_TRUE(f.stage.empty());
  EXPECT_EQ(f.summary.rfind("requests rejected with 4xx rose from 0% to 20%", 0), 0u) << f.summary;
  ASSERT_EQ(f.next_steps.size(), 3u);
  EXPECT_EQ(f.next_steps.back().rfind("Check what clients send now", 0), 0u) << f.next_steps.back();
  EXPECT_TRUE(d.headline.ends_with("; top cause error_spike")) << d.headline;

  Snapshot failing = steady();
  failing.signals["error_rate"] = quantity(0.0, 1.0, 100, "req/s");
  failing.signals["error_rate"].baseline = window(0, 0);
  Diagnosis e = run(failing);
  ASSERT_FALSE(e.findings.empty()) << to_text(e);
  EXPECT_EQ(e.findings.front().summary, "error ratio rose from 0% to 20% of requests") << to_text(e);
  EXPECT_EQ(e.findings.front().next_steps.back().rfind("Check recent deploys/config changes", 0), 0u);
}

}  // namespace
}  // namespace inferscope::doctor
