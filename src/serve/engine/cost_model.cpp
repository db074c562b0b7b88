#include "serve/engine/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace inferscope::serve {

double step_cost(const CostProfile& p, const StepShape& s, double prefill_factor, double decode_factor) {
  if (s.prefill_tokens == 0 && s.decode_seqs == 0) return 0;
  double fixed = p.step_overhead_s + p.forward_base_s;
  double prefill = p.prefill_token_s * s.prefill_tokens + p.prefill_attention_s * s.prefill_context +
                   p.request_overhead_s * s.new_requests;
  double decode = p.decode_seq_s * s.decode_seqs + p.decode_kv_token_s * static_cast<double>(s.decode_context) +
                  p.prefill_token_s * s.draft_tokens;
  double fixed_factor = s.decode_seqs > 0 ? decode_factor : prefill_factor;
  return fixed * fixed_factor + prefill * prefill_factor + decode * decode_factor;
}

std::uint32_t solo_output_cap(const CostProfile& p, std::uint32_t prompt_len) {
  constexpr auto kNoCap = std::numeric_limits<std::uint32_t>::max();
  double per_token = p.step_overhead_s + p.forward_base_s + p.decode_seq_s;
  if (p.max_request_s <= 0 || per_token <= 0) return kNoCap;
  double n = prompt_len;
  double prefill = p.request_overhead_s + p.prefill_token_s * n + p.prefill_attention_s * n * n / 2;
  double tokens = std::floor((p.max_request_s - prefill) / per_token + 1e-9);
  return static_cast<std::uint32_t>(std::clamp(tokens, 1.0, 4e9));
}

}  // namespace inferscope::serve
