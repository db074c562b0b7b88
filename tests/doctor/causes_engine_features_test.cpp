// Unit tests of the engine features family (causes_engine_features.cpp) on constructed snapshots:
// a prefix-cache hit rate that fell at unchanged prompt length is prefix_cache_miss, at two
// magnitudes, and neither long_prompts, prefill_slowdown, decode_slowdown nor capacity_drop claims
// it; prompts that grew around the same cached prefix, a slower prefill at a steady hit rate and
// a server without prefix counters are not prefix_cache_miss. A fall of speculative decoding's
// draft acceptance that stretches the time per output token at the same step cost is
// spec_decode_acceptance_drop, at two magnitudes and with either kind of ITL, and not
// decode_slowdown; a slower step at steady acceptance is decode_slowdown. LoRA adapter slots cut
// below the adapters in flight (requests waiting for a slot with batch room, loads per second up)
// is lora_adapter_thrash at two magnitudes, and neither capacity_drop, long_prompts nor
// decode_slowdown claims it; a queue of requests that wait for the batch, not for an adapter, is
// not lora_adapter_thrash.
#include "doctor/diagnosis.h"

#include <gtest/gtest.h>

#include "doctor/diagnosis_support.h"

namespace inferscope::doctor {
namespace {

using namespace testing;

bool reported(const Diagnosis& d, const std::string& cause) {
  for (const Finding& f : d.findings)
    if (f.cause == cause) return true;
  return false;
}

// prefix_loss builds steady traffic of 1000-token prompts whose cache hit rate falls from
// `hit_before` to `hit_after` at the same rate: prefill grows with the tokens each request now
// computes at the same cost per computed token (0.5 ms), queueing grows behind the longer
// prefills, and decoding requests sharing steps with them lose a little.
Snapshot prefix_loss(double hit_before, double hit_after) {
  Snapshot s = steady();
  const double computed_b = 1000 * (1 - hit_before), computed_i = 1000 * (1 - hit_after);
  const double prefill_b = 0.0005 * computed_b, prefill_i = 0.0005 * computed_i;
  const double queue_i = 0.005 + 0.15 * (prefill_i - prefill_b);
  const double decode_i = 0.245 * (1 + 0.05 * (computed_i / computed_b - 1) / 8);
  s.stages["prefill"] = quantity(prefill_b, prefill_i);
  s.stages["queue"] = quantity(0.005, queue_i);
  s.stages["decode"] = quantity(0.245, decode_i);
  s.latency["e2e"] = quantity(0.005 + prefill_b + 0.245, queue_i + prefill_i + decode_i, 100, "s", 0.02);
  s.latency["ttft"] = quantity(0.005 + prefill_b, queue_i + prefill_i);
  s.latency["tpot"] = quantity(0.008, 0.008 * decode_i / 0.245);
  s.latency["itl"] = quantity(0.008, 0.008 * decode_i / 0.245);
  s.latency["itl"].incident.p50 = 0.008;  // prefill interference: a few long gaps, not every gap
  s.signals["prefix_queries"] = quantity(5000, 5000, 100, "tok/s");
  s.signals["prefix_hits"] = quantity(5000 * hit_before, 5000 * hit_after, 100, "tok/s");
  s.signals["prompt_token_rate"] = quantity(5000, 5000, 100, "tok/s");
  return s;
}

// Tests the prefix-cache loss at two magnitudes: the top finding is prefix_cache_miss on the
// prefill stage with the hit rates and the computed tokens in its summary, and no cause that
// reads the same prefill and queue rise as more work or a slower engine is reported.
TEST(EngineFeaturesTest, PrefixCacheMissAtUnchangedPromptLength) {
  for (auto [before, after] : {std::pair{0.9, 0.1}, std::pair{0.6, 0.3}}) {
    Diagnosis d = run(prefix_loss(before, after));
    ASSERT_EQ(d.verdict, "degraded") << to_text(d);
    ASSERT_FALSE(d.findings.empty());
    EXPECT_EQ(d.findings.front().cause, "prefix_cache_miss") << to_text(d);
    EXPECT_EQ(d.findings.front().stage, "prefill") << to_text(d);
    EXPECT_GE(d.findings.front().share, 0.6) << to_text(d);
    const std::string& summary = d.findings.front().summary;
    EXPECT_NE(summary.find("hit rate fell from " + std::to_string(static_cast<int>(before * 100)) + "%"),
              std::string::npos) << summary;
    EXPECT_NE(summary.find("at unchanged prompt length"), std::string::npos) << summary;
    for (const char* other : {"long_prompts", "prefill_slowdown", "decode_slowdown", "capacity_drop"})
      EXPECT_FALSE(reported(d, other)) << other << "\n" << to_text(d);
  }
}

// Tests prompts that grew around the same cached prefix (600 tokens cached before and after):
// the hit rate falls from 60 % to 20 % without one hit lost, so the longer prompts are the news
// and prefix_cache_miss is not reported.
TEST(EngineFeaturesTest, LongerPromptsAroundTheSameCachedPrefixAreNotAMiss) {
  Snapshot s = steady();
  s.signals["prompt_tokens"] = quantity(1000, 3000, 100, "tokens");
  s.signals["prefix_queries"] = quantity(5000, 15000, 100, "tok/s");
  s.signals["prefix_hits"] = quantity(3000, 3000, 100, "tok/s");
  s.stages["prefill"] = quantity(0.020, 0.120);
  s.stages["queue"] = quantity(0.005, 0.030);
  s.latency["e2e"] = quantity(0.270, 0.395, 100, "s", 0.02);
  s.latency["ttft"] = quantity(0.025, 0.150);
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "long_prompts") << to_text(d);
  EXPECT_FALSE(reported(d, "prefix_cache_miss")) << to_text(d);
}

// Tests a slower prefill at a steady 50 % hit rate: prefill_slowdown, not prefix_cache_miss; and
// the same prefill rise on a server that exposes no prefix-cache counters names no cache.
TEST(EngineFeaturesTest, SlowerPrefillAtSteadyHitRateIsNotAMiss) {
  Snapshot s = steady();
  s.stages["prefill"] = quantity(0.050, 0.200);
  s.latency["e2e"] = quantity(0.300, 0.450, 100, "s", 0.02);
  s.latency["ttft"] = quantity(0.055, 0.205);
  Snapshot with_cache = s;
  with_cache.signals["prefix_queries"] = quantity(5000, 5000, 100, "tok/s");
  with_cache.signals["prefix_hits"] = quantity(2500, 2500, 100, "tok/s");
  for (const Snapshot& snap : {with_cache, s}) {
    Diagnosis d = run(snap);
    ASSERT_EQ(d.verdict, "degraded") << to_text(d);
    EXPECT_EQ(d.findings.front().cause, "prefill_slowdown") << to_text(d);
    EXPECT_FALSE(reported(d, "prefix_cache_miss")) << to_text(d);
  }
}

// Tests that a hit rate that fell while latency did not move is not news on its own (a cache
// with headroom to spare): the verdict stays healthy and the cause is only considered.
TEST(EngineFeaturesTest, HitRateFallWithoutSlowdownIsHealthy) {
  Snapshot s = steady();
  s.signals["prefix_queries"] = quantity(5000, 5000, 100, "tok/s");
  s.signals["prefix_hits"] = quantity(4500, 500, 100, "tok/s");
  Diagnosis d = run(s);
  EXPECT_EQ(d.verdict, "healthy") << to_text(d);
  EXPECT_FALSE(reported(d, "prefix_cache_miss")) << to_text(d);
}

// accepted_per_draft is the mean run of accepted drafts out of `k` when each position is kept
// with `p` while the ones before it were: p + p^2 + ... + p^k.
double accepted_per_draft(double p, int k) {
  double sum = 0, run = 1;
  for (int j = 0; j < k; ++j) sum += run *= p;
  return sum;
}

// spec_drop builds steady traffic decoding with 3 draft tokens per step whose per-position
// acceptance falls from `before` to `after`: the engine step costs the same (20 ms), each step
// emits 1 + accepted drafts tokens, so TPOT and decode stretch by the tokens-per-step ratio. With
// `per_event_itl` the ITL is vLLM's (one observation per step: unchanged), else per token.
Snapshot spec_drop(double before, double after, bool per_event_itl) {
  Snapshot s = steady();
  const double step = 0.020, rounds = 5 * 32;  // draft rounds per second: 5 req/s x ~32 steps
  const double a_b = accepted_per_draft(before, 3), a_i = accepted_per_draft(after, 3);
  const double tpot_b = step / (1 + a_b), tpot_i = step / (1 + a_i);
  const double decode_b = 31 * tpot_b, decode_i = 31 * tpot_i;
  s.stages["decode"] = quantity(decode_b, decode_i);
  s.latency["e2e"] = quantity(0.055 + decode_b, 0.055 + decode_i, 100, "s", 0.02);
  s.latency["tpot"] = quantity(tpot_b, tpot_i);
  s.latency["itl"] = per_event_itl ? quantity(step, step) : quantity(tpot_b, tpot_i);
  s.latency["step"] = quantity(step, step);
  s.signals["spec_drafts"] = quantity(rounds, rounds * (1 + a_b) / (1 + a_i), 100, "1/s");
  s.signals["spec_draft_tokens"] = quantity(3 * rounds, 3 * rounds * (1 + a_b) / (1 + a_i), 100, "tok/s");
  s.signals["spec_accepted_tokens"] = quantity(a_b * rounds, a_i * rounds * (1 + a_b) / (1 + a_i), 100, "tok/s");
  return s;
}

// Tests an acceptance drop at two magnitudes (0.7 -> 0.2 and 0.7 -> 0.45 per position), with
// vLLM's per-step ITL and a per-token one: the top finding is spec_decode_acceptance_drop on
// decode with the acceptance in its summary, and decode_slowdown, long_outputs and capacity_drop
// are not reported.
TEST(EngineFeaturesTest, SpecDecodeAcceptanceDrop) {
  for (auto [before, after] : {std::pair{0.7, 0.2}, std::pair{0.7, 0.45}})
    for (bool per_event_itl : {true, false}) {
      Diagnosis d = run(spec_drop(before, after, per_event_itl));
      ASSERT_EQ(d.verdict, "degraded") << to_text(d);
      ASSERT_FALSE(d.findings.empty());
      EXPECT_EQ(d.findings.front().cause, "spec_decode_acceptance_drop") << after << " " << per_event_itl << "\n" << to_text(d);
      EXPECT_EQ(d.findings.front().stage, "decode") << to_text(d);
      EXPECT_NE(d.findings.front().summary.find("accepts fewer drafts: acceptance"), std::string::npos);
      for (const char* other : {"decode_slowdown", "long_outputs", "capacity_drop"})
        EXPECT_FALSE(reported(d, other)) << other << "\n" << to_text(d);
    }
}

// Tests a slower engine step (x2) at steady acceptance: decode_slowdown, and the acceptance
// cause is not reported.
TEST(EngineFeaturesTest, SlowerStepAtSteadyAcceptanceIsDecodeSlowdown) {
  Snapshot s = spec_drop(0.7, 0.7, /*per_event_itl=*/false);
  s.latency["tpot"].incident = window(2 * s.latency["tpot"].baseline.mean, 100);
  s.latency["itl"].incident = window(2 * s.latency["itl"].baseline.mean, 100);
  s.latency["step"].incident = window(0.040, 100);
  s.stages["decode"].incident = window(2 * s.stages["decode"].baseline.mean, 100);
  s.latency["e2e"] = quantity(s.latency["e2e"].baseline.mean, 0.055 + s.stages["decode"].incident.mean, 100, "s", 0.02);
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "decode_slowdown") << to_text(d);
  EXPECT_FALSE(reported(d, "spec_decode_acceptance_drop")) << to_text(d);
}

