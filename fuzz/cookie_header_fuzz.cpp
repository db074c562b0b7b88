// Fuzzes the Cookie header parser (parse_cookies / cookie_value: what up's public server reads to
// find a page session before a route runs). Invariants: never crashes or throws; every parsed name
// is a token and every value holds no control byte, ';' or '"'; each name and value occur in the
// input; cookie_value of a parsed name is the first pair with that name; a header rebuilt from the
// pairs (a="1"; b="2") parses to the same pairs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "net/cookie.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace inferscope::net;
  const std::string_view header(reinterpret_cast<const char*>(data), size);
  const auto pairs = parse_cookies(header);
  if (header.size() > kMaxCookieHeaderBytes && !pairs.empty()) std::abort();
  std::string rebuilt;
  for (const auto& [name, value] : pairs) {
    if (!cookie_name_is_token(name)) std::abort();
    for (const char c : value) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u >= 0x7f || c == ';' || c == '"') std::abort();
    }
    if (header.find(name) == std::string_view::npos || header.find(value) == std::string_view::npos) std::abort();
    const auto first = cookie_value(header, name);
    if (!first) std::abort();
    for (const auto& [n, v] : pairs) {
      if (n == name) {
        if (*first != v) std::abort();
        break;
      }
    }
    if (!rebuilt.empty()) rebuilt += "; ";
    rebuilt += name + "=\"" + value + "\"";  // quoted: a quoted value may keep edge spaces
  }
  if (rebuilt.size() <= kMaxCookieHeaderBytes && parse_cookies(rebuilt) != pairs) std::abort();
  return 0;
}
