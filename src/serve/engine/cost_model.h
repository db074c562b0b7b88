// File: cost_model.h
// The per-step cost model: model seconds of one engine step from its shape (prefill tokens and
// their context, decoding sequences and their context, newly scheduled requests), a CostProfile
// and the slowdown faults. Formula and calibration: docs/serve-engine.md.
// Example: double s = step_cost(profile, StepShape{.prefill_tokens = 512}, 1.0, 1.0);
// Thread safety: pure functions. Never allocates.
#pragma once

#include <cstdint>

#include "serve/engine/cost_profile.h"

namespace inferscope::serve {

// StepShape summarises what one step computes.
struct StepShape {
  std::uint32_t prefill_tokens = 0;
  double prefill_context = 0;         // sum over prefill tokens of the tokens before them
  std::uint32_t decode_seqs = 0;
  std::uint64_t decode_context = 0;   // sum over decoding sequences of their context length
  std::uint32_t new_requests = 0;     // requests scheduled for the first time in this step
  std::uint32_t draft_tokens = 0;     // speculative drafts verified beside the decoding sequences
};

// step_cost returns the step's model seconds: (overhead + forward_base) scaled by the decode
// factor when the step decodes (else the prefill factor), plus prefill terms x prefill_factor,
// plus decode terms x decode_factor. A verified draft token is one more token of the decode
// pass: it costs prefill_token_s (its compute; the KV it reads is the sequence's, read once)
// under the decode factor. Drafting itself (n-gram, EAGLE heads) is taken as free. An empty
// step costs 0.
double step_cost(const CostProfile& p, const StepShape& s, double prefill_factor, double decode_factor);

// solo_output_cap returns the most output tokens a request with `prompt_len` tokens may produce
// so that, running alone, it ends within p.max_request_s (seed-mock's "at most 5 s"); at least
// 1; UINT32_MAX when the profile sets no cap.
std::uint32_t solo_output_cap(const CostProfile& p, std::uint32_t prompt_len);

}  // namespace inferscope::serve
