// File: engine_types.h
// Value types shared by the simulated engine and its users (the HTTP layer, serve metrics):
// requests, the per-sequence observer interface, per-step info, stats and engine options.
// Example: GenerationRequest r{tokenizer.encode(prompt), 64, false, 7};
// Thread safety: plain value types; SequenceObserver methods run on the engine thread.
// Must never depend on Boost.Asio or any HTTP type (included by every serve unit).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "inferscope/metrics/clock.h"
#include "inferscope/timeline/request_timeline.h"

namespace inferscope::serve {

// kMaxSpeculativeTokens bounds --speculative-tokens (draft positions per step): a step's tokens
// for one sequence fit a fixed array, so speculation allocates nothing per step.
inline constexpr std::uint32_t kMaxSpeculativeTokens = 8;

// kMaxLoraAdapters bounds --lora-modules: adapter sets are bitmasks (no allocation per step).
inline constexpr std::uint32_t kMaxLoraAdapters = 64;

// SteadyTime is the clock every engine timestamp is taken on.
using SteadyTime = std::chrono::steady_clock::time_point;

// SequenceId names one submitted sequence; unique per Engine (never reused).
using SequenceId = std::uint64_t;

// FinishReason says why a sequence ended: the timeline's enum (one vocabulary from engine to
// metrics), spelled like vLLM/OpenAI finish reasons; timeline::to_string names it.
using FinishReason = timeline::FinishReason;
using timeline::to_string;

// GenerationRequest is one sequence to generate.
struct GenerationRequest {
  std::vector<std::uint32_t> prompt_tokens;  // from Tokenizer::encode; KV blocks + prefix hashes
  std::uint32_t max_tokens = 16;             // output cap
  bool ignore_eos = false;                   // true: generate exactly max_tokens (finish "length")
  std::uint64_t seed = 0;                    // decides the natural (EOS) length and the token ids
  std::uint32_t lora = 0;                    // LoRA adapter 1..N (--lora-modules order); 0 = base model
  // kv_present: the prompt's KV cache was transferred here (a decode worker of a disaggregated
  // fleet): on admission its blocks are allocated and every prompt token but the last counts as
  // computed, so the first step computes one token (the first output), as vLLM's decode instance
  // does with a KV connector. A preempted sequence recomputes its prompt locally.
  bool kv_present = false;
};

// SequenceObserver receives one sequence's events ON THE ENGINE THREAD; implementations must be
// quick and must not call back into Engine synchronously (post instead). `when` is the engine's
// (virtual, scaled real) time of the event, never later than the call itself.
class SequenceObserver {
 public:
  virtual ~SequenceObserver() = default;
  // on_scheduled: left the waiting queue for the first time (start of its first step).
  virtual void on_scheduled(SteadyTime when) = 0;
  // on_prefill_done: whole prompt computed (chunked prefill may take several steps); once.
  virtual void on_prefill_done(SteadyTime when) = 0;
  // on_tokens: new output tokens (1 per step; with speculative decoding 1 + the drafts accepted);
  // the first call follows on_prefill_done.
  virtual void on_tokens(std::span<const std::uint32_t> ids, SteadyTime when) = 0;
  // on_preempted: KV blocks taken back; the sequence will be recomputed (queue again).
  virtual void on_preempted(SteadyTime when) = 0;
  // on_finished: always called exactly once (also after abort and stop); last call.
  virtual void on_finished(FinishReason reason, SteadyTime when) = 0;
  // on_last_tokens: the final tokens and the finish of the same step, delivered together so a
  // consumer never sees the tokens without knowing they are the last (vLLM's stream shape puts
  // finish_reason on the last content chunk). Default: on_tokens, then on_finished.
  virtual void on_last_tokens(std::span<const std::uint32_t> ids, FinishReason reason, SteadyTime when) {
    on_tokens(ids, when);
    on_finished(reason, when);
  }
};

// StepInfo describes one finished engine step (for iteration metrics).
struct StepInfo {
  std::uint32_t prefill_tokens = 0;  // prompt (or recompute) tokens computed in the step
  std::uint32_t decode_seqs = 0;     // sequences that decoded (one token, or a verified draft)
  double model_seconds = 0;          // the step's cost in model time (faults included)
  SteadyTime end;                    // when the step ended (scaled real time)
  std::uint32_t draft_tokens = 0;    // speculative drafts verified beside the decoding sequences
};

// EngineStats is a consistent copy of the engine's state; cheap to take from any thread.
struct EngineStats {
  std::uint32_t running = 0, waiting = 0;
  double kv_usage = 0;  // 0..1 of the (fault-reduced) KV capacity in use
  std::uint64_t kv_blocks_total = 0, kv_blocks_used = 0;
  std::uint64_t preemptions_total = 0, prefix_queries_tokens = 0, prefix_hit_tokens = 0;
  std::uint64_t prompt_tokens_total = 0, generation_tokens_total = 0;
  // Speculative decoding (vLLM's spec_decode counters): draft rounds, tokens proposed, tokens
  // accepted, and accepted tokens per draft position (0 .. K-1; non-increasing by position).
  std::uint64_t spec_drafts = 0, spec_draft_tokens = 0, spec_accepted_tokens = 0;
  std::array<std::uint64_t, kMaxSpeculativeTokens> spec_accepted_per_position{};
  // LoRA adapters (EngineOptions::max_loras > 0): bit a-1 set for adapter a. running: adapters of
  // running sequences; waiting: adapters of waiting sequences; loaded: adapters in GPU slots.
  std::uint64_t lora_running = 0, lora_waiting = 0, lora_loaded = 0;
  std::uint32_t lora_slots = 0;             // slots now (max_loras, or the max_loras fault's cut)
  std::uint32_t lora_waiting_requests = 0;  // waiting sequences whose adapter is not loaded
  std::uint64_t lora_loads_total = 0;       // adapter loads into a slot
  double lora_load_seconds_total = 0;       // model seconds spent loading adapters
  double busy_fraction = 0;  // share of recent wall time spent in steps (simulated GPU util)
  // Simulated GPU: memory used (weights + KV in use) and total bytes, temperature, power, energy.
  double gpu_memory_used_bytes = 0, gpu_memory_total_bytes = 0, gpu_temperature_c = 0,
         gpu_power_w = 0;
  double gpu_energy_mj = 0;  // total energy since start, millijoules (DCGM's unit)
  // Additions beyond serve-api.md:
  std::uint64_t steps_total = 0;     // engine steps run
  double busy_model_seconds = 0;     // total model seconds spent in steps (incl. stall)
  // Wall seconds the engine took no step while it had requests to run (a scheduler that stopped:
  // the worker_stall fault), the hold in progress included: the direct signal of a stall that
  // sampled gauges catch only by chance (docs/doctor.md, worker_stall).
  double held_seconds = 0;
  double model_seconds = 0;          // model clock: (now - start) * time_scale
  std::uint64_t publish_seq = 0;     // bumps each time the engine thread publishes its state
};

// EngineOptions configures an Engine; validated by Engine::start.
struct EngineOptions {
  std::string profile = "llama-3.1-8b-h100-bf16";  // cost-model profile name (deploy/profiles)
  // max_num_seqs: sequences per step (for an independent-requests profile: requests running at
  // once); 0 = the profile's value (seed-mock: 40, FastAPI's thread pool), else 256.
  std::uint32_t max_num_seqs = 0, max_num_batched_tokens = 8192, max_model_len = 8192;
  std::uint64_t kv_capacity_tokens = 0;  // 0 = the profile's value
  std::uint32_t block_size = 16;
  bool enable_prefix_caching = true;
  // Speculative decoding: draft tokens proposed per decoding sequence and step (0 = off, at most
  // kMaxSpeculativeTokens), each accepted with `speculative_acceptance` while the ones before it
  // were (a geometric chain: position j is accepted with probability acceptance^(j+1)).
  std::uint32_t speculative_tokens = 0;
  double speculative_acceptance = 0.7;
  // LoRA: GPU slots for adapters (vLLM's --max-loras; 0 = LoRA off) and how many adapters exist
  // (GenerationRequest::lora <= lora_adapters). A request whose adapter is not loaded waits until
  // a slot is free of running requests; loading costs the profile's lora_load_s.
  std::uint32_t max_loras = 0, lora_adapters = 0;
  std::uint32_t max_waiting = 1024;  // waiting-queue bound: submit fails beyond it (-> 429/503)
  double time_scale = 1.0;           // 10 = ten times faster than real time
  // Additions beyond serve-api.md:
  std::string profiles_path;  // extra profile JSON file or folder; empty = built-in profiles only
  double busy_window_s = 1.0;  // real seconds over which busy_fraction (GPU util) is averaged
  // clock: null = the steady clock, and steps wait on real timers. A non-null clock (tests: a
  // metrics::ManualClock, which must outlive the engine) is only re-read when something is posted to
  // the engine; steps that fall due as it moves run in Engine::catch_up(), so tests never sleep.
  const metrics::Clock* clock = nullptr;
};

}  // namespace inferscope::serve
