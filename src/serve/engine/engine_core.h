// File: engine_core.h
// EngineCore: the pure, deterministic vLLM-like scheduler - continuous batching, chunked prefill,
// paged KV with prefix caching, speculative decoding, recompute preemption, step costs. No clock, threads or I/O: the
// driver calls plan_step(), waits plan.model_seconds, then finish_step() (docs/serve-engine.md).
// Example: EngineCore core(config, profile); core.submit(1, req); core.plan_step(); core.finish_step();
// Thread safety: none; one thread only (check() excepted). Never throws after construction.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "inferscope/common/result.h"
#include "serve/engine/cost_model.h"
#include "serve/engine/cost_profile.h"
#include "serve/engine/engine_types.h"
#include "serve/engine/faults.h"
#include "serve/engine/kv_block_manager.h"

namespace inferscope::serve {

// CoreConfig is the scheduler configuration (the EngineOptions subset EngineCore needs).
struct CoreConfig {
  std::uint32_t max_num_seqs = 256, max_num_batched_tokens = 8192, max_model_len = 8192;
  std::uint64_t kv_capacity_tokens = 0;  // 0 = the profile's value
  std::uint32_t block_size = 16;
  bool enable_prefix_caching = true;
  std::uint32_t speculative_tokens = 0;  // drafts per decoding sequence and step; 0 = off
  double speculative_acceptance = 0.7;   // per-position acceptance (EngineOptions)
  std::uint32_t max_loras = 0;           // LoRA adapter slots; 0 = off (EngineOptions)
};

// StepPlan is what the next step does; the scheduling events happen at its start.
struct StepPlan {
  std::uint32_t prefill_tokens = 0, decode_seqs = 0, draft_tokens = 0;
  double model_seconds = 0;                 // cost of the step, faults included
  std::vector<SequenceId> first_scheduled;  // left waiting for the first time -> on_scheduled
  std::vector<SequenceId> preempted;        // KV taken back -> on_preempted
  std::vector<SequenceId> rejected;         // can never fit the (fault-reduced) KV -> kError
  // empty: nothing to compute (the events above may still need delivering).
  bool empty() const { return prefill_tokens == 0 && decode_seqs == 0; }
};

// SequenceEvent is one sequence's outcome of a finished step, in delivery order.
struct SequenceEvent {
  SequenceId id = 0;
  bool prefill_done = false;  // the prompt is fully computed for the first time
  // The tokens generated, in order: one, or with speculative decoding 1 + the drafts accepted.
  // Only the first token_count are set (left uninitialized: no fill per event on the hot path).
  std::uint32_t token_count = 0;
  std::array<std::uint32_t, kMaxSpeculativeTokens + 1> tokens;
  bool finished = false;      // `reason` ended the sequence (its blocks are already free)
  FinishReason reason = FinishReason::kStop;
};

// StepResult is the outcome of the step planned last.
struct StepResult {
  std::vector<SequenceEvent> events;
  std::uint32_t prefill_tokens = 0, decode_seqs = 0, draft_tokens = 0;
  double model_seconds = 0;
};

// EngineCore simulates the engine's scheduling and costs step by step.
class EngineCore {
 public:
  // EngineCore keeps a copy of `profile`. Throws std::invalid_argument on a zero size/limit
  // (setup misuse; Engine::start validates first).
  EngineCore(const CoreConfig& config, const CostProfile& profile);
  ~EngineCore();
  EngineCore(const EngineCore&) = delete;
  EngineCore& operator=(const EngineCore&) = delete;

  // check reports whether `request` could ever run (non-empty prompt shorter than max_model_len,
  // fits the unreduced KV capacity, max_tokens >= 1). Thread-safe: reads only configuration.
  Result<void> check(const GenerationRequest& request) const;
  // submit queues a sequence under the caller's unique `id`; fails like check().
  Result<void> submit(SequenceId id, GenerationRequest request);
  // abort ends a live sequence at once and frees its blocks; returns false if unknown or ended.
  // The caller delivers on_finished(kAbort); a planned step simply skips it at finish_step.
  bool abort(SequenceId id);
  // abort_all ends every live sequence (for stop) and returns their ids.
  std::vector<SequenceId> abort_all();

