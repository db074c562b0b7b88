// File: src/metrics/detail/text_format.h -- private to the metrics library.
// Text primitives shared by registration (validation, cached label text) and rendering: UTF-8
// validation, escaping, locale-free float and integer formatting. Pure functions, thread-safe;
// appends never throw except std::bad_alloc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace inferscope::metrics::detail {

// trim_header_blanks drops the spaces and tabs HTTP allows around header list items and
// parameters (Accept, Content-Type).
constexpr std::string_view trim_header_blanks(std::string_view text) noexcept {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// is_valid_utf8 rejects overlong forms, surrogates, code points above U+10FFFF and truncation.
bool is_valid_utf8(std::string_view text) noexcept;

// is_valid_metric_name checks [a-zA-Z_:][a-zA-Z0-9_:]*.
bool is_valid_metric_name(std::string_view name) noexcept;

// is_valid_label_name checks [a-zA-Z_][a-zA-Z0-9_]* without the reserved "__" prefix.
bool is_valid_label_name(std::string_view name) noexcept;

// append_escaped_label_value escapes \ " and newline (both formats).
void append_escaped_label_value(std::string& out, std::string_view value);

// append_escaped_help escapes \ and newline, and " too when escape_quote (OpenMetrics).
void append_escaped_help(std::string& out, std::string_view help, bool escape_quote);

// append_double writes the shortest round-trip form (std::to_chars) or NaN, +Inf, -Inf.
void append_double(std::string& out, double value);

// append_uint writes an unsigned integer in decimal.
void append_uint(std::string& out, std::uint64_t value);

// append_go_float writes value like Go's strconv.FormatFloat(v, 'g', -1, 64) (exponent form when
// the decimal exponent is < -4 or >= 6), plus ".0" when dot_zero and the result has neither '.'
// nor 'e': OpenMetrics' canonical le ("1.0", "1e+06") and Python's floatToGoString.
void append_go_float(std::string& out, double value, bool dot_zero);

}  // namespace inferscope::metrics::detail
