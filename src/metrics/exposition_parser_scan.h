// File: exposition_parser_scan.h
// Internal to the exposition parser (do not include from elsewhere): character classes, UTF-8
// validation, number and escape scanning shared by exposition_parser*.cpp.
// Example: if (auto bad = first_invalid_utf8(text)) report(*bad);
// Thread safety: pure functions. Never allocate except to build an error text or unescaped value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace inferscope::metrics::detail {

// is_name_start reports whether c may open a legacy metric name ([a-zA-Z_:]).
constexpr bool is_metric_name_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
// is_metric_name_char reports whether c may continue a legacy metric name ([a-zA-Z0-9_:]).
constexpr bool is_metric_name_char(char c) noexcept {
  return is_metric_name_start(c) || (c >= '0' && c <= '9');
}
// is_label_name_start reports whether c may open a label name ([a-zA-Z_]).
constexpr bool is_label_name_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
// is_label_name_char reports whether c may continue a label name ([a-zA-Z0-9_]).
constexpr bool is_label_name_char(char c) noexcept {
  return is_label_name_start(c) || (c >= '0' && c <= '9');
}

// first_invalid_utf8 returns the offset of the first byte that starts an invalid UTF-8 sequence
// (overlongs, surrogates and code points above U+10FFFF included), or nullopt. ASCII runs are
// checked eight bytes at a time because this pass covers the whole scrape body.
std::optional<std::size_t> first_invalid_utf8(std::string_view text) noexcept;

// parse_int64 parses [+-]?[0-9]+ fitting in int64 (Go strconv.ParseInt base 10); nullopt otherwise.
std::optional<std::int64_t> parse_int64(std::string_view text) noexcept;

// EscapeSet selects which backslash escapes a quoted or HELP text may contain.
enum class EscapeSet {
  kLabelValue,  // \\ \" \n (both formats' label values, OpenMetrics HELP)
  kHelp004,     // \\ \n (0.0.4 HELP: a quote stays literal and \" is an error, as in expfmt)
};

// unescape decodes `raw` into `out` (replacing it). On an invalid escape it returns the offset of
// the backslash in `raw`; a lone trailing backslash counts as invalid.
std::optional<std::size_t> unescape(std::string_view raw, EscapeSet set, std::string& out);

// printable quotes `text` for an error message: at most 40 bytes, quote and backslash escaped,
// other non-printable bytes as \xNN (error texts stay one printable line whatever the input).
std::string printable(std::string_view text);

}  // namespace inferscope::metrics::detail
