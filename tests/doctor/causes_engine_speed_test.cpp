// Unit tests of the engine speed family (causes_engine_speed.cpp): a slower decode step stays
// apart from longer outputs, more load, a burst in one quarter and long prompts sharing steps,
// also behind a gateway.
#include "doctor/diagnosis.h"

#include <gtest/gtest.h>

#include "doctor/diagnosis_support.h"

namespace inferscope::doctor {
namespace {

using namespace testing;

// Tests the decode signature: per-token time and its median up at flat load is decode_slowdown.
TEST(DiagnosisTest, DecodeSlowdownVsLongOutputs) {
  Snapshot slow = steady();
  slow.latency["e2e"] = quantity(0.300, 0.545, 100, "s", 0.02);
  slow.stages["decode"] = quantity(0.245, 0.490);
  slow.latency["tpot"] = quantity(0.008, 0.016);
  slow.latency["itl"] = quantity(0.008, 0.016);
  Diagnosis d = run(slow);
  ASSERT_EQ(d.verdict, "degraded");
  EXPECT_EQ(d.findings.front().cause, "decode_slowdown");
  EXPECT_EQ(d.findings.front().stage, "decode");
  EXPECT_NEAR(d.findings.front().share, 1.0, 0.05);
  // The load is named with its figures; flat arrivals are "unchanged".
  EXPECT_NE(d.findings.front().summary.find("at unchanged load (arrivals 5 -> 5 req/s)"), std::string::npos)
      << d.findings.front().summary;

  Snapshot longer = steady();
  longer.latency["e2e"] = quantity(0.300, 0.545, 100, "s", 0.02);
  longer.stages["decode"] = quantity(0.245, 0.490);
  longer.signals["output_tokens"] = quantity(32, 64, 100, "tokens");
  Diagnosis l = run(longer);
  ASSERT_EQ(l.verdict, "degraded");
  EXPECT_EQ(l.findings.front().cause, "long_outputs");
  for (const auto& f : l.findings) EXPECT_NE(f.cause, "decode_slowdown");
}

// Tests that more arrivals excuse only the per-token rise they can cause (batch growth at most in
// proportion to arrivals): a 4x per-token median at doubled load is still decode_slowdown, a
// 1.3x one at doubled load is not.
TEST(DiagnosisTest, DecodeSlowdownUnderMoreLoad) {
  Snapshot slow = steady();
  slow.latency["e2e"] = quantity(0.300, 1.100, 100, "s", 0.02);
  slow.stages["queue"] = quantity(0.005, 0.065);
  slow.stages["decode"] = quantity(0.245, 0.985);
  slow.latency["tpot"] = quantity(0.008, 0.032);
  slow.latency["itl"] = quantity(0.008, 0.032);
  slow.signals["request_rate"] = quantity(5, 10, 100, "req/s", 0.02);
  slow.signals["running"] = quantity(2, 8, 100, "requests");
  Diagnosis d = run(slow);
  ASSERT_EQ(d.verdict, "degraded");
  EXPECT_EQ(d.findings.front().cause, "decode_slowdown") << to_text(d);
  EXPECT_EQ(d.findings.front().stage, "decode");
  // Arrivals doubled: the wording follows the evidence (the demo said "unchanged" at x1.3).
  EXPECT_NE(d.findings.front().summary.find(" at higher load (arrivals 5 -> 10.0 req/s)"), std::string::npos)
      << d.findings.front().summary;
  // The derived arrival rate is named as a quantity with its metrics, not as pseudo-PromQL.
  bool arrivals_named = false;
  for (const Evidence& e : d.findings.front().evidence)
    arrivals_named = arrivals_named || e.metric.starts_with("arrivals/s (rate of m + rise of ");
  EXPECT_TRUE(arrivals_named) << to_text(d);

  Snapshot busier = slow;
  busier.latency["e2e"] = quantity(0.300, 0.420, 100, "s", 0.02);
  busier.stages["queue"] = quantity(0.005, 0.050);
  busier.stages["decode"] = quantity(0.245, 0.320);
  busier.latency["tpot"] = quantity(0.008, 0.0104);
  busier.latency["itl"] = quantity(0.008, 0.0104);
  busier.signals["running"] = quantity(2, 4, 100, "requests");
  Diagnosis b = run(busier);
  ASSERT_EQ(b.verdict, "degraded");
  EXPECT_EQ(b.findings.front().cause, "load_increase") << to_text(b);
  for (const auto& f : b.findings) EXPECT_NE(f.cause, "decode_slowdown") << to_text(b);
}

// demo_snapshot is the project demo's doctor call (scripts/demo.sh: `--window 1m --baseline 2m`
// when the alert fires), numbers from a reproduction against inferscope serve + Prometheus: a 4x
// decode fault and a second stream of ~4k-token prompts began 20 s before the window's end, so
// two thirds of the window are still healthy traffic; the baseline is the young stack's sparse
// first 20 s. Decode carries 89 % of the e2e change.
Snapshot demo_snapshot() {
  Snapshot s = steady();
  s.latency["e2e"] = quantity(0.402, 1.557, 55, "s", 0.05);
  s.latency["e2e"].incident.count = 196;
  s.latency["ttft"] = quantity(0.022, 0.149);
  s.latency["tpot"] = quantity(0.00647, 0.0258);
  s.latency["tpot"].baseline.p50 = 0.00627;
  s.latency["tpot"].incident.p50 = 0.00698;
  s.latency["itl"] = quantity(0.00648, 0.0252, 3000, "s", 0.02);
  s.latency["itl"].incident.count = 12000;
  s.latency["itl"].baseline.p50 = 0.00628;
  s.latency["itl"].incident.p50 = 0.00701;  // the whole window's median sits on the healthy part
  s.latency["itl"].incident.chunk_p50 = {0.0063, 0.0064, 0.0066, 0.0262};
  s.latency["itl"].incident.chunk_counts = {2850, 2850, 3000, 3300};
  s.latency["step"] = quantity(0.0066, 0.0100);
  s.latency["step"].baseline.max = 0.025;
  s.latency["step"].incident.max = 0.5;
  s.stages["queue"] = quantity(0.0032, 0.0595, 55);
  s.stages["prefill"] = quantity(0.0190, 0.0892, 55);
  s.stages["decode"] = quantity(0.3797, 1.41, 55);
  for (auto* st : {&s.stages["queue"], &s.stages["prefill"], &s.stages["decode"]}) st->incident.count = 196;
  s.signals["request_rate"] = quantity(3.24, 3.27, 100, "req/s", 0.05);
  s.signals["in_flight"] = quantity(1.04, 7.05, 100, "requests");
  s.signals["in_flight"].incident.intervals = {1, 1, 1, 1, 1, 1, 2, 6, 14, 41};
  s.signals["prompt_tokens"] = quantity(537, 1195, 55, "tokens");
  s.signals["prompt_tokens"].baseline.max = 1000;
  s.signals["prompt_tokens"].incident.max = 5000;
  s.signals["prompt_token_rate"] = quantity(1737, 3904, 100, "tok/s");
  s.signals["output_tokens"] = quantity(59.6, 56.9, 55, "tokens");
  s.signals["running"] = quantity(1.0, 6.1, 100, "requests");
  s.signals["running"].incident.max = 32;
  s.signals["waiting"] = quantity(0.04, 0.97, 100, "requests");
  s.signals["kv_usage"] = quantity(0.0013, 0.0265, 100, "ratio");
  s.signals["kv_usage"].baseline.max = 0.0076;
  s.signals["kv_usage"].incident.max = 0.154;
  s.signals["engine_busy"] = quantity(0.46, 0.74, 100, "ratio");
  s.signals["step_rate"] = quantity(74.7, 74.5, 100, "1/s");
  return s;
}

// Tests the demo's miss: an incident that began late in the window moves the per-token median of
// the window's last quarter only, and long prompts may claim of the decode change no more than
// the engine time their added prefill work takes (here about a tenth), so decode_slowdown ranks
// first with most of the change and long_prompts is reported beside it. Without a moved median
// anywhere in the window, the same mean rise is not called a decode slowdown.
TEST(DiagnosisTest, DemoDecodeFaultLateInWindowBesideLongPrompts) {
  Diagnosis d = run(demo_snapshot());
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().cause, "decode_slowdown") << to_text(d);
  EXPECT_EQ(d.findings.front().stage, "decode") << to_text(d);
  EXPECT_GE(d.findings.front().share, 0.7) << to_text(d);
  bool long_prompts = false;
  for (const auto& f : d.findings) {
    EXPECT_NE(f.cause, "engine_stall") << to_text(d);
    if (f.cause == "long_prompts") {
      long_prompts = true;
      EXPECT_LE(f.share, 0.25) << to_text(d);
    }
  }
  EXPECT_TRUE(long_prompts) << to_text(d);