  // plan_step schedules the next step. BUG (abort) if the previous plan is not finished.
  StepPlan plan_step();
  // finish_step applies the planned step: tokens, prefill completion, finishes.
  StepResult finish_step();
  // step_in_flight reports whether a plan awaits finish_step.
  bool step_in_flight() const { return in_flight_; }
  // has_work reports whether any sequence is waiting or running.
  bool has_work() const { return !running_.empty() || !waiting_.empty(); }

  // set_faults applies decode/prefill_slowdown, kv_capacity, max_num_seqs and spec_acceptance from the next step,
  // and prefix_cache_scramble to the sequences submitted from now on.
  void set_faults(const FaultSet& faults);
  // fill_stats writes running, waiting, KV and token counters into `out`.
  void fill_stats(EngineStats& out) const;
  const CostProfile& profile() const { return profile_; }
  std::uint64_t kv_blocks_capacity() const { return capacity_blocks_; }

 private:
  struct Sequence;
  struct Scheduled {
    SequenceId id;
    std::uint32_t num_new;
    std::uint32_t drafts;  // speculative drafts verified with the decoded token
  };
  bool schedule_running(std::uint32_t& budget, StepPlan& plan, StepShape& shape);
  void schedule_waiting(std::uint32_t& budget, StepPlan& plan, StepShape& shape);
  bool allocate_for(Sequence& seq, std::uint32_t num_new);
  void preempt(Sequence& seq, StepPlan& plan);
  void add_to_step(Sequence& seq, std::uint32_t num_new, StepShape& shape, std::uint32_t drafts = 0);
  std::uint32_t drafts_for(const Sequence& seq, std::uint32_t budget) const;
  std::uint32_t accepted_drafts(const Sequence& seq, std::uint32_t drafts, std::uint64_t threshold) const;
  void commit_full_blocks(Sequence& seq);
  std::size_t full_blocks(const Sequence& seq) const;
  bool full_beyond(const Sequence& seq, std::size_t n) const;
  void hash_blocks(std::span<Sequence* const> seqs);
  void finish(Sequence& seq);
  const std::vector<std::uint64_t>& hashes_for(Sequence& seq, std::size_t full_blocks);
  std::uint32_t effective_max_num_seqs() const;
  std::uint32_t effective_max_loras() const;
  bool admit_lora(const Sequence& seq, std::uint64_t& in_use, double& load_seconds);

  CoreConfig config_;
  CostProfile profile_;
  FaultSet faults_;
  std::uint64_t capacity_blocks_;
  KvBlockManager kv_;
  std::unordered_map<SequenceId, std::unique_ptr<Sequence>> sequences_;
  std::vector<Sequence*> running_;  // scheduling priority order (oldest first)
  std::deque<Sequence*> waiting_;
  std::vector<Scheduled> scheduled_;
  // finish_step's scratch, kept to reuse their storage: the sequences the step advanced (and
  // whether each finishes), and those of them with full blocks to hash.
  std::vector<std::pair<Sequence*, bool>> stepped_;
  std::vector<Sequence*> to_hash_;
  bool in_flight_ = false;
  StepPlan plan_totals_;
  // Counters for EngineStats.
  std::uint64_t preemptions_ = 0, prefix_queries_ = 0, prefix_hits_ = 0;
  std::uint64_t prompt_tokens_ = 0, generation_tokens_ = 0;
  std::uint64_t spec_drafts_ = 0, spec_draft_tokens_ = 0, spec_accepted_ = 0;
  std::array<std::uint64_t, kMaxSpeculativeTokens> spec_accepted_per_position_{};
  // LoRA: adapters in slots (bit a-1), least recently used first in lora_lru_.
  std::uint64_t lora_loaded_ = 0;
  std::vector<std::uint32_t> lora_lru_;
  std::uint64_t lora_loads_ = 0;
  double lora_load_seconds_ = 0;
  double lora_step_seconds_ = 0;  // loads of the step being planned
};

}  // namespace inferscope::serve
