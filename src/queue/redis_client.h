// File: redis_client.h
// RedisClient: one blocking hiredis connection (RESP2) with deadlines, used by the queue
// collector to send pipelined read-only commands, and by the Celery heartbeat listener for a
// pattern subscription. hiredis stays inside redis_client.cpp. Example:
//   auto c = RedisClient::connect(target, 2s); auto r = c->pipeline({{"LLEN", "q"}, {"TIME"}});
// Not thread-safe: one thread per client. Never logs; errors name the target without its password.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/common/result.h>

#include "queue/redis_target.h"

struct redisContext;

namespace inferscope::queue {

// RedisReply is one reply, copied out of hiredis. Strings are binary-safe.
struct RedisReply {
  enum class Type { kNil, kString, kStatus, kError, kInteger, kArray };
  Type type = Type::kNil;
  std::string str{};  // kString, kStatus, kError
  long long integer = 0;
  std::vector<RedisReply> elements{};

  bool is_error() const noexcept { return type == Type::kError; }
  bool is_nil() const noexcept { return type == Type::kNil; }
  bool is_string() const noexcept { return type == Type::kString || type == Type::kStatus; }
  bool is_array() const noexcept { return type == Type::kArray; }
};

// RedisCommand is one command's arguments (binary-safe; sent with the argv form, never formatted).
using RedisCommand = std::vector<std::string>;

class RedisClient {
 public:
  // connect opens a TCP connection with `timeout` for the connect and for every later read and
  // write, then AUTH (when target.password is set) and SELECT db. Errors: "cannot connect to
  // redis at <describe(target)>: <cause>" and, for a refused password, "cannot authenticate to
  // redis at <describe(target)>: <Redis's reason>" (Redis never echoes the password).
  static Result<RedisClient> connect(const RedisTarget& target, std::chrono::milliseconds timeout);

  RedisClient(RedisClient&&) noexcept;
  RedisClient& operator=(RedisClient&&) noexcept;
  ~RedisClient();

  // pipeline sends every command, then reads one reply per command, in order: one round trip.
  // A Redis error reply is a reply (is_error()), not a failure; a connection error or timeout
  // fails the whole call and leaves the client unusable (reconnect).
  Result<std::vector<RedisReply>> pipeline(const std::vector<RedisCommand>& commands);

  // send writes one command without reading its reply (SUBSCRIBE, PSUBSCRIBE).
  Result<void> send(const RedisCommand& command);

  // next_push waits up to `wait` for the next message of a subscription: a reply, nullopt when
  // none arrived in time, or an error when the connection failed.
  Result<std::optional<RedisReply>> next_push(std::chrono::milliseconds wait);

 private:
  RedisClient(redisContext* context, std::string where) noexcept;
  Result<void> flush();
  Error failure(const std::string& what) const;

  redisContext* context_ = nullptr;  // owned
  std::string where_;               // describe(target), for errors
};

}  // namespace inferscope::queue
