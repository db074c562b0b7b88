// Tests of EngineCore: one step at a time, no clock.
#include "serve/engine/engine_core.h"

#include "serve/engine/text_generator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "generation_request.h"

namespace inferscope::serve {
namespace {

CostProfile simple_profile() {
  CostProfile p;
  p.name = "test";
  p.forward_base_s = 0.01;
  p.prefill_token_s = 0.001;
  p.decode_seq_s = 0.0001;
  p.kv_capacity_tokens = 1 << 20;
  return p;
}

using engine_test::request;

EngineStats stats_of(const EngineCore& core) {
  EngineStats s;
  core.fill_stats(s);
  return s;
}

// run_to_end steps until nothing is left; returns the number of steps (bounded).
int run_to_end(EngineCore& core, int max_steps = 10000) {
  int steps = 0;
  while (core.has_work() && steps < max_steps) {
    if (core.plan_step().empty()) break;
    (void)core.finish_step();
    ++steps;
  }
  return steps;
}

// lora_request is request() naming LoRA adapter `adapter` (0 = the base model).
GenerationRequest lora_request(std::uint32_t prompt_len, std::uint32_t max_tokens, std::uint32_t adapter) {
  GenerationRequest r = request(prompt_len, max_tokens, 1000 + adapter * 7919);
  r.lora = adapter;
  return r;
}

// Tests LoRA slots: with one slot, a request of a second adapter waits (passed over, keeping its
// place) while the first adapter's request runs, a base-model request behind it starts, the
// first step of each adapter pays lora_load_s once, and the second adapter loads when the slot
// is free of running requests.
TEST(EngineCoreTest, LoraAdapterWaitsForAFreeSlot) {
  CostProfile profile = simple_profile();
  profile.lora_load_s = 0.5;
  CoreConfig config;
  config.max_loras = 1;
  EngineCore core(config, profile);
  ASSERT_TRUE(core.submit(1, lora_request(10, 3, 1)));
  ASSERT_TRUE(core.submit(2, lora_request(10, 3, 2)));
  ASSERT_TRUE(core.submit(3, lora_request(10, 3, 0)));
  StepPlan first = core.plan_step();
  EXPECT_EQ(first.first_scheduled, (std::vector<SequenceId>{1, 3}));  // 2 waits for the slot
  EXPECT_NEAR(first.model_seconds, 0.01 + 0.02 + 0.5, 1e-9);           // one adapter load
  EngineStats s = stats_of(core);
  EXPECT_EQ(s.lora_running, 0b01u);
  EXPECT_EQ(s.lora_waiting, 0b10u);
  EXPECT_EQ(s.lora_loaded, 0b01u);
  EXPECT_EQ(s.lora_slots, 1u);
  EXPECT_EQ(s.lora_waiting_requests, 1u);
  EXPECT_EQ(s.lora_loads_total, 1u);
  (void)core.finish_step();
  StepPlan second = core.plan_step();  // adapter 1 still runs: no load, 2 still waits
  EXPECT_TRUE(second.first_scheduled.empty());
  EXPECT_LT(second.model_seconds, 0.5);
  (void)core.finish_step();
  run_to_end(core);
  s = stats_of(core);
  EXPECT_EQ(s.lora_loads_total, 2u);  // adapter 2 took the freed slot
  EXPECT_EQ(s.lora_loaded, 0b10u);
  EXPECT_NEAR(s.lora_load_seconds_total, 1.0, 1e-9);
  EXPECT_EQ(s.lora_waiting_requests, 0u);
}

// Tests that enough slots run every adapter at once with one load each, and that the max_loras
// fault cuts the slots: from then on a third adapter waits although the batch has room.
TEST(EngineCoreTest, LoraSlotsAndTheMaxLorasFault) {
  CoreConfig config;
  config.max_loras = 4;
  EngineCore core(config, simple_profile());
  for (std::uint32_t a = 1; a <= 3; ++a) ASSERT_TRUE(core.submit(a, lora_request(10, 20, a)));
  StepPlan plan = core.plan_step();
  EXPECT_EQ(plan.first_scheduled.size(), 3u);
  (void)core.finish_step();
  EXPECT_EQ(stats_of(core).lora_loads_total, 3u);
  run_to_end(core);
  FaultSet cut;
  cut.max_loras = 1;
  core.set_faults(cut);
  for (std::uint32_t a = 1; a <= 3; ++a) ASSERT_TRUE(core.submit(10 + a, lora_request(10, 20, a)));
  plan = core.plan_step();
  EXPECT_EQ(plan.first_scheduled, std::vector<SequenceId>{11});  // adapter 1 is loaded; 2 and 3 wait
  EngineStats s = stats_of(core);
  EXPECT_EQ(s.lora_slots, 1u);
  EXPECT_EQ(s.lora_waiting_requests, 2u);
  EXPECT_EQ(s.lora_loaded, 0b001u);  // the idle adapters left to fit one slot; 1 loaded again
  (void)core.finish_step();
  run_to_end(core);
  EXPECT_EQ(stats_of(core).lora_loads_total, 6u);  // 1 again, then 2 and 3 one after the other
}

// Tests that a lone request prefills in one step (producing its first token) and then decodes
// one token per step, finishing with "length" after max_tokens.
TEST(EngineCoreTest, PrefillThenOneTokenPerStep) {
  EngineCore core(CoreConfig{}, simple_profile());
  ASSERT_TRUE(core.submit(1, request(100, 3)));
  StepPlan plan = core.plan_step();
  EXPECT_EQ(plan.first_scheduled, std::vector<SequenceId>{1});
  EXPECT_EQ(plan.prefill_tokens, 100u);
  EXPECT_EQ(plan.decode_seqs, 0u);
  EXPECT_NEAR(plan.model_seconds, 0.01 + 0.1, 1e-9);
  StepResult r = core.finish_step();
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_TRUE(r.events[0].prefill_done);
  EXPECT_EQ(r.events[0].token_count, 1u);
  EXPECT_FALSE(r.events[0].finished);
  for (int i = 0; i < 2; ++i) {
    plan = core.plan_step();
    EXPECT_EQ(plan.prefill_tokens, 0u);
    EXPECT_EQ(plan.decode_seqs, 1u);
    r = core.finish_step();
    ASSERT_EQ(r.events.size(), 1u);
    EXPECT_FALSE(r.events[0].prefill_done);
  }
  EXPECT_TRUE(r.events[0].finished);
  EXPECT_EQ(r.events[0].reason, FinishReason::kLength);
  EXPECT_FALSE(core.has_work());
  EXPECT_EQ(stats_of(core).kv_blocks_used, 0u);
  EXPECT_EQ(stats_of(core).generation_tokens_total, 3u);
  EXPECT_EQ(stats_of(core).prompt_tokens_total, 100u);
}

// Tests kv_present (a disaggregated decode worker): the first step computes one token, not the
// prompt, yet the prompt's blocks are allocated; the prefix-cache counters count no hit for it.
TEST(EngineCoreTest, TransferredKvSkipsThePrefill) {
  EngineCore core(CoreConfig{}, simple_profile());
  GenerationRequest r = request(100, 3);
  r.kv_present = true;
  ASSERT_TRUE(core.submit(1, std::move(r)));
  StepPlan plan = core.plan_step();
  EXPECT_EQ(plan.first_scheduled, std::vector<SequenceId>{1});
  EXPECT_EQ(plan.prefill_tokens, 1u);
  EXPECT_NEAR(plan.model_seconds, 0.01 + 0.001, 1e-9);
  EXPECT_EQ(stats_of(core).kv_blocks_used, (100u + 15u) / 16u);
  StepResult result = core.finish_step();
  ASSERT_EQ(result.events.size(), 1u);
  EXPECT_TRUE(result.events[0].prefill_done);
  EXPECT_EQ(result.events[0].token_count, 1u);
  EXPECT_EQ(run_to_end(core), 2);
  EXPECT_EQ(stats_of(core).generation_tokens_total, 3u);
  EXPECT_EQ(stats_of(core).prefix_hit_tokens, 0u);
}

// Tests that max_num_seqs caps the running batch and the rest wait in FCFS order.
TEST(EngineCoreTest, MaxNumSeqsCapsTheBatch) {
  CoreConfig config;
  config.max_num_seqs = 2;
  EngineCore core(config, simple_profile());
  for (SequenceId id = 1; id <= 4; ++id) ASSERT_TRUE(core.submit(id, request(10, 5, 1000 * id)));
  StepPlan plan = core.plan_step();
  EXPECT_EQ(plan.first_scheduled, (std::vector<SequenceId>{1, 2}));
  (void)core.finish_step();
  EXPECT_EQ(stats_of(core).running, 2u);
  EXPECT_EQ(stats_of(core).waiting, 2u);
  // Sequences 3 and 4 start only when 1 and 2 have finished (5 tokens each).
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(core.plan_step().first_scheduled.empty());
    (void)core.finish_step();
  }
  EXPECT_EQ(core.plan_step().first_scheduled, (std::vector<SequenceId>{3, 4}));
}

// Tests that chunked prefill splits a long prompt over steps by max_num_batched_tokens, keeps
// decodes of running sequences in the same steps, and reports prefill_done once at the end.
TEST(EngineCoreTest, ChunkedPrefillRespectsTokenBudget) {
  CoreConfig config;
  config.max_num_batched_tokens = 64;
  EngineCore core(config, simple_profile());
  ASSERT_TRUE(core.submit(1, request(8, 50)));
  (void)core.plan_step();
  (void)core.finish_step();  // 1 is now decoding
  ASSERT_TRUE(core.submit(2, request(150, 5)));
  std::vector<std::uint32_t> chunks;
  bool done = false;
  for (int i = 0; i < 5 && !done; ++i) {
    StepPlan plan = core.plan_step();
    EXPECT_EQ(plan.decode_seqs, 1u);
    EXPECT_LE(plan.prefill_tokens + plan.decode_seqs, 64u);
    chunks.push_back(plan.prefill_tokens);
    for (const auto& ev : core.finish_step().events)
      if (ev.id == 2) done = ev.prefill_done;
  }
  EXPECT_TRUE(done);
  EXPECT_EQ(chunks, (std::vector<std::uint32_t>{63, 63, 24}));
}

// Tests KV block accounting: a sequence holds ceil(tokens / block_size) blocks, and admission
// waits (FCFS) while blocks are missing.
TEST(EngineCoreTest, AdmissionWaitsForFreeBlocks) {
  CoreConfig config;
  config.kv_capacity_tokens = 160;  // 10 blocks of 16
  config.enable_prefix_caching = false;
  EngineCore core(config, simple_profile());
  ASSERT_TRUE(core.submit(1, request(100, 4)));  // 7 blocks
  ASSERT_TRUE(core.submit(2, request(64, 4, 5000)));    // 4 blocks: does not fit beside 1
  StepPlan plan = core.plan_step();
  EXPECT_EQ(plan.first_scheduled, std::vector<SequenceId>{1});
  (void)core.finish_step();
  EXPECT_EQ(stats_of(core).kv_blocks_used, 7u);
  EXPECT_EQ(stats_of(core).waiting, 1u);
  run_to_end(core);
  EXPECT_EQ(stats_of(core).kv_blocks_used, 0u);
  EXPECT_EQ(stats_of(core).generation_tokens_total, 8u);
}

// Tests that running out of blocks preempts the newest running sequence (recompute), which
// later resumes, recomputing prompt and outputs, and still produces all its tokens.
TEST(EngineCoreTest, PreemptionRecomputesLater) {
  CoreConfig config;
  config.kv_capacity_tokens = 64;  // 4 blocks
  config.enable_prefix_caching = false;
  EngineCore core(config, simple_profile());
  ASSERT_TRUE(core.submit(1, request(16, 30)));
  ASSERT_TRUE(core.submit(2, request(16, 30, 7000)));
  std::vector<SequenceId> preempted;
  std::uint32_t tokens1 = 0, tokens2 = 0;
  bool saw_recompute = false;
  for (int i = 0; i < 500 && core.has_work(); ++i) {
    StepPlan plan = core.plan_step();
    preempted.insert(preempted.end(), plan.preempted.begin(), plan.preempted.end());
    if (!preempted.empty() && plan.prefill_tokens > 16) saw_recompute = true;
    if (plan.empty()) break;
    for (const auto& ev : core.finish_step().events) (ev.id == 1 ? tokens1 : tokens2) += ev.token_count;
  }
  ASSERT_FALSE(preempted.empty());
  EXPECT_EQ(preempted.front(), 2u);  // newest first
  EXPECT_TRUE(saw_recompute);
  EXPECT_EQ(tokens1, 30u);
  EXPECT_EQ(tokens2, 30u);
  EXPECT_GT(stats_of(core).preemptions_total, 0u);
  EXPECT_EQ(stats_of(core).kv_blocks_used, 0u);
}

// Tests that a second request sharing a prompt prefix hits the cache for its full blocks only.
TEST(EngineCoreTest, PrefixCacheHitsSharedFullBlocks) {
  EngineCore core(CoreConfig{}, simple_profile());
  GenerationRequest a = request(40, 1);  // blocks [0,16) [16,32) full, 8 tokens spare
  ASSERT_TRUE(core.submit(1, a));
  run_to_end(core);
  GenerationRequest b = request(50, 1);  // same first 40 tokens
  ASSERT_TRUE(core.submit(2, b));
  StepPlan plan = core.plan_step();
  EXPECT_EQ(plan.prefill_tokens, 50u - 32u);
  (void)core.finish_step();
  EngineStats s = stats_of(core);
  EXPECT_EQ(s.prefix_queries_tokens, 90u);
  EXPECT_EQ(s.prefix_hit_tokens, 32u);
  // A different prompt misses.
  ASSERT_TRUE(core.submit(3, request(40, 1, 9000)));
  EXPECT_EQ(core.plan_step().prefill_tokens, 40u);
}

// Tests the prefix_cache_scramble fault: a scrambled request computes its whole prompt although
// its prefix is cached, and a later request sharing that prompt still hits the blocks of the
// unscrambled one only; at share 0 again every request hits. Prefill is charged for the
// uncached tokens only.
TEST(EngineCoreTest, PrefixCacheScrambleDefeatsReuse) {
  EngineCore core(CoreConfig{}, simple_profile());
  ASSERT_TRUE(core.submit(1, request(64, 1)));
  run_to_end(core);
  FaultSet scramble;
  scramble.prefix_cache_scramble = 1;
  core.set_faults(scramble);
  ASSERT_TRUE(core.submit(2, request(64, 1)));
  StepPlan missed = core.plan_step();
  EXPECT_EQ(missed.prefill_tokens, 64u);
  EXPECT_NEAR(missed.model_seconds, 0.01 + 0.064, 1e-9);
  (void)core.finish_step();
  EXPECT_EQ(stats_of(core).prefix_hit_tokens, 0u);
  core.set_faults(FaultSet{});
  ASSERT_TRUE(core.submit(3, request(64, 1)));
  StepPlan hit = core.plan_step();
  EXPECT_EQ(hit.prefill_tokens, 64u - 48u);  // three full blocks cached; the last is recomputed
  EXPECT_NEAR(hit.model_seconds, 0.01 + 0.016, 1e-9);
  (void)core.finish_step();
  EXPECT_EQ(stats_of(core).prefix_hit_tokens, 48u);

  // At a share of one half, about half of the requests miss.
  FaultSet half;
  half.prefix_cache_scramble = 0.5;
  core.set_faults(half);
  int missed_n = 0;
  for (SequenceId id = 100; id < 300; ++id) {
    ASSERT_TRUE(core.submit(id, request(64, 1)));
    missed_n += core.plan_step().prefill_tokens == 64u;
    (void)core.finish_step();
  }
  EXPECT_GT(missed_n, 70);
  EXPECT_LT(missed_n, 130);
}

// collect_tokens runs `core` to the end and returns every token of sequence `id`, in order, and
// the number of steps that emitted any.
std::pair<std::vector<std::uint32_t>, int> collect_tokens(EngineCore& core, SequenceId id) {
  std::vector<std::uint32_t> out;
  int steps = 0;
  while (core.has_work() && steps < 10000) {
    if (core.plan_step().empty()) break;
    for (const SequenceEvent& ev : core.finish_step().events)
      if (ev.id == id) {
        out.insert(out.end(), ev.tokens.begin(), ev.tokens.begin() + ev.token_count);
        steps += ev.token_count > 0;
      }
  }
  return {out, steps};
}

// Tests speculative decoding at acceptance 1: after the prefill step, each verify step emits its
// three drafts and its own token, never past max_tokens, the same token ids as without
// speculation; a verify step costs its drafts as tokens of the decode pass.
TEST(EngineCoreTest, SpeculativeDecodingEmitsAcceptedDraftsPlusOne) {
  CoreConfig plain_config;
  EngineCore plain(plain_config, simple_profile());
  ASSERT_TRUE(plain.submit(1, request(20, 13)));
  auto [plain_tokens, plain_steps] = collect_tokens(plain, 1);
  EXPECT_EQ(plain_steps, 13);

  CoreConfig config;
  config.speculative_tokens = 3;
  config.speculative_acceptance = 1;
  EngineCore core(config, simple_profile());
  ASSERT_TRUE(core.submit(1, request(20, 13)));
  (void)core.plan_step();  // prefill: no drafts yet
  StepResult first = core.finish_step();
  ASSERT_EQ(first.events.size(), 1u);
  EXPECT_EQ(first.events[0].token_count, 1u);
  StepPlan verify = core.plan_step();
  EXPECT_EQ(verify.decode_seqs, 1u);
  EXPECT_EQ(verify.draft_tokens, 3u);
  EXPECT_NEAR(verify.model_seconds, 0.01 + 0.0001 + 3 * 0.001, 1e-9);
  StepResult second = core.finish_step();
  EXPECT_EQ(second.events[0].token_count, 4u);
  auto [rest, rest_steps] = collect_tokens(core, 1);
  EXPECT_EQ(rest_steps, 2);  // 1 + 4 + 4 + 4 = 13: the last step proposes only what can be kept
  std::vector<std::uint32_t> spec_tokens = {first.events[0].tokens[0]};
  spec_tokens.insert(spec_tokens.end(), second.events[0].tokens.begin(), second.events[0].tokens.begin() + 4);
  spec_tokens.insert(spec_tokens.end(), rest.begin(), rest.end());
  EXPECT_EQ(spec_tokens, plain_tokens);
  EngineStats s = stats_of(core);
  EXPECT_EQ(s.spec_drafts, 3u);
  EXPECT_EQ(s.spec_draft_tokens, 9u);
  EXPECT_EQ(s.spec_accepted_tokens, 9u);
  EXPECT_EQ(s.generation_tokens_total, 13u);
  EXPECT_EQ(stats_of(plain).spec_drafts, 0u);
}

// Tests the per-position acceptance model: at acceptance 0.6 position j is kept about 0.6^(j+1)
// of the time, counts fall with position, and the spec_acceptance fault (0.2) lowers every
// position at once; acceptance 0 keeps nothing and emits one token per step.
TEST(EngineCoreTest, SpeculativeAcceptancePerPositionAndFault) {
  auto run = [](double acceptance, const FaultSet& faults) {
    CoreConfig config;
    config.speculative_tokens = 3;
    config.speculative_acceptance = acceptance;
    EngineCore core(config, simple_profile());
    core.set_faults(faults);
    for (SequenceId id = 1; id <= 40; ++id) {
      GenerationRequest r = request(16, 400, 1000 + 100 * static_cast<std::uint32_t>(id));
      r.seed = id;
      EXPECT_TRUE(core.submit(id, std::move(r)));
    }
    run_to_end(core, 100000);
    return stats_of(core);
  };
  const EngineStats s = run(0.6, FaultSet{});
  ASSERT_GT(s.spec_drafts, 1000u);
  const double drafts = static_cast<double>(s.spec_drafts);
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(s.spec_accepted_per_position[j] / drafts, std::pow(0.6, j + 1), 0.03) << j;
  EXPECT_GE(s.spec_accepted_per_position[0], s.spec_accepted_per_position[1]);
  EXPECT_GE(s.spec_accepted_per_position[1], s.spec_accepted_per_position[2]);
  EXPECT_EQ(s.spec_accepted_per_position[3], 0u);
  EXPECT_EQ(s.spec_accepted_tokens, s.spec_accepted_per_position[0] + s.spec_accepted_per_position[1] +
                                        s.spec_accepted_per_position[2]);
  FaultSet drop;
  drop.spec_acceptance = 0.2;
  const EngineStats d = run(0.6, drop);
  EXPECT_NEAR(d.spec_accepted_per_position[0] / static_cast<double>(d.spec_drafts), 0.2, 0.03);
  EXPECT_GT(d.spec_drafts, s.spec_drafts);  // fewer tokens per step: more steps for the same outputs
  EXPECT_EQ(d.generation_tokens_total, s.generation_tokens_total);
  const EngineStats none = run(0, FaultSet{});
  EXPECT_EQ(none.spec_accepted_tokens, 0u);
  EXPECT_EQ(none.generation_tokens_total, 40u * 400u);
}

// Tests that with prefix caching off nothing is ever reused.
TEST(EngineCoreTest, PrefixCachingOffNeverHits) {
  CoreConfig config;
  config.enable_prefix_caching = false;
  EngineCore core(config, simple_profile());
  ASSERT_TRUE(core.submit(1, request(64, 1)));
  run_to_end(core);
  ASSERT_TRUE(core.submit(2, request(64, 1)));
  EXPECT_EQ(core.plan_step().prefill_tokens, 64u);
  EXPECT_EQ(stats_of(core).prefix_hit_tokens, 0u);
}

// Tests that abort frees blocks at once, even in the middle of a planned step, and that the
// step then skips the aborted sequence.
TEST(EngineCoreTest, AbortFreesBlocksAtOnce) {
  EngineCore core(CoreConfig{}, simple_profile());
  ASSERT_TRUE(core.submit(1, request(100, 10)));
  ASSERT_TRUE(core.submit(2, request(100, 10, 3000)));
  (void)core.plan_step();
  EXPECT_GT(stats_of(core).kv_blocks_used, 0u);
  EXPECT_TRUE(core.abort(1));
  EXPECT_FALSE(core.abort(1));
  StepResult r = core.finish_step();
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].id, 2u);
  EXPECT_TRUE(core.abort(2));
  EXPECT_EQ(stats_of(core).kv_blocks_used, 0u);
  EXPECT_FALSE(core.has_work());
}

