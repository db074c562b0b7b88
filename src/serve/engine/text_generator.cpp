// Word list and seed-driven choices of the simulated engine's output.
#include "serve/engine/text_generator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "serve/engine/hashing.h"
#include "serve/engine/tokenizer.h"

namespace inferscope::serve {
namespace {

// Words of at most 4 letters so each is exactly one Tokenizer token.
constexpr std::array<std::string_view, 64> kWords = {
    "the", "of", "and", "to", "a", "in", "is", "it", "you", "that", "he", "was", "for", "on",
    "are", "with", "as", "they", "be", "at", "one", "have", "this", "from", "or", "had", "by",
    "hot", "word", "but", "what", "some", "we", "can", "out", "not", "were", "all", "here",
    "when", "up", "use", "your", "how", "said", "an", "each", "she", "who", "do", "than",
    "time", "if", "will", "way", "more", "many", "then", "them", "long", "no", "like", "so",
    "make"};
constexpr std::array<std::string_view, 4> kMarks = {".", ",", ";", "!"};

}  // namespace

std::string TextGenerator::token_text(std::uint32_t token_id) const {
  std::uint64_t h = mix64(seed_ ^ mix64(token_id));
  if (h % 13 == 0) return std::string(kMarks[(h >> 8) % kMarks.size()]);
  std::string_view word = kWords[(h >> 8) % kWords.size()];
  std::string out;
  out.reserve(word.size() + 1);
  out.push_back(' ');
  out.append(word);
  return out;
}

std::uint32_t output_token_id(std::uint64_t seed, std::uint32_t index) {
  return output_token_id_keyed(output_token_key(seed), index);
}

std::uint32_t natural_output_length(std::uint64_t seed) {
  // Box-Muller from two hashes of the seed.
  double u1 = unit_double(mix64(seed ^ 0x5EED'0001ULL));
  double u2 = unit_double(mix64(seed ^ 0x5EED'0002ULL));
  double z = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * 3.141592653589793 * u2);
  double len = std::round(128.0 * std::exp(1.0 * z));
  return static_cast<std::uint32_t>(std::clamp(len, 1.0, 65536.0));
}

}  // namespace inferscope::serve
