// Low-level scanning for the exposition parser: UTF-8, numbers, escapes.
#include <charconv>
#include <cstring>
#include <limits>

#include "exposition_parser_scan.h"
#include "inferscope/metrics/exposition_parser.h"

namespace inferscope::metrics {
namespace detail {
namespace {

// Length of a valid UTF-8 sequence starting at text[i] (i < size, byte >= 0x80), or 0.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  unsigned char low = 0x80;  // allowed range of the second byte (excludes overlongs, surrogates)
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (text.size() - i < length) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return length;
}

bool iequals(std::string_view a, std::string_view lower) noexcept {
  if (a.size() != lower.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<std::size_t> first_invalid_utf8(std::string_view text) noexcept {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    if (n - i >= 8) {
      std::uint64_t word;
      std::memcpy(&word, text.data() + i, 8);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) return i;
    i += length;
  }
  return std::nullopt;
}

std::optional<std::int64_t> parse_int64(std::string_view text) noexcept {
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return std::nullopt;
  for (char c : text) {
    if (!is_digit(c)) return std::nullopt;
  }
  // Parse the magnitude as unsigned so that INT64_MIN is accepted.
  std::uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), magnitude);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (negative) {
    if (magnitude > kMax + 1) return std::nullopt;
    return magnitude == kMax + 1 ? std::numeric_limits<std::int64_t>::min()
                                 : -static_cast<std::int64_t>(magnitude);
  }
  if (magnitude > kMax) return std::nullopt;
  return static_cast<std::int64_t>(magnitude);
}

std::optional<std::size_t> unescape(std::string_view raw, EscapeSet set, std::string& out) {
  const std::size_t first = raw.find('\\');
  if (first == std::string_view::npos) {
    out.assign(raw);
    return std::nullopt;
  }
  out.clear();
  out.reserve(raw.size());
  out.append(raw.substr(0, first));
  for (std::size_t i = first; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (i + 1 >= raw.size()) return i;
    const char next = raw[i + 1];
    if (next == '\\') {
      out.push_back('\\');
    } else if (next == 'n') {
      out.push_back('\n');
    } else if (next == '"' && set == EscapeSet::kLabelValue) {
      out.push_back('"');
    } else {
      return i;
    }
    ++i;
  }
  return std::nullopt;
}

std::string printable(std::string_view text) {
  constexpr std::size_t kMaxBytes = 40;
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size() && i < kMaxBytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c >= 0x20 && c < 0x7F) {
      out.push_back(static_cast<char>(c));
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  if (text.size() > kMaxBytes) out += "...";
  out.push_back('"');
  return out;
}

}  // namespace detail

std::optional<double> parse_exposition_float(std::string_view text) noexcept {
  bool negative = false;
  bool signed_text = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    signed_text = true;
    text.remove_prefix(1);
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (detail::iequals(text, "inf") || detail::iequals(text, "infinity")) return negative ? -kInf : kInf;
  // Go's ParseFloat accepts NaN only unsigned.
  if (!signed_text && detail::iequals(text, "nan")) return std::numeric_limits<double>::quiet_NaN();
  // Decimal syntax: digits [. digits] [e [+-] digits], at least one mantissa digit.
  std::size_t i = 0;
  std::size_t int_digits = 0;
  std::size_t leading_zeros = 0;  // zeros before the first significant digit
  bool significant = false;
  auto count_digit = [&](char c) {
    if (c != '0') significant = true;
    if (!significant) ++leading_zeros;
  };
  while (i < text.size() && detail::is_digit(text[i])) count_digit(text[i++]), ++int_digits;
  std::size_t frac_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && detail::is_digit(text[i])) count_digit(text[i++]), ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return std::nullopt;
  long long exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exp_negative = text[i++] == '-';
    const std::size_t exp_start = i;
    while (i < text.size() && detail::is_digit(text[i])) {
      if (exponent < 100000) exponent = exponent * 10 + (text[i] - '0');
      ++i;
    }
    if (i == exp_start) return std::nullopt;
    if (exp_negative) exponent = -exponent;
  }
  if (i != text.size()) return std::nullopt;
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) {
    // Go returns 0 without error on underflow and ErrRange on overflow; tell them apart by the
    // decimal magnitude of the first significant digit.
    if (!significant) return negative ? -0.0 : 0.0;
    const long long magnitude = static_cast<long long>(int_digits) - static_cast<long long>(leading_zeros) + exponent;
    if (magnitude <= 0) return negative ? -0.0 : 0.0;
    return std::nullopt;
  }
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return negative ? -value : value;
}

}  // namespace inferscope::metrics
