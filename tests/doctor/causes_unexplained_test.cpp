// Unit tests of the unexplained family (causes_unexplained.cpp): a degraded verdict without a
// cause names what moved and what was ruled out, on e2e alone for a target without stages.
#include "doctor/diagnosis.h"

#include <gtest/gtest.h>

#include "doctor/diagnosis_support.h"

namespace inferscope::doctor {
namespace {

using namespace testing;

// Tests that a degraded verdict with no matching cause carries an `unexplained` finding that
// names the stage that moved, by how much, and the causes ruled out, in every format.
TEST(DiagnosisTest, DegradedWithoutCauseIsUnexplained) {
  Snapshot s = steady();
  s.latency["e2e"] = quantity(0.300, 0.600, 100, "s", 0.02);
  s.stages["queue"] = quantity(0.005, 0.305);  // nothing waits longer by any known mechanism
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_EQ(d.findings.size(), 1u) << to_text(d);
  const Finding& f = d.findings.front();
  EXPECT_EQ(f.cause, "unexplained");
  EXPECT_EQ(f.stage, "queue");
  EXPECT_NEAR(f.share, 1.0, 1e-6);
  EXPECT_NE(f.summary.find("queue per request moved most, 5.00 ms -> 305 ms (x61.0)"), std::string::npos) << f.summary;
  ASSERT_FALSE(d.considered.empty());
  const Considered* runner_up = &d.considered.front();
  for (const Considered& c : d.considered)
    if (c.score > runner_up->score) runner_up = &c;
  EXPECT_NE(f.summary.find("ruled out: " + runner_up->cause + " (score"), std::string::npos) << f.summary;
  EXPECT_NE(d.headline.find("no known cause fits (queue moved most)"), std::string::npos) << d.headline;
  EXPECT_EQ(to_json(d)["findings"].at(0)["cause"], "unexplained");
  EXPECT_NE(to_text(d).find("unexplained"), std::string::npos);
  // --explain lists considered[] in text output, strongest first, so the runner-up's loss shows.
  const std::string explained = to_text(d, true);
  const std::size_t list = explained.find("Considered and not reported (strongest first):");
  ASSERT_NE(list, std::string::npos) << explained;
  EXPECT_NE(explained.find(runner_up->cause + ": " + runner_up->reason, list), std::string::npos) << explained;
  EXPECT_EQ(to_text(d).find("Considered and not reported"), std::string::npos);
  EXPECT_NE(to_markdown(d).find("unexplained"), std::string::npos);
}

// Tests a target with e2e only (a hand-instrumented service, up's `kind: custom`): the slowdown
// is named on e2e with the load and token figures there are, and the note says that no stage
// breakdown exists for this target.
TEST(DiagnosisTest, E2eOnlyTargetIsNamedOnE2eWithLoadEvidence) {
  Snapshot s;
  s.source = "test";
  s.dialect = "custom";
  s.baseline_start = 0;
  s.baseline_end = 1800;
  s.incident_start = 1800;
  s.incident_end = 2100;
  s.latency["e2e"] = quantity(0.200, 0.800, 100, "s", 0.02);
  s.latency["e2e"].metric = "llm_request_latency_seconds";
  s.signals["request_rate"] = quantity(8, 8, 100, "req/s", 0.02);
  s.signals["request_rate"].metric = "llm_requests_total";
  s.signals["generation_token_rate"] = quantity(200, 200, 100, "tok/s", 0.02);
  s.signals["generation_token_rate"].metric = "llm_output_tokens_total";
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty()) << to_text(d);
  const Finding& f = d.findings.front();
  EXPECT_EQ(f.stage, "e2e") << to_text(d);
  std::string evidence;
  for (const Evidence& e : f.evidence) evidence += e.metric + "\n";
  EXPECT_NE(evidence.find("finished requests/s (rate of llm_requests_total)"), std::string::npos) << evidence;
  EXPECT_NE(evidence.find("output tokens/s (rate of llm_output_tokens_total)"), std::string::npos) << evidence;
  bool noted = false;
  for (const std::string& n : d.notes) noted = noted || n.starts_with(kNoStageBreakdownNote);
  EXPECT_TRUE(noted) << to_text(d);
  // A server with stages gets no such note.
  for (const std::string& n : run(steady()).notes) EXPECT_FALSE(n.starts_with(kNoStageBreakdownNote)) << n;
}

}  // namespace
}  // namespace inferscope::doctor
