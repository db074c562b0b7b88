// File: solo_scheduler.h
// SoloScheduler: requests that never share a step, as a thread-pool server runs them (the seed's
// mock server: FastAPI runs its blocking handler on 40 threads, the rest queue). Each request
// alone costs request_overhead + prefill_token x prompt + forward_base per output token (the
// seed formula with seed-mock's numbers); no KV cache, no batching. Pure model time, no clock.
// Example: SoloScheduler s(profile, 40, 8192); s.submit(1, req, 0.0); auto ev = s.advance(1.0);
// Thread safety: none; one thread only. Never throws after construction.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "inferscope/common/result.h"
#include "serve/engine/cost_profile.h"
#include "serve/engine/engine_types.h"

namespace inferscope::serve {

// SoloEvent is one sequence event at its own model time, in time order.
struct SoloEvent {
  enum class Kind { kScheduled, kPrefillDone, kToken, kFinished };
  SequenceId id = 0;
  Kind kind = Kind::kScheduled;
  double at = 0;               // model seconds
  std::uint32_t token = 0;     // kToken
  FinishReason reason = FinishReason::kStop;  // kFinished
};

// SoloScheduler runs up to `workers` requests at once, each on its own timeline, FIFO after that.
class SoloScheduler {
 public:
  // SoloScheduler keeps a copy of `profile`; `workers` >= 1 (Engine::start validates).
  SoloScheduler(const CostProfile& profile, std::uint32_t workers, std::uint32_t max_model_len);

  // check reports whether `request` could ever run (prompt non-empty and < max_model_len, max_tokens >= 1).
  Result<void> check(const GenerationRequest& request) const;
  // submit queues `request` arriving at model time `at` (non-decreasing across calls); it starts
  // at once when a worker is free. Its kScheduled event comes out of the next advance().
  Result<void> submit(SequenceId id, const GenerationRequest& request, double at);
  // abort ends a live sequence at model time `at` (its worker takes the next waiting one); false if unknown.
  bool abort(SequenceId id, double at);
  // abort_all ends every live sequence and returns their ids.
  std::vector<SequenceId> abort_all();
  // next_event_at returns the model time of the earliest pending event, or nullopt when idle.
  std::optional<double> next_event_at() const;
  // advance returns, in time order, every event at or before model time `until`.
  std::vector<SoloEvent> advance(double until);
  // fill_stats writes running, waiting and token counters into `out` (no KV: zero blocks).
  void fill_stats(EngineStats& out) const;

 private:
  struct Sequence {
    SequenceId id = 0;
    std::uint64_t seed = 0;
    std::uint32_t prompt_len = 0, outputs = 0, target_outputs = 0;
    FinishReason target_reason = FinishReason::kStop;
    double start = 0;            // when its worker took it
    bool scheduled_sent = false;  // kScheduled delivered
  };
  double first_token_at(const Sequence& s) const;
  double next_at(const Sequence& s) const;
  void start_waiting(double at);

  CostProfile profile_;
  std::uint32_t workers_, max_model_len_;
  std::unordered_map<SequenceId, Sequence> running_;
  std::deque<Sequence> waiting_;
  std::uint64_t prompt_tokens_ = 0, generation_tokens_ = 0;
};

}  // namespace inferscope::serve
