// The request the engine tests submit: a prompt of consecutive token ids and a fixed output length
// (EOS ignored), so a test's schedule depends only on the two lengths. Test-only.
#pragma once

#include <cstdint>
#include <numeric>

#include "serve/engine/engine_types.h"

namespace inferscope::serve::engine_test {

inline GenerationRequest request(std::uint32_t prompt_len, std::uint32_t max_tokens, std::uint32_t first_token = 1000) {
  GenerationRequest r;
  r.prompt_tokens.resize(prompt_len);
  std::iota(r.prompt_tokens.begin(), r.prompt_tokens.end(), first_token);
  r.max_tokens = max_tokens;
  r.ignore_eos = true;
  return r;
}

}  // namespace inferscope::serve::engine_test
