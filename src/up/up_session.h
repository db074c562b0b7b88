// File: up_session.h
// The page's sign-in sessions on up's public server (`up --listen`): POST /login makes one after a
// right password, the browser holds its id in the `inferscope_session` cookie (HttpOnly, Secure,
// SameSite=Strict, Path=/), UpAccess finds the user's role by it, POST /logout drops it. Each
// session also has a CSRF token, given to the page in the readable `inferscope_csrf` cookie, that a
// cookie-authenticated POST/PUT/DELETE must send back in the X-CSRF-Token header. Ids and tokens
// are 256 random bits from OpenSSL's RAND_bytes (hex); the table keeps only the SHA-256 of each id,
// so a memory dump does not hand out live sessions. Sessions end kLifetime after sign-in. Example:
//   UpSessions sessions;
//   auto made = sessions.create("alice", config::WebRole::operator_);  // made->id, made->csrf
//   if (auto s = sessions.find(cookie_id)) use(s->role);
// Thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <inferscope/common/result.h>

#include "config/web_config.h"

namespace inferscope::up {

struct UpSession {
  std::string user;
  config::WebRole role = config::WebRole::viewer;
  std::string csrf;  // the token the page sends back in X-CSRF-Token
  std::chrono::steady_clock::time_point expires{};
};

// UpNewSession is what create() hands out once: the cookie's id and the CSRF token.
struct UpNewSession {
  std::string id;
  std::string csrf;
};

class UpSessions {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  static constexpr std::chrono::hours kLifetime{12};
  static constexpr std::size_t kMaxSessions = 10000;  // beyond it the oldest-expiring one goes

  explicit UpSessions(Clock now = nullptr);

  // create makes a session for `user` with `role`; an error only when the RNG fails.
  Result<UpNewSession> create(const std::string& user, config::WebRole role);
  // find returns the live session of cookie id `id` (expired ones are dropped), or nullopt.
  std::optional<UpSession> find(std::string_view id);
  // drop ends session `id`; false when there was none.
  bool drop(std::string_view id);
  std::size_t size();

 private:
  Clock now_;
  std::mutex mutex_;
  std::map<std::string, UpSession> by_digest_;  // SHA-256 of the id -> session; guarded by mutex_
};

// up_random_hex returns `bytes` random bytes from RAND_bytes as lower-case hex.
Result<std::string> up_random_hex(std::size_t bytes);

}  // namespace inferscope::up
