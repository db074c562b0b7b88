// File: text_generator.h
// TextGenerator: deterministic output text for the simulated engine's token ids, and the
// deterministic choice of output token ids and natural (EOS) lengths from a request seed.
// Example: TextGenerator gen(42); std::string s = gen.token_text(output_token_id(7, 0));
// Thread safety: immutable after construction; const methods safe from any thread.
// Each token text re-encodes with Tokenizer to exactly one token (usage counts agree).
#pragma once

#include <cstdint>
#include <string>

#include "serve/engine/hashing.h"
#include "serve/engine/tokenizer.h"

namespace inferscope::serve {

// TextGenerator maps token ids to short English-looking pieces (" the", " cat", ".", ",").
class TextGenerator {
 public:
  // TextGenerator with a seed: the same (seed, id) always gives the same text.
  explicit TextGenerator(std::uint64_t seed = 0) : seed_(seed) {}
  // token_text returns the text of one token: a word of at most 4 letters with a leading
  // space, or a single punctuation mark. Cost: one hash and a small copy.
  std::string token_text(std::uint32_t token_id) const;

 private:
  std::uint64_t seed_;
};

// output_token_key is the per-request half of output_token_id: mix64(seed), so a caller that
// emits many tokens of one request (EngineCore) hashes the seed once, not once per token.
constexpr std::uint64_t output_token_key(std::uint64_t seed) { return mix64(seed); }

// output_token_id_keyed(output_token_key(seed), index) == output_token_id(seed, index).
constexpr std::uint32_t output_token_id_keyed(std::uint64_t key, std::uint32_t index) {
  const std::uint64_t h = mix64(key ^ (0xA5A5'0000'0000ULL + index));
  return Tokenizer::kFirstId + static_cast<std::uint32_t>(h % (Tokenizer::kVocabSize - Tokenizer::kFirstId));
}

// output_token_id returns the id of the index-th output token of a request with `seed`.
std::uint32_t output_token_id(std::uint64_t seed, std::uint32_t index);

// natural_output_length returns how many tokens a request with `seed` generates before EOS:
// log-normal, median 128, sigma 1.0 (a ShareGPT-like spread), at least 1, at most 65536.
std::uint32_t natural_output_length(std::uint64_t seed);

}  // namespace inferscope::serve
