// Unit tests of the stalls family (causes_stalls.cpp): worker_stall from steps that stop, from
// requests waiting beside free slots and from gaps between steps; no stall from late scrapes,
// long prompts or bursts; requests that stop finishing while work is pending.
#include "doctor/diagnosis.h"

#include <gtest/gtest.h>

#include "doctor/diagnosis_support.h"

namespace inferscope::doctor {
namespace {

using namespace testing;

// Tests that requests that stop finishing while work is pending read as a stall, not as no data.
TEST(DiagnosisTest, NothingFinishesWhileWorkIsPending) {
  Snapshot s = steady();
  s.latency["e2e"].incident = window(kNaN, 0);
  s.signals["waiting"].incident = window(12, 100);
  s.signals["engine_busy"] = quantity(0.9, 0.0, 100, "ratio");
  Diagnosis d = run(s);
  EXPECT_EQ(d.verdict, "degraded");
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().cause, "worker_stall");
}

// Tests that a few long prompts among short ones (longest prompt x5, mean x2.5) excuse a longest
// step x40 next to a per-token median x1.6: no engine_stall without stopped output (the mean
// prompt ratio alone would leave x10 unexplained).
TEST(DiagnosisTest, LongPromptStepsAreNoStall) {
  Snapshot s = steady();
  s.latency["e2e"] = quantity(0.300, 1.300, 100, "s", 0.02);
  s.stages["prefill"] = quantity(0.050, 0.150);
  s.stages["decode"] = quantity(0.245, 1.145);
  s.latency["tpot"] = quantity(0.008, 0.032);
  s.latency["itl"] = quantity(0.008, 0.032);
  s.latency["step"] = quantity(0.008, 0.032);
  s.latency["step"].baseline.max = 0.025;
  s.latency["step"].incident.max = 1.0;
  s.latency["itl"].incident.p50 = 0.0128;
  s.signals["prompt_tokens"] = quantity(1000, 2500, 100, "tokens");
  s.signals["prompt_tokens"].baseline.max = 1000;
  s.signals["prompt_tokens"].incident.max = 5000;
  s.signals["engine_busy"] = quantity(0.7, 0.75, 100, "ratio");
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded");
  bool decode = false;
  for (const auto& f : d.findings) {
    EXPECT_NE(f.cause, "engine_stall") << to_text(d);
    decode |= f.cause == "decode_slowdown";
  }
  EXPECT_TRUE(decode) << to_text(d);
}

// Tests that an interval without engine steps next to one with twice the usual steps (a late
// scrape: the next scrape reads both intervals' steps) is no worker stall, nor is one while the
// engine's busy share did not fall, while intervals without steps that are never made up, with
// requests waiting and the GPU idling, are.
TEST(DiagnosisTest, LateScrapeIsNoWorkerStall) {
  Snapshot s = steady();
  s.latency["e2e"] = quantity(0.300, 0.420, 100, "s", 0.02);
  s.stages["queue"] = quantity(0.005, 0.125);
  s.signals["step_rate"] = quantity(75, 75, 100, "1/s");
  s.signals["waiting"] = quantity(0, 0.8, 100, "requests");
  s.signals["engine_busy"] = quantity(0.95, 0.93, 100, "ratio");
  s.signals["step_rate"].incident.intervals = {75, 74, 0, 151, 76, 75, 74, 76, 75, 75};
  Diagnosis late = run(s);
  for (const auto& f : late.findings) EXPECT_NE(f.cause, "worker_stall") << to_text(late);

  // An empty interval not made up next door, while the engine stayed as busy as before: the
  // engine's own busy share says it did not stop for a tenth of the window.
  s.signals["step_rate"].incident.intervals = {75, 74, 0, 76, 76, 75, 74, 76, 75, 75};
  Diagnosis busy = run(s);
  for (const auto& f : busy.findings) EXPECT_NE(f.cause, "worker_stall") << to_text(busy);

  s.signals["step_rate"].incident.intervals = {75, 74, 0, 0, 76, 75, 0, 0, 75, 75};
  s.signals["engine_busy"] = quantity(0.95, 0.55, 100, "ratio");
  Diagnosis stalled = run(s);
  ASSERT_FALSE(stalled.findings.empty()) << to_text(stalled);
  EXPECT_EQ(stalled.findings.front().cause, "worker_stall") << to_text(stalled);
}

// Tests that a scheduler pausing for under one scrape interval at a time (no interval without
// a step) is still worker_stall: requests wait beside free batch slots while the engine idles in
// 3 samples of 10; and that bursts of arrivals at the same rate (the queue beside a full batch,
// the engine idle between bursts) are not.
// waiting_beside_free_slots_samples: queue +200 ms while 3 samples of 10 catch requests waiting
// beside free slots with the engine idling (the released backlog fills the batch next sample).
Snapshot waiting_beside_free_slots_samples() {
  Snapshot stall = steady();
  stall.latency["e2e"] = quantity(0.300, 0.500, 100, "s", 0.02);
  stall.stages["queue"] = quantity(0.005, 0.205);
  sampled(stall.signals["waiting"].baseline, std::vector<double>(10, 0));
  sampled(stall.signals["waiting"].incident, {0, 3, 0, 0, 2, 0, 0, 3, 0, 0});
  sampled(stall.signals["running"].baseline, {2, 3, 2, 2, 3, 2, 2, 3, 2, 2});
  sampled(stall.signals["running"].incident, {2, 2, 6, 2, 2, 6, 2, 2, 6, 2});
  stall.signals["engine_busy"] = quantity(0.8, 0.8, 10, "ratio");
  sampled(stall.signals["engine_busy"].baseline, std::vector<double>(10, 0.8));
  sampled(stall.signals["engine_busy"].incident, {0.8, 0.4, 0.9, 0.8, 0.4, 0.9, 0.8, 0.4, 0.9, 0.8});
  return stall;
}

TEST(DiagnosisTest, WorkerStallFromWaitingBesideFreeSlots) {
  Snapshot stall = waiting_beside_free_slots_samples();
  Diagnosis d = run(stall);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "worker_stall") << to_text(d);
  EXPECT_NE(d.findings.front().summary.find("beside free batch slots in 30% of samples"), std::string::npos)
      << d.findings.front().summary;
  // No direct stall signal here: the summary says how much sampled evidence stands behind it, and
  // without GPU series the engine (not a GPU) idled and no GPU command is advised.
  EXPECT_NE(d.findings.front().summary.find("from sampled gauges only: "), std::string::npos)
      << d.findings.front().summary;
  EXPECT_NE(d.findings.front().summary.find("while the engine idled"), std::string::npos) << d.findings.front().summary;
  for (const auto& step : d.findings.front().next_steps) EXPECT_EQ(step.find("nvidia-smi"), std::string::npos) << step;

