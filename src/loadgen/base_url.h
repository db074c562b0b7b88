// File: base_url.h
// Target is where the load goes: the shared net::HttpUrl (scheme, host, port, path prefix) parsed
// from --base-url.
// Example: auto t = parse_base_url("http://127.0.0.1:8000"); t->tls == false; t->port == "8000";
// Pure; thread-safe. Never resolves names (the client does, timing it per connection).
#pragma once

#include <string_view>

#include "inferscope/common/result.h"
#include "net/http_url.h"

namespace inferscope::loadgen {

using Target = net::HttpUrl;

// parse_base_url accepts http:// and https:// URLs with an optional port and path; fails with a
// message naming --base-url on any other scheme, an empty host or a bad port.
Result<Target> parse_base_url(std::string_view url);

}  // namespace inferscope::loadgen
