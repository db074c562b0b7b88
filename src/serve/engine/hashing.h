// File: hashing.h
// Small deterministic 64-bit mixing used by the tokenizer, the text generator, output lengths
// and prefix-cache block hashes. Results are identical on every platform and run (no std::hash).
// Example: std::uint64_t h = mix64(seed ^ index);
// Thread safety: pure functions. Not cryptographic; never use for anything secret.
#pragma once

#include <cstdint>
#include <string_view>

namespace inferscope::serve {

// mix64 is the splitmix64 finalizer: a bijective, well-spread hash of one 64-bit value.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// hash_bytes is FNV-1a over `bytes`, then mixed; stable across runs.
constexpr std::uint64_t hash_bytes(std::string_view bytes) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ULL;
  }
  return mix64(h);
}

// unit_double maps a hash to [0, 1).
constexpr double unit_double(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

}  // namespace inferscope::serve
