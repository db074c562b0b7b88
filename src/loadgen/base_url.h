// File: base_url.h
// Target is where the load goes: scheme, host, port and path prefix parsed from --base-url.
// Example: auto t = parse_base_url("http://127.0.0.1:8000"); t->tls == false; t->port == "8000";
// Pure; thread-safe. Never resolves names (the client does, timing it per connection).
#pragma once

#include <string>
#include <string_view>

#include "inferscope/common/result.h"

namespace inferscope::loadgen {

struct Target {
  bool tls = false;
  std::string host;       // without brackets for IPv6 literals
  std::string port;       // "80" / "443" when the URL has none
  std::string base_path;  // "" or "/prefix" (no trailing slash)
  std::string host_header;  // "host[:port]" as sent in Host:
};

// parse_base_url accepts http:// and https:// URLs with an optional port and path; fails with a
// message naming --base-url on any other scheme, an empty host or a bad port.
Result<Target> parse_base_url(std::string_view url);

}  // namespace inferscope::loadgen