  Snapshot flat = demo_snapshot();
  flat.latency["itl"].incident.chunk_p50 = {0.0063, 0.0064, 0.0066, 0.0068};
  Diagnosis f = run(flat);
  for (const auto& finding : f.findings) EXPECT_NE(finding.cause, "decode_slowdown") << to_text(f);
}

// Tests a gateway in front of the demo's server (numbers from the demo's gateway alert): with no
// engine stages of its own, the stream after the first token carries the decode causes and the
// upstream's time to first token the prefill/queue ones, so the decode fault explains most of the
// change instead of every cause scoring its no-stage minimum. A host that was as saturated in the
// baseline is shown, but is not put forward as what changed.
TEST(DiagnosisTest, GatewayStagesCarryEngineCauses) {
  Snapshot s;
  s.source = "test";
  s.dialect = "gateway";
  s.baseline_start = 0;
  s.baseline_end = 38;
  s.incident_start = 38;
  s.incident_end = 76;
  s.latency["e2e"] = quantity(0.404, 3.03, 100, "s", 0.05);
  s.latency["ttft"] = quantity(0.019, 0.378);
  s.latency["tpot"] = quantity(0.0065, 0.0478);
  s.latency["itl"] = quantity(0.0065, 0.040, 3000);
  s.latency["itl"].baseline.p50 = 0.0063;
  s.latency["itl"].incident.p50 = 0.0346;
  s.stages["upstream_ttft"] = quantity(0.019, 0.378);
  s.stages["stream"] = quantity(0.385, 2.645);
  s.signals["request_rate"] = quantity(3.49, 3.5, 100, "req/s", 0.05);
  s.signals["in_flight"] = quantity(1.0, 8.0, 100, "requests");
  s.signals["in_flight"].incident.intervals = {1, 2, 4, 6, 8, 10, 12, 14, 16, 44};
  s.signals["prompt_tokens"] = quantity(537, 1853, 100, "tokens");
  s.signals["output_tokens"] = quantity(60, 58, 100, "tokens");
  s.signals["host_cpu_busy"] = quantity(1.0, 1.0, 100, "ratio");
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty());
  const Finding& top = d.findings.front();
  EXPECT_EQ(top.cause, "decode_slowdown") << to_text(d);
  EXPECT_EQ(top.stage, "stream") << to_text(d);
  EXPECT_GE(top.share, 0.5) << to_text(d);
  EXPECT_GT(top.score, 0.6) << to_text(d);
  for (const auto& step : top.next_steps) EXPECT_EQ(step.find("CPUs are saturated"), std::string::npos) << to_text(d);
  bool long_prompts = false;
  for (const auto& f : d.findings)
    if (f.cause == "long_prompts") {
      long_prompts = true;
      EXPECT_EQ(f.stage, "upstream_ttft") << to_text(d);
    }
  EXPECT_TRUE(long_prompts) << to_text(d);
  bool headroom_note = false;
  for (const auto& n : d.notes) headroom_note |= n.find("no headroom") != std::string::npos;
  EXPECT_TRUE(headroom_note) << to_text(d);
}

