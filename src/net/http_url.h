// File: http_url.h
// HttpUrl is where an HTTP client connects: scheme, host, port and path prefix of an http(s) URL.
// Example: auto u = parse_http_url("https://api.example.com/v1", "--upstream"); u->tls == true;
// Pure; thread-safe. Never resolves names (the client does, per connection).
#pragma once

#include <string>
#include <string_view>

#include <inferscope/common/result.h>

namespace inferscope::net {

struct HttpUrl {
  bool tls = false;
  std::string host;         // without brackets for IPv6 literals
  std::string port;         // "80" / "443" when the URL has none
  std::string base_path;    // "" or "/prefix" (no trailing slash)
  std::string host_header;  // "host[:port]" as sent in Host:
};

// parse_http_url accepts http:// and https:// URLs with an optional port and path; fails with
// "cannot parse URL from <where>: <cause> ('<url>')" on any other scheme, an empty host or a bad port.
Result<HttpUrl> parse_http_url(std::string_view url, std::string_view where);

}  // namespace inferscope::net
