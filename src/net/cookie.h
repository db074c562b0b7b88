// File: cookie.h
// The `Cookie` request header (RFC 6265 section 5.4 as browsers send it: "a=1; b=2"): parse_cookies
// splits it into name/value pairs, cookie_value finds one by name. Lenient like browsers: a pair
// that is malformed (no '=', an empty or non-token name, a control character or ';' in the value)
// is skipped, not an error, so one bad cookie set by another app on the host does not lock a user
// out. A value in double quotes loses the quotes. Example:
//   auto id = net::cookie_value(request.header("Cookie"), "inferscope_session");
// Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace inferscope::net {

// kMaxCookieHeaderBytes: a longer Cookie header is ignored whole (no pairs).
inline constexpr std::size_t kMaxCookieHeaderBytes = 8192;

// parse_cookies returns the well-formed pairs of a Cookie header, in order.
std::vector<std::pair<std::string, std::string>> parse_cookies(std::string_view header);

// cookie_value returns the value of the first well-formed cookie called `name`, or nullopt.
std::optional<std::string> cookie_value(std::string_view header, std::string_view name);

// cookie_name_is_token reports whether `name` is a non-empty RFC 7230 token (what a cookie name must be).
bool cookie_name_is_token(std::string_view name);

}  // namespace inferscope::net
