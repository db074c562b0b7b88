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

// all_rejected is steady() where every request is refused with 4xx in both windows (a model name
// that does not exist, since before the baseline): the time to refuse is the e2e, nothing has a
// first token, and the collector reports TTFT and TPOT missing.
Snapshot all_rejected() {
  Snapshot s = steady();
  s.latency.erase("ttft");
  s.latency.erase("tpot");
  s.latency.erase("itl");
  s.stages.clear();
  s.latency["e2e"] = quantity(0.002, 0.002, 100, "s", 0.02);
  s.signals["client_error_rate"] = quantity(5, 5, 100, "req/s");
  s.missing = {"ttft (inferscope_time_to_first_token_seconds)", "tpot (inferscope_time_per_output_token_seconds)"};
  return s;
}

// Tests that every request rejected before and after is a finding that says so, ranked above the
// missing metrics, and the verdict degraded (never no_data while requests are counted).
TEST(ErrorsDiagnosisTest, EveryRequestRejectedWithoutAChange) {
  Diagnosis d = run(all_rejected());
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  const Finding& f = d.findings.front();
  EXPECT_EQ(f.cause, "error_spike") << to_text(d);
  EXPECT_EQ(f.summary, "every request (100 in the window) is rejected with 4xx (baseline 100%)");
  EXPECT_EQ(f.next_steps.front().rfind("Check what clients send now against what the server accepts", 0), 0u);
  EXPECT_NE(f.next_steps.back().find("No request succeeds"), std::string::npos);
  EXPECT_EQ(d.headline, "degraded: every request (100 in the window) is rejected with 4xx (baseline 100%); top cause "
                        "error_spike");
  EXPECT_TRUE(reports(d, "metrics_missing")) << to_text(d);

  // No e2e observation at all (a server that counts refused requests but times none): the
  // failures are weighed on their own.
  Snapshot untimed = all_rejected();
  untimed.latency.clear();
  Diagnosis u = run(untimed);
  EXPECT_EQ(u.verdict, "degraded") << to_text(u);
  ASSERT_FALSE(u.findings.empty());
  EXPECT_EQ(u.findings.front().cause, "error_spike") << to_text(u);
  Snapshot unfinished = all_rejected();
  unfinished.latency["e2e"] = quantity(0.002, 0.002, 0);
  Diagnosis w = run(unfinished);
  EXPECT_EQ(w.verdict, "degraded") << to_text(w);
}

// Tests the absolute bounds: a steady 30 % of server-side failures is a finding ("fails inside
// the server"), a steady 10 % of 4xx (clients sending what must be refused) is not, and five
// failures or fewer say nothing of a ratio.
TEST(ErrorsDiagnosisTest, FailingShareBadInAbsoluteTerms) {
  Snapshot failing = steady();
  failing.signals["error_rate"] = quantity(1.5, 1.5, 100, "req/s");
  Diagnosis d = run(failing);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  EXPECT_EQ(d.findings.front().summary, "30% of requests (30 in the window) fails inside the server (baseline 30%)");

  Snapshot refused = steady();
  refused.signals["client_error_rate"] = quantity(0.5, 0.5, 100, "req/s");
  Diagnosis r = run(refused);
  EXPECT_EQ(r.verdict, "healthy") << to_text(r);

  Snapshot few = all_rejected();
  few.signals["request_rate"] = quantity(5, 5, 4, "req/s");
  few.signals["client_error_rate"] = quantity(5, 5, 4, "req/s");
  few.latency["e2e"] = quantity(0.002, 0.002, 4);
  EXPECT_EQ(run(few).verdict, "no_data") << to_text(run(few));
}

}  // namespace
}  // namespace inferscope::doctor
