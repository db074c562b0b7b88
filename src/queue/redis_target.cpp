#include "queue/redis_target.h"

#include <charconv>

namespace inferscope::queue {
namespace {

// redacted drops the userinfo of a URL so that errors can quote the rest.
std::string redacted(std::string_view url) {
  const auto scheme_end = url.find("://");
  const auto at = url.rfind('@');
  if (scheme_end == std::string_view::npos || at == std::string_view::npos || at < scheme_end) return std::string(url);
  return std::string(url.substr(0, scheme_end + 3)) + "***@" + std::string(url.substr(at + 1));
}

bool parse_int(std::string_view text, int min, int max, int& out) {
  if (text.empty()) return false;
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) return false;
  out = value;
  return true;
}

}  // namespace

Result<RedisTarget> parse_redis_url(std::string_view url) {
  const auto fail = [&](const std::string& why) {
    return make_error("cannot parse redis URL " + redacted(url) + ": " + why);
  };
  constexpr std::string_view kScheme = "redis://";
  if (url.substr(0, kScheme.size()) != kScheme) return fail("the scheme must be redis://");
  std::string_view rest = url.substr(kScheme.size());
  RedisTarget target;
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = rest.substr(0, at);
    const auto colon = userinfo.find(':');
    if (colon == std::string_view::npos) return fail("the user part needs ':' before the password");
    target.password = std::string(userinfo.substr(colon + 1));
    if (target.password.empty()) return fail("the password after ':' is empty");
    rest = rest.substr(at + 1);
  }
  std::string_view authority = rest;
  std::string_view path;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    authority = rest.substr(0, slash);
    path = rest.substr(slash + 1);
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return fail("an IPv6 host needs a closing ']'");
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return fail("text after the IPv6 host must be ':PORT'");
      port = after.substr(1);
      if (port.empty()) return fail("the port after ':' is empty");
    }
  } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.empty()) return fail("the port after ':' is empty");
  }
  if (host.empty()) return fail("the host is empty");
  target.host = std::string(host);
  if (!port.empty() && !parse_int(port, 1, 65535, target.port)) return fail("the port must be 1..65535");
  if (!path.empty() && !parse_int(path, 0, 1 << 20, target.db)) return fail("the database must be a number (redis://HOST:PORT/DB)");
  return target;
}

std::string describe(const RedisTarget& target) {
  const bool ipv6 = target.host.find(':') != std::string::npos;
  return "redis://" + (ipv6 ? "[" + target.host + "]" : target.host) + ":" + std::to_string(target.port) + "/" +
         std::to_string(target.db);
}

}  // namespace inferscope::queue
