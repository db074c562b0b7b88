// File: up_access.h
// Who may use which route of up's public server (`up --listen`): one table route -> role
// (kUpRouteRoles), the check that every route up registers has a role (up refuses to start
// otherwise), and UpAccess, the route guard that authenticates each request (Basic with a bcrypt
// hash, or a Bearer token from web.tokens) and compares its role with the route's. Answers: 401
// without (valid) credentials, 403 for a role that does not reach the route, 429 with Retry-After
// while a client IP is backing off after wrong passwords (1 s doubling to 60 s; wrong tokens are
// logged but not slowed: they are long random strings, not guessable words). Log lines name the
// user or token, the client IP and the route, never a password or token. Example:
//   UpAccess access(*config.web, print);
//   auto server = net::HttpServer::start(options, router.handler(access.guard(), kAccessLane));
// Thread-safe: check() may run on several threads at once.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/common/result.h>

#include "config/web_config.h"
#include "net/router.h"

namespace inferscope::up {

// UpRouteRole gives one route (or, with `prefix`, every route whose path starts with `path`) the
// role it needs.
struct UpRouteRole {
  std::string_view method;
  std::string_view path;
  bool prefix;
  config::WebRole role;
};

// kUpRouteRoles: viewer reads, operator acts (sends messages, changes state), ingest posts data in.
inline constexpr UpRouteRole kUpRouteRoles[] = {
    {"GET", "/", false, config::WebRole::viewer},
    {"GET", "/index.html", false, config::WebRole::viewer},
    {"GET", "/assets/app.js", false, config::WebRole::viewer},
    {"GET", "/assets/app.css", false, config::WebRole::viewer},
    {"GET", "/api/dashboard/meta", false, config::WebRole::viewer},
    {"GET", "/api/dashboard/data", false, config::WebRole::viewer},
    {"GET", "/api/dashboard/exemplars", false, config::WebRole::viewer},
    {"GET", "/api/status", false, config::WebRole::viewer},
    {"GET", "/api/alerts", false, config::WebRole::viewer},
    {"GET", "/api/doctor", false, config::WebRole::viewer},
    {"GET", "/api/traces", false, config::WebRole::viewer},
    {"GET", "/api/traces/", true, config::WebRole::viewer},
    {"GET", "/api/notifications", false, config::WebRole::viewer},
    {"GET", "/metrics", false, config::WebRole::viewer},
    {"GET", "/queues/", true, config::WebRole::viewer},  // /queues/<name>/metrics, one per redis target
    {"GET", "/api/drill", false, config::WebRole::operator_},
    {"POST", "/api/drill", false, config::WebRole::operator_},
    {"POST", "/api/report/send", false, config::WebRole::operator_},
    {"POST", "/v1/traces", false, config::WebRole::ingest},
    {"POST", "/api/alertmanager/webhook", false, config::WebRole::ingest},
};

// up_route_role returns the role `route` needs, or nullopt when kUpRouteRoles has none for it.
std::optional<config::WebRole> up_route_role(const net::RouteInfo& route);

// check_up_route_roles fails naming the first route without a role in kUpRouteRoles.
Result<void> check_up_route_roles(const std::vector<net::RouteInfo>& routes);

// ListenAddress is a parsed `--listen ADDR:PORT`.
struct ListenAddress {
  std::string host;  // numeric IP, without IPv6 brackets
  std::uint16_t port = 0;
  bool loopback = false;
};

// parse_listen_address parses "IPv4:PORT", "[IPv6]:PORT" or "localhost:PORT" (port 0..65535, 0 =
// ephemeral). Errors are one line without the flag name (the caller adds "--listen").
Result<ListenAddress> parse_listen_address(std::string_view text);

// bcrypt_matches reports whether `password` hashes to `hash` (bcrypt, via libcrypt's crypt_rn).
bool bcrypt_matches(std::string_view password, const std::string& hash);

// bcrypt_hash hashes `password` with a fresh salt at `cost` (4..31): what `up --hash-password` prints.
Result<std::string> bcrypt_hash(std::string_view password, int cost);

class UpAccess {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // UpAccess checks requests against `web`'s users and tokens (token values loaded); `log` gets one
  // line per refused credential. `now` is the clock of the back-off (tests pass their own).
  UpAccess(const config::WebConfig& web, std::function<void(const std::string&)> log, Clock now = nullptr);

  // check is the route guard: nullopt lets the request through.
  std::optional<net::Response> check(const net::Request& request, const net::RouteInfo& route);
  // guard returns check() as a net::RouteGuard; this UpAccess must outlive the server.
  net::RouteGuard guard() {
    return [this](const net::Request& r, const net::RouteInfo& route) { return check(r, route); };
  }

  // kMaxBackoff is the longest a client IP waits after repeated wrong passwords.
  static constexpr std::chrono::seconds kMaxBackoff{60};

 private:
  struct Backoff {
    int failures = 0;
    std::chrono::steady_clock::time_point until{};
  };
  std::optional<net::Response> check_password(const net::Request& request, const net::RouteInfo& route,
                                              const std::string& user, const std::string& password);
  std::optional<net::Response> authorize(const net::Request& request, const net::RouteInfo& route, std::string who,
                                         config::WebRole held);
  bool verified(const std::string& user, const std::string& password, const std::string& hash);

  std::vector<config::WebUser> users_;
  std::vector<config::WebToken> tokens_;
  std::vector<std::string> token_digests_;  // SHA-256 of each token, compared in constant time
  std::function<void(const std::string&)> log_;
  Clock now_;
  std::mutex mutex_;
  std::map<std::string, Backoff> backoff_;  // client IP -> wrong-password back-off; guarded by mutex_
  std::set<std::string> verified_;          // SHA-256 of user, password and hash that matched; guarded by mutex_
};

}  // namespace inferscope::up