  Snapshot bursts = stall;
  sampled(bursts.signals["running"].incident, {0, 4, 1, 0, 4, 1, 0, 4, 1, 0});
  sampled(bursts.signals["waiting"].incident, {0, 2, 0, 0, 3, 0, 0, 2, 0, 0});
  Diagnosis b = run(bursts);
  ASSERT_EQ(b.verdict, "degraded") << to_text(b);
  for (const Finding& f : b.findings) EXPECT_NE(f.cause, "worker_stall") << to_text(b);
}

// Tests worker_stall from gaps between steps: pauses of tens of steps hold every running
// sequence's next token, so the inter-token tail grows while its median, the longest step and the
// running batch stay; the same tail beside a fallen batch (a lowered cap preempting sequences) or
// beside longer steps is not this evidence.
TEST(DiagnosisTest, WorkerStallFromGapsBetweenSteps) {
  Snapshot pauses = steady();
  pauses.latency["e2e"] = quantity(0.300, 0.450, 100, "s", 0.02);
  pauses.stages["queue"] = quantity(0.005, 0.065);
  pauses.stages["decode"] = quantity(0.245, 0.335);
  pauses.latency["itl"] = quantity(0.008, 0.0104);
  pauses.latency["itl"].incident.p50 = 0.008;
  pauses.latency["itl"].incident.max = 0.75;
  pauses.latency["step"] = quantity(0.008, 0.008);
  pauses.latency["step"].baseline.max = pauses.latency["step"].incident.max = 0.025;
  Diagnosis d = run(pauses);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "worker_stall") << to_text(d);
  EXPECT_NE(d.findings.front().summary.find("stopped between steps"), std::string::npos) << d.findings.front().summary;

  Snapshot fewer = pauses;
  fewer.signals["running"] = quantity(2, 1, 100, "requests");
  for (const Finding& f : run(fewer).findings)
    EXPECT_EQ(f.summary.find("stopped between steps"), std::string::npos) << to_text(run(fewer));

  Snapshot longer_steps = pauses;
  longer_steps.latency["step"].incident.max = 0.2;
  for (const Finding& f : run(longer_steps).findings)
    EXPECT_EQ(f.summary.find("stopped between steps"), std::string::npos) << to_text(run(longer_steps));
}