// Tests the natural (EOS) length: without ignore_eos the same seed always stops at the same
// length, "stop" below max_tokens, "length" when capped.
TEST(EngineCoreTest, NaturalLengthIsSeeded) {
  auto tokens_for = [](std::uint64_t seed, std::uint32_t max_tokens, FinishReason* reason) {
    EngineCore core(CoreConfig{}, simple_profile());
    GenerationRequest r = request(10, max_tokens);
    r.ignore_eos = false;
    r.seed = seed;
    (void)core.submit(1, r);
    std::uint32_t n = 0;
    for (int i = 0; i < 100000 && core.has_work(); ++i) {
      (void)core.plan_step();
      for (const auto& ev : core.finish_step().events) {
        n += ev.token_count;
        if (ev.finished) *reason = ev.reason;
      }
    }
    return n;
  };
  const std::uint32_t natural = natural_output_length(42);
  ASSERT_GT(natural, 1u);
  ASSERT_LT(natural, 8000u);
  FinishReason reason{};
  EXPECT_EQ(tokens_for(42, 8000, &reason), natural);
  EXPECT_EQ(reason, FinishReason::kStop);
  EXPECT_EQ(tokens_for(42, natural - 1, &reason), natural - 1);
  EXPECT_EQ(reason, FinishReason::kLength);
}

