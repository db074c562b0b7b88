// File: trace_context.cpp
// Rules: w3c/trace-context spec/20-http_request_header_format.md (header format, invalid values)
// and spec/30-processing-model.md (what a receiver and a proxy do with it).
#include "trace/trace_context.h"

#include <cmath>

namespace inferscope::trace {
namespace {

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // uppercase is invalid in traceparent
}

template <std::size_t N>
bool parse_hex(std::string_view text, std::array<std::uint8_t, N>& out) noexcept {
  if (text.size() != 2 * N) return false;
  for (std::size_t i = 0; i < N; ++i) {
    const int high = hex_value(text[2 * i]);
    const int low = hex_value(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    out[i] = static_cast<std::uint8_t>(high << 4 | low);
  }
  return true;
}

constexpr std::size_t kVersion00Size = 55;  // 2 + 1 + 32 + 1 + 16 + 1 + 2

}  // namespace

std::optional<TraceParent> parse_traceparent(std::string_view header) noexcept {
  if (header.size() < kVersion00Size) return std::nullopt;
  std::array<std::uint8_t, 1> version{};
  if (!parse_hex(header.substr(0, 2), version) || version[0] == 0xff) return std::nullopt;
  if (version[0] == 0 && header.size() != kVersion00Size) return std::nullopt;
  if (version[0] != 0 && header.size() > kVersion00Size && header[kVersion00Size] != '-') return std::nullopt;
  if (header[2] != '-' || header[35] != '-' || header[52] != '-') return std::nullopt;
  TraceParent parent;
  std::array<std::uint8_t, 1> flags{};
  if (!parse_hex(header.substr(3, 32), parent.trace_id) || !parse_hex(header.substr(36, 16), parent.parent_id) ||
      !parse_hex(header.substr(53, 2), flags)) {
    return std::nullopt;
  }
  if (is_zero(parent.trace_id) || is_zero(parent.parent_id)) return std::nullopt;
  parent.flags = flags[0];
  return parent;
}

std::string format_traceparent(const TraceId& trace_id, const SpanId& span_id, std::uint8_t flags) {
  const std::uint8_t kept = flags & 0x03;
  // "00-" 32 hex "-" 16 hex "-" 2 hex, written in place: one allocation per forwarded request.
  std::string out = "00-________________________________-________________-__";
  write_hex(trace_id, out.data() + 3);
  write_hex(span_id, out.data() + 36);
  write_hex(std::span<const std::uint8_t>(&kept, 1), out.data() + 53);
  return out;
}

bool head_sampled(const TraceId& trace_id, const std::optional<TraceParent>& parent, double ratio) noexcept {
  if (parent) return parent->sampled();
  if (!(ratio > 0)) return false;
  if (ratio >= 1) return true;
  std::uint64_t low = 0;
  for (std::size_t i = 8; i < 16; ++i) low = low << 8 | trace_id[i];
  return static_cast<double>(low) < std::ldexp(ratio, 64);
}

}  // namespace inferscope::trace
