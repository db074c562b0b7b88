// Piece splitting shared by encode() and count(); one pass, no regex.
#include "serve/engine/tokenizer.h"

#include "serve/engine/hashing.h"

namespace inferscope::serve {
namespace {

bool is_word(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// utf8_length returns the byte length of the character starting with `lead` (1 for bad bytes).
std::size_t utf8_length(unsigned char lead) {
  if (lead >= 0xF0 && lead < 0xF8) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

}  // namespace

template <class Sink>
void Tokenizer::split(std::string_view text, Sink&& sink) const {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    auto c = static_cast<unsigned char>(text[i]);
    std::size_t start = i;
    if (c == ' ' && i + 1 < n && is_word(static_cast<unsigned char>(text[i + 1]))) ++i;  // leading space
    if (i < n && is_word(static_cast<unsigned char>(text[i]))) {
      std::size_t word = i;
      while (i < n && is_word(static_cast<unsigned char>(text[i]))) ++i;
      // A long word becomes several 4-character pieces; the first keeps the leading space.
      std::size_t piece = start;
      for (std::size_t at = word + 4; at < i; at += 4) {
        sink(text.substr(piece, at - piece));
        piece = at;
      }
      sink(text.substr(piece, i - piece));
    } else if (is_space(c)) {
      // Newlines are one token each, other whitespace one per 4 characters; a space directly
      // before a word is left for the word (the first branch takes it on the next turn).
      std::size_t run = i;
      while (i < n && is_space(static_cast<unsigned char>(text[i]))) {
        if (text[i] == ' ' && i + 1 < n && is_word(static_cast<unsigned char>(text[i + 1]))) break;
        if (text[i] == '\n') {
          if (i > run) sink(text.substr(run, i - run));
          sink(text.substr(i, 1));
          run = ++i;
          continue;
        }
        if (++i - run == 4) {
          sink(text.substr(run, 4));
          run = i;
        }
      }
      if (i > run) sink(text.substr(run, i - run));
    } else if (c < 0x80) {
      sink(text.substr(i, 1));
      ++i;
    } else {
      std::size_t len = utf8_length(c);
      if (i + len > n) len = n - i;
      sink(text.substr(i, len));
      i += len;
    }
  }
}

std::vector<std::uint32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<std::uint32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  split(text, [&](std::string_view piece) {
    std::uint64_t h = mix64(hash_bytes(piece) ^ seed_);
    ids.push_back(kFirstId + static_cast<std::uint32_t>(h % (kVocabSize - kFirstId)));
  });
  return ids;
}

std::size_t Tokenizer::count(std::string_view text) const {
  std::size_t n = 0;
  split(text, [&](std::string_view) { ++n; });
  return n;
}

}  // namespace inferscope::serve
