// File: cookie.cpp
#include "net/cookie.h"

namespace inferscope::net {
namespace {

std::string_view cookie_trim_spaces(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// cookie_value_octet: RFC 6265 cookie-octet, plus space inside (browsers send it) but no control,
// '"', ',', ';' or '\\'.
bool cookie_value_octet(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x20 && u < 0x7f && c != '"' && c != ',' && c != ';' && c != '\\';
}

}  // namespace

bool cookie_name_is_token(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) return false;
    if (std::string_view("()<>@,;:\\\"/[]?={}").find(c) != std::string_view::npos) return false;
  }
  return true;
}

std::vector<std::pair<std::string, std::string>> parse_cookies(std::string_view header) {
  std::vector<std::pair<std::string, std::string>> out;
  if (header.size() > kMaxCookieHeaderBytes) return out;
  while (!header.empty()) {
    const std::size_t semi = header.find(';');
    std::string_view pair = header.substr(0, semi);
    header = semi == std::string_view::npos ? std::string_view() : header.substr(semi + 1);
    pair = cookie_trim_spaces(pair);
    const std::size_t eq = pair.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = cookie_trim_spaces(pair.substr(0, eq));
    std::string_view value = cookie_trim_spaces(pair.substr(eq + 1));
    if (!cookie_name_is_token(name)) continue;
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    bool ok = true;
    for (const char c : value) ok = ok && cookie_value_octet(c);
    if (!ok) continue;
    out.emplace_back(std::string(name), std::string(value));
  }
  return out;
}

std::optional<std::string> cookie_value(std::string_view header, std::string_view name) {
  for (auto& [n, v] : parse_cookies(header)) {
    if (n == name) return std::move(v);
  }
  return std::nullopt;
}

}  // namespace inferscope::net
