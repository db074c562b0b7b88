// File: tokenizer.h
// Tokenizer: a deterministic stand-in for a BPE tokenizer, used to count prompt tokens and to
// derive token ids for KV blocks and prefix-cache hashes (~4 characters per token on English).
// Example: std::vector<std::uint32_t> ids = Tokenizer().encode("Hi, world");  // 4 ids: "Hi" "," " worl" "d"
// Thread safety: stateless apart from its seed; const methods are safe from any thread.
// Never allocates beyond the returned vector; never fails (any bytes are accepted).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace inferscope::serve {

// Tokenizer splits text into pieces and maps each piece to an id in [kFirstId, kVocabSize).
// Rules (documented approximation, docs/serve-engine.md):
//   * a word (ASCII letters/digits/'_') with its one leading space: ceil(len / 4) tokens;
//   * each ASCII punctuation or symbol character: 1 token;
//   * whitespace beyond the single space attached to a word: 1 token per newline, plus
//     1 token per 4 other whitespace characters;
//   * each non-ASCII UTF-8 character (CJK, emoji, accented letters): 1 token.
// The same text always gives the same ids; equal prefixes give equal id prefixes (prefix caching).
class Tokenizer {
 public:
  static constexpr std::uint32_t kVocabSize = 128256;  // Llama-3 vocabulary size
  static constexpr std::uint32_t kFirstId = 256;       // ids below are never produced

  // Tokenizer with a seed: different seeds give different (but equally long) id sequences.
  explicit Tokenizer(std::uint64_t seed = 0) : seed_(seed) {}

  // encode returns the ids of `text`. Cost: O(text.size()).
  std::vector<std::uint32_t> encode(std::string_view text) const;
  // count returns encode(text).size() without building the vector.
  std::size_t count(std::string_view text) const;

 private:
  template <class Sink>
  void split(std::string_view text, Sink&& sink) const;
  std::uint64_t seed_;
};

}  // namespace inferscope::serve