// Tests that a burst of requests in one quarter of the window, which doubles that quarter's
// per-token median through a bigger batch, is not read as a slower engine there: the quarter's
// median is compared beyond the quarter's own load.
TEST(DiagnosisTest, BurstInOneQuarterIsNoDecodeSlowdown) {
  Snapshot s = steady();
  s.latency["e2e"] = quantity(0.300, 0.500, 100, "s", 0.02);
  s.stages["queue"] = quantity(0.005, 0.045);
  s.stages["decode"] = quantity(0.245, 0.405);
  s.latency["tpot"] = quantity(0.008, 0.020);
  s.latency["itl"] = quantity(0.008, 0.020, 3000);
  s.latency["itl"].incident.p50 = 0.0088;
  s.latency["itl"].incident.chunk_p50 = {0.0080, 0.0081, 0.0082, 0.0160};
  s.latency["itl"].incident.chunk_counts = {700, 700, 700, 1500};
  s.signals["request_rate"] = quantity(5, 6.6, 100, "req/s", 0.02);
  s.signals["request_rate"].incident.intervals = {5, 5, 5, 5, 5, 5, 5, 11, 11, 11};
  s.signals["running"] = quantity(2, 3, 100, "requests");
  Diagnosis d = run(s);
  for (const auto& f : d.findings) EXPECT_NE(f.cause, "decode_slowdown") << to_text(d);

  // The same quarter with no more requests than the rest is a slower engine there.
  s.signals["request_rate"] = quantity(5, 5, 100, "req/s", 0.02);
  Diagnosis slow = run(s);
  bool decode = false;
  for (const auto& f : slow.findings) decode |= f.cause == "decode_slowdown";
  EXPECT_TRUE(decode) << to_text(slow);
}