// lora_thrash builds steady traffic over 4 adapters whose slots fall from 4 to `slots_after`:
// requests whose adapter has no slot are passed over (most of the queue waits for an adapter
// while the batch shrinks), adapters are loaded in turn (loads per second climb from a trickle),
// and each load's few milliseconds stretch the steps a little.
Snapshot lora_thrash(double slots_after) {
  Snapshot s = steady();
  const double cut = 4 / slots_after;  // adapters in flight per slot
  const double queue_i = 0.005 + 0.12 * (cut - 1);
  const double decode_i = 0.245 * (1 + 0.02 * (cut - 1));
  s.stages["queue"] = quantity(0.005, queue_i);
  s.stages["decode"] = quantity(0.245, decode_i);
  s.latency["e2e"] = quantity(0.300, queue_i + 0.050 + decode_i, 100, "s", 0.02);
  s.latency["ttft"] = quantity(0.055, queue_i + 0.050);
  s.latency["tpot"] = quantity(0.008, 0.008 * decode_i / 0.245);
  s.latency["itl"] = quantity(0.008, 0.008 * decode_i / 0.245);
  s.signals["running"] = quantity(2, 2 / cut + 0.5, 100, "requests");
  s.signals["running"].baseline.max = 4;
  s.signals["running"].incident.max = 3;
  s.signals["waiting"] = quantity(0, 0.8 * cut, 100, "requests");
  s.signals["lora_waiting"] = quantity(0, 0.7 * cut, 100, "requests");
  s.signals["lora_slots"] = quantity(4, slots_after, 100, "adapters");
  s.signals["lora_loaded"] = quantity(3.5, slots_after, 100, "adapters");
  s.signals["lora_load_rate"] = quantity(0.02, 2 * cut, 100, "1/s");
  return s;
}

