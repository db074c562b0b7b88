// Text primitives for validation and exposition (see detail/text_format.h).
#include "detail/text_format.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace inferscope::metrics::detail {
namespace {

bool is_name_start(char c, bool allow_colon) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':');
}
bool is_name_char(char c, bool allow_colon) { return is_name_start(c, allow_colon) || (c >= '0' && c <= '9'); }

bool append_special(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
  } else {
    return false;
  }
  return true;
}

}  // namespace

bool is_valid_utf8(std::string_view text) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const unsigned c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    // Lead byte -> number of continuation bytes, payload bits, smallest code point (no overlongs).
    int extra = 0;
    std::uint32_t min = 0;
    if ((c & 0xE0) == 0xC0) {
      extra = 1;
      min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      min = 0x10000;
    } else {
      return false;
    }
    std::uint32_t cp = c & (0x7Fu >> (extra + 1));
    if (end - p <= extra) return false;
    for (int i = 1; i <= extra; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    p += extra + 1;
  }
  return true;
}

bool is_valid_metric_name(std::string_view name) noexcept {
  if (name.empty() || !is_name_start(name[0], true)) return false;
  for (char c : name) {
    if (!is_name_char(c, true)) return false;
  }
  return true;
}

bool is_valid_label_name(std::string_view name) noexcept {
  if (name.empty() || !is_name_start(name[0], false) || name.starts_with("__")) return false;
  for (char c : name) {
    if (!is_name_char(c, false)) return false;
  }
  return true;
}

void append_escaped_label_value(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
}

void append_escaped_help(std::string& out, std::string_view help, bool escape_quote) {
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && escape_quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

void append_double(std::string& out, double value) {
  if (append_special(out, value)) return;
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, result.ptr);
}

void append_uint(std::string& out, std::uint64_t value) {
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, result.ptr);
}

void append_go_float(std::string& out, double value, bool dot_zero) {
  if (append_special(out, value)) return;
  char buf[40];
  auto result = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(result.ptr - buf));
  int exponent = 0;
  const auto e = sci.find('e');
  std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exponent);
  if (exponent < -4 || exponent >= 6) {
    out += sci;  // same shortest digits and "e+06" exponent style as Go
    return;
  }
  result = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed);
  const std::string_view fixed(buf, static_cast<std::size_t>(result.ptr - buf));
  out += fixed;
  if (dot_zero && fixed.find('.') == std::string_view::npos) out += ".0";
}

}  // namespace inferscope::metrics::detail
