// File: http_url.cpp
// The same rules as loadgen's --base-url (bench can move onto this one).
#include "net/http_url.h"

#include <cctype>

#include <fmt/format.h>

namespace inferscope::net {

Result<HttpUrl> parse_http_url(std::string_view url, std::string_view where) {
  auto fail = [&](std::string_view cause) {
    return make_error(fmt::format("cannot parse URL from {}: {} ('{}')", where, cause, url));
  };
  HttpUrl t;
  std::string_view rest;
  if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else if (url.starts_with("https://")) {
    t.tls = true;
    rest = url.substr(8);
  } else {
    return fail("expected http:// or https://");
  }
  std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  t.base_path = std::string(path);
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return fail("unclosed IPv6 bracket");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return fail("junk after IPv6 address");
      port = after.substr(1);
    }
  } else if (std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return fail("empty host");
  if (port.empty()) port = t.tls ? "443" : "80";
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return fail("bad port");
  }
  if (port.size() > 5 || std::stoul(std::string(port)) > 65535 || std::stoul(std::string(port)) == 0) return fail("bad port");
  t.host = std::string(host);
  t.port = std::string(port);
  t.host_header = std::string(authority);
  return t;
}

}  // namespace inferscope::net
