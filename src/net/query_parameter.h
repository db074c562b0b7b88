// File: query_parameter.h
// query_parameter: the one percent-decoder of URL query strings for the routes of up's server (the
// dashboard's data, the trace queries), and percent_decode, the decoder under it, for other
// percent-encoded text (OTEL_RESOURCE_ATTRIBUTES values).
// Example: query_parameter("model=a%20b&x=1", "model") == "a b".
// Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace inferscope::net {

// query_parameter returns the percent-decoded value of `name` in a query string ('+' is a space),
// or an empty string when absent or malformed.
std::string query_parameter(std::string_view query, std::string_view name);

// PlusIs says what '+' means: a space in a URL query (form encoding), itself elsewhere.
enum class PlusIs { kSpace, kPlus };

// percent_decode decodes %XX escapes (either case); nullopt when a '%' is not followed by two hex
// digits.
std::optional<std::string> percent_decode(std::string_view text, PlusIs plus);

}  // namespace inferscope::net
