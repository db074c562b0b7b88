// File: query_parameter.h
// query_parameter: the one percent-decoder of URL query strings for the routes of up's server (the
// dashboard's data, the trace queries). Example: query_parameter("model=a%20b&x=1", "model") == "a b".
// Pure function, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace inferscope::net {

// query_parameter returns the percent-decoded value of `name` in a query string ('+' is a space),
// or an empty string when absent or malformed.
std::string query_parameter(std::string_view query, std::string_view name);

}  // namespace inferscope::net
