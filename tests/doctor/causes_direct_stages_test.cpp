// Unit tests of the direct stages family (causes_direct_stages.cpp): a slower stage of its own,
// with host CPU as its evidence, and a stage in front of the first token that multiplies TTFT.
#include "doctor/diagnosis.h"

#include <gtest/gtest.h>

#include "doctor/diagnosis_support.h"

namespace inferscope::doctor {
namespace {

using namespace testing;

// Tests that host CPU is evidence on the CPU-side cause, never a cause of its own: a slower
// preprocess on a saturated host carries the busy share and, first, the CPU next step; on an idle
// host the same finding shows the busy share only.
TEST(DiagnosisTest, HostCpuIsEvidenceOnCpuSideCauses) {
  Snapshot s = steady();
  s.latency["e2e"] = quantity(0.300, 0.450, 100, "s", 0.02);
  s.stages["preprocess"] = quantity(0.001, 0.151);
  s.signals["host_cpu_busy"] = quantity(0.30, 0.97, 100, "ratio");
  s.signals["host_cpu_busy"].metric = "node_cpu_seconds_total";
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty());
  const Finding& f = d.findings.front();
  EXPECT_EQ(f.cause, "preprocess_slowdown") << to_text(d);
  bool cpu_evidence = false;
  for (const auto& e : f.evidence) cpu_evidence |= e.metric.find("node_cpu_seconds_total") != std::string::npos;
  EXPECT_TRUE(cpu_evidence) << to_text(d);
  ASSERT_FALSE(f.next_steps.empty());
  EXPECT_NE(f.next_steps.front().find("CPUs are saturated"), std::string::npos) << to_text(d);
  for (const auto& other : d.findings) EXPECT_NE(other.cause, "host_cpu") << to_text(d);

  s.signals["host_cpu_busy"] = quantity(0.30, 0.35, 100, "ratio");
  Diagnosis idle = run(s);
  ASSERT_FALSE(idle.findings.empty());
  EXPECT_EQ(idle.findings.front().cause, "preprocess_slowdown");
  for (const auto& step : idle.findings.front().next_steps)
    EXPECT_EQ(step.find("CPUs are saturated"), std::string::npos) << to_text(idle);
}

// Tests that a stage in front of the first token that multiplies TTFT is degraded even while e2e,
// dominated by a long decode, stays within its own noise, that the finding names the symptom,
// and that a small stage doubling (a few ms on seconds) does not call the server degraded.
TEST(DiagnosisTest, TtftRegressionWithinE2eNoiseIsDegraded) {
  Snapshot s = steady();
  s.latency["e2e"] = quantity(3.000, 3.165, 100, "s", 0.3);  // +5.5 % inside a +-30 % spread
  s.latency["ttft"] = quantity(0.060, 0.225);                 // x3.75
  s.stages["preprocess"] = quantity(0.005, 0.170);
  s.stages["decode"] = quantity(2.940, 2.940);
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty());
  const Finding& top = d.findings.front();
  EXPECT_EQ(top.cause, "preprocess_slowdown") << to_text(d);
  EXPECT_EQ(top.stage, "preprocess");
  EXPECT_NE(top.summary.find("TTFT x3.8"), std::string::npos) << top.summary;
  EXPECT_NE(top.summary.find("e2e +5% (within its noise)"), std::string::npos) << top.summary;
  EXPECT_EQ(d.headline.rfind("degraded: TTFT x3.8", 0), 0u) << d.headline;

  Snapshot small = steady();
  small.latency["e2e"] = quantity(3.000, 3.010, 100, "s", 0.3);
  small.stages["queue"] = quantity(0.005, 0.015);  // x3, but 10 ms on a 3 s request
  small.stages["decode"] = quantity(2.945, 2.945);
  EXPECT_EQ(run(small).verdict, "healthy") << to_text(run(small));
}

// Tests a preprocess slowdown with long answers: +200 ms per request at 1 req/s with 8 s answers,
// where most requests finishing in the window started before the change, so preprocess per
// finished request rose only 90 ms, under the 2 % of e2e (160 ms) a stage needs; TTFT, observed at
// the first token, rose x5. The lagging stage is judged by the TTFT rise queue and prefill leave
// unexplained: preprocess_slowdown, not unexplained. A TTFT rise the prefill explains is not it.
TEST(DiagnosisTest, LaggingPreprocessShownByTtft) {
  Snapshot s = steady();
  s.latency["e2e"] = quantity(8.000, 8.090, 100, "s", 0.3);
  s.latency["ttft"] = quantity(0.055, 0.275);
  s.stages["preprocess"] = quantity(0.001, 0.091);
  s.stages["decode"] = quantity(7.945, 7.945);
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d, true);
  EXPECT_EQ(d.findings.front().cause, "preprocess_slowdown") << to_text(d, true);

  Snapshot prefill = s;
  prefill.stages["prefill"] = quantity(0.050, 0.270);
  prefill.stages["preprocess"] = quantity(0.001, 0.0025);
  EXPECT_FALSE(reports(run(prefill), "preprocess_slowdown")) << to_text(run(prefill), true);
}

}  // namespace
}  // namespace inferscope::doctor
