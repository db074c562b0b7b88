// File: utf8_truncate.h
// Cutting message text to a service's byte limit without splitting a UTF-8 sequence.
// Example: std::string t = truncate_utf8(text, 4096, "\n…[truncated]");
// Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace inferscope::relay {

// kTruncatedMarker is appended where text was cut.
inline constexpr std::string_view kTruncatedMarker = "\n…[truncated]";

// utf8_prefix_length returns the largest n <= max_bytes such that text[0, n) ends on a UTF-8
// character boundary (a continuation byte never starts the cut).
std::size_t utf8_prefix_length(std::string_view text, std::size_t max_bytes) noexcept;

// truncate_utf8 returns text unchanged when it fits in max_bytes; otherwise the longest
// boundary-aligned prefix followed by `marker`, the whole at most max_bytes long (just the
// marker's own prefix when max_bytes is smaller than the marker).
std::string truncate_utf8(std::string_view text, std::size_t max_bytes, std::string_view marker = kTruncatedMarker);

}  // namespace inferscope::relay
