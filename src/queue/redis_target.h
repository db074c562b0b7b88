// File: redis_target.h
// RedisTarget: where a queue collector connects: `redis://[:PASSWORD@]HOST:PORT/DB`, the form of
// `inferscope up --target NAME=redis://...`. Example:
//   auto t = parse_redis_url("redis://127.0.0.1:6379/0"); if (!t) fail(t.error().message);
// Pure functions, thread-safe. Error messages never contain the password; neither does describe().
// A password kept out of the URL (password_file:, an environment variable) is resolved by up's
// config with relay::resolve_secret and assigned to RedisTarget::password.
#pragma once

#include <string>
#include <string_view>

#include <inferscope/common/result.h>

namespace inferscope::queue {

// RedisTarget is one Redis database to collect queues from.
struct RedisTarget {
  std::string host{};      // name or address; IPv6 literals come without brackets
  int port = 6379;
  int db = 0;
  std::string password{};  // empty = no AUTH; never logged
};

// parse_redis_url parses `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]` (port 6379 and db 0 when
// omitted; USER is accepted and ignored: Redis 7's default user). Fails with "cannot parse redis
// URL <url without password>: <why>" on another scheme, an empty host, a bad port or db, or text
// after the db.
Result<RedisTarget> parse_redis_url(std::string_view url);

// describe returns "redis://HOST:PORT/DB" (no password), for logs and status.
std::string describe(const RedisTarget& target);

}  // namespace inferscope::queue
