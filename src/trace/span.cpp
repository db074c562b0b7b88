// File: span.cpp
#include "trace/span.h"

#include <algorithm>
#include <random>

namespace inferscope::trace {
namespace {

std::mt19937_64& id_generator() {
  thread_local std::mt19937_64 generator{[] {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device()};
    return std::mt19937_64(seed);
  }()};
  return generator;
}

template <std::size_t N>
std::array<std::uint8_t, N> random_id() {
  std::array<std::uint8_t, N> id{};
  do {
    for (std::size_t i = 0; i < N; i += 8) {
      std::uint64_t word = id_generator()();
      for (std::size_t j = 0; j < 8 && i + j < N; ++j) id[i + j] = static_cast<std::uint8_t>(word >> (8 * j));
    }
  } while (is_zero(id));
  return id;
}

}  // namespace

bool Span::is_root() const noexcept { return is_zero(parent_span_id); }

const AttributeValue* Span::attribute(std::string_view key) const noexcept {
  for (const Attribute& a : attributes) {
    if (a.key == key) return &a.value;
  }
  return nullptr;
}

bool is_zero(std::span<const std::uint8_t> id) noexcept {
  return std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; });
}

void write_hex(std::span<const std::uint8_t> bytes, char* out) noexcept {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0x0f];
  }
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  std::string out(bytes.size() * 2, '0');
  write_hex(bytes, out.data());
  return out;
}

TraceIdHex trace_id_hex(const TraceId& id) noexcept {
  TraceIdHex hex;
  write_hex(id, hex.chars.data());
  return hex;
}

TraceId random_trace_id() { return random_id<16>(); }
SpanId random_span_id() { return random_id<8>(); }

}  // namespace inferscope::trace