// Tests slots cut 4 -> 2 and 4 -> 1 under 4 adapters: the top finding is lora_adapter_thrash on
// the queue with the waiting requests and slots in its summary, and no cause that reads the
// queue as a smaller server, longer prompts or a slower engine is reported.
TEST(EngineFeaturesTest, LoraAdapterThrashWhenSlotsAreCut) {
  for (double slots_after : {2.0, 1.0}) {
    Diagnosis d = run(lora_thrash(slots_after));
    ASSERT_EQ(d.verdict, "degraded") << to_text(d);
    ASSERT_FALSE(d.findings.empty());
    EXPECT_EQ(d.findings.front().cause, "lora_adapter_thrash") << slots_after << "\n" << to_text(d);
    EXPECT_EQ(d.findings.front().stage, "queue") << to_text(d);
    const std::string& summary = d.findings.front().summary;
    EXPECT_NE(summary.find("wait for an adapter slot"), std::string::npos) << summary;
    EXPECT_NE(summary.find("slots 4 -> "), std::string::npos) << summary;
    for (const char* other : {"capacity_drop", "long_prompts", "decode_slowdown"})
      EXPECT_FALSE(reported(d, other)) << other << "\n" << to_text(d);
  }
}

// Tests the same queue when no request waits for an adapter (every adapter holds a slot; the
// batch itself is full): not lora_adapter_thrash; and adapter series that hold still under a
// steady server leave it healthy.
TEST(EngineFeaturesTest, QueueWithoutAdapterWaitsIsNotLoraThrash) {
  Snapshot s = lora_thrash(1);
  s.signals["lora_waiting"] = quantity(0, 0, 100, "requests");
  s.signals["lora_slots"] = quantity(4, 4, 100, "adapters");
  s.signals["lora_loaded"] = quantity(4, 4, 100, "adapters");
  s.signals["lora_load_rate"] = quantity(0.02, 0.02, 100, "1/s");
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  EXPECT_FALSE(reported(d, "lora_adapter_thrash")) << to_text(d);

  Snapshot calm = steady();
  calm.signals["lora_waiting"] = quantity(0, 0, 100, "requests");
  calm.signals["lora_slots"] = quantity(4, 4, 100, "adapters");
  calm.signals["lora_loaded"] = quantity(4, 4, 100, "adapters");
  calm.signals["lora_load_rate"] = quantity(0.02, 0.02, 100, "1/s");
  Diagnosis healthy = run(calm);
  EXPECT_EQ(healthy.verdict, "healthy") << to_text(healthy);
  EXPECT_FALSE(reported(healthy, "lora_adapter_thrash")) << to_text(healthy);
}

}  // namespace
}  // namespace inferscope::doctor