// saturated_by_prompts is steady() (prefill 50 us per prompt token, engine 60 % busy) whose
// prompts grew x6 at a rate that fills every step: prefill takes nearly all engine time, so each
// decoding sequence's token waits for a step that mostly prefills (per-token decode x`per_token`,
// median included), the queue grows, completions fall; the cost per prompt token is unchanged.
Snapshot saturated_by_prompts(double per_token, double prefill_cost_ratio = 1) {
  Snapshot s = steady();
  s.signals["prompt_tokens"] = quantity(1000, 6000, 100, "tokens");
  s.signals["prompt_token_rate"] = quantity(5000, 24000, 100, "tok/s");
  s.signals["request_rate"] = quantity(5, 4, 100, "req/s", 0.02);
  s.signals["engine_busy"] = quantity(0.6, 1.0, 100, "ratio");
  s.signals["running"] = quantity(2, 4, 100, "requests");
  s.signals["waiting"] = quantity(0, 3, 100, "requests");
  const double prefill = 0.300 * prefill_cost_ratio, decode = 0.245 * per_token, queue = 1.0;
  s.stages["prefill"] = quantity(0.050, prefill);
  s.stages["decode"] = quantity(0.245, decode);
  s.stages["queue"] = quantity(0.005, queue);
  s.latency["ttft"] = quantity(0.055, queue + prefill);
  s.latency["tpot"] = quantity(0.008, 0.008 * per_token);
  s.latency["itl"] = quantity(0.008, 0.008 * per_token);
  s.latency["e2e"] = quantity(0.300, queue + prefill + decode, 100, "s", 0.02);
  return s;
}

// Tests that prompts x6 at a rate that fills every step, per-token decode x10 (median too) on an
// engine whose cost per prompt token did not change, is long_prompts first and no decode_slowdown:
// prefill sharing the steps (25 % -> 95 % of engine time here, x15 per token) explains it. The
// same shape with the engine's prefill per prompt token x3 is still a prefill slowdown.
TEST(DiagnosisTest, PromptsThatFillEveryStepAreNoDecodeSlowdown) {
  Diagnosis d = run(saturated_by_prompts(10));
  ASSERT_EQ(d.verdict, "degraded");
  EXPECT_EQ(d.findings.front().cause, "long_prompts") << to_text(d, true);
  EXPECT_FALSE(reports(d, "decode_slowdown")) << to_text(d, true);
  bool why = false;
  for (const auto& c : d.considered)
    why |= c.cause == "decode_slowdown" && c.reason.find("prefill work shares the steps") != std::string::npos;
  EXPECT_TRUE(why) << to_text(d, true);

  Diagnosis slower = run(saturated_by_prompts(10, 3));
  EXPECT_TRUE(reports(slower, "prefill_slowdown")) << to_text(slower, true);
}

// Tests that a decode slowdown beside modestly longer prompts (prefill 25 % -> 38 % of engine time:
// x1.2 per token at most) is still a decode slowdown: the excuse is what the added prefill work
// can do, no more.
TEST(DiagnosisTest, DecodeSlowdownBesideLongerPromptsStays) {
  Snapshot s = decode_slowed(3);
  s.signals["prompt_tokens"] = quantity(1000, 1500, 100, "tokens");
  s.signals["prompt_token_rate"] = quantity(5000, 7500, 100, "tok/s");
  s.stages["prefill"] = quantity(0.050, 0.075);
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded");
  EXPECT_EQ(d.findings.front().cause, "decode_slowdown") << to_text(d, true);
}

}  // namespace
}  // namespace inferscope::doctor