// Tests submit validation: empty prompt, zero max_tokens, too long for max_model_len or KV.
TEST(EngineCoreTest, RejectsRequestsThatCanNeverRun) {
  CoreConfig config;
  config.max_model_len = 100;
  config.kv_capacity_tokens = 64;
  EngineCore core(config, simple_profile());
  EXPECT_FALSE(core.submit(1, request(0, 5)));
  EXPECT_FALSE(core.submit(2, request(5, 0)));
  EXPECT_FALSE(core.submit(3, request(100, 5)));
  auto too_big = core.submit(4, request(70, 5));
  ASSERT_FALSE(too_big);
  EXPECT_NE(too_big.error().message.find("cannot schedule request from client"), std::string::npos);
  EXPECT_TRUE(core.submit(5, request(40, 5)));
  EXPECT_FALSE(core.submit(5, request(40, 5)));  // duplicate id
}

// Tests that output stops at max_model_len with "length".
TEST(EngineCoreTest, StopsAtMaxModelLen) {
  CoreConfig config;
  config.max_model_len = 20;
  EngineCore core(config, simple_profile());
  ASSERT_TRUE(core.submit(1, request(15, 100)));
  std::uint32_t n = 0;
  FinishReason reason{};
  for (int i = 0; i < 100 && core.has_work(); ++i) {
    (void)core.plan_step();
    for (const auto& ev : core.finish_step().events) {
      n += ev.token_count;
      if (ev.finished) reason = ev.reason;
    }
  }
  EXPECT_EQ(n, 5u);
  EXPECT_EQ(reason, FinishReason::kLength);
}

}  // namespace
}  // namespace inferscope::serve