// Tests the engine's own count of time held without a step (serve's
// inferscope_engine_held_seconds_total, signal engine_held): a pause the gauges sampled only once
// (one sample of ten waiting beside free slots, the batch lower on average, as a starved host
// samples it) is worker_stall first, not capacity_drop, when the engine counted 30 % of the time
// held; and the WorkerStallFromWaitingBesideFreeSlots samples are no stall when it counted none.
TEST(DiagnosisTest, EngineHeldTimeDecidesAStall) {
  Snapshot stall = steady();
  stall.latency["e2e"] = quantity(0.300, 0.700, 100, "s", 0.02);
  stall.stages["queue"] = quantity(0.005, 0.405);
  sampled(stall.signals["waiting"].baseline, std::vector<double>(10, 0));
  sampled(stall.signals["waiting"].incident, {0, 4, 3, 0, 2, 3, 0, 4, 3, 0});
  sampled(stall.signals["running"].baseline, {6, 7, 6, 6, 7, 6, 6, 7, 6, 6});
  sampled(stall.signals["running"].incident, {4, 4, 4, 3, 4, 4, 3, 4, 4, 4});
  stall.signals["engine_busy"] = quantity(0.8, 0.8, 10, "ratio");
  sampled(stall.signals["engine_busy"].baseline, std::vector<double>(10, 0.8));
  sampled(stall.signals["engine_busy"].incident, std::vector<double>(10, 0.8));
  Diagnosis sampled_only = run(stall);
  ASSERT_EQ(sampled_only.verdict, "degraded") << to_text(sampled_only);
  EXPECT_NE(sampled_only.findings.front().cause, "worker_stall") << to_text(sampled_only);

  Snapshot counted = stall;
  counted.signals["engine_held"] = quantity(0.0, 0.3, 10, "ratio");
  Diagnosis d = run(counted);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "worker_stall") << to_text(d);
  for (const Finding& f : d.findings) EXPECT_NE(f.cause, "capacity_drop") << to_text(d);
  EXPECT_NE(d.findings.front().summary.find("it held work without a step for 30% of the time (baseline 0%)"),
            std::string::npos)
      << d.findings.front().summary;
  EXPECT_EQ(d.findings.front().summary.find("from sampled gauges only"), std::string::npos)
      << d.findings.front().summary;

  Snapshot none = waiting_beside_free_slots_samples();
  none.signals["engine_held"] = quantity(0.0, 0.0, 10, "ratio");
  Diagnosis n = run(none);
  for (const Finding& f : n.findings) EXPECT_NE(f.cause, "worker_stall") << to_text(n);
}

}  // namespace
}  // namespace inferscope::doctor
