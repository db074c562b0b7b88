// File: up_access.h
// Who may use which route of up's public server (`up --listen`): one table route -> role
// (kUpRouteRoles), the check that every route up registers has a role (up refuses to start
// otherwise), and UpAccess, the route guard that authenticates each request (Basic with a bcrypt
// hash, or a Bearer token from web.tokens) and compares its role with the route's. Answers: 401
// without (valid) credentials, 403 for a role that does not reach the route, 429 with Retry-After
// while a client IP is backing off after wrong passwords (1 s doubling to 60 s; wrong tokens are
// logged but not slowed: they are long random strings, not guessable words). Log lines name the
// user or token, the client IP and the route, never a password or token.
// The page signs in with a form instead (GET/POST /login, POST /logout: add_login_routes): a right
// password makes a session (up_session.h) whose id travels in the `inferscope_session` cookie, and
// check() accepts that cookie as the user's role. A cookie-authenticated POST/PUT/DELETE must also
// carry the session's CSRF token in X-CSRF-Token and come from the same origin (Origin equal to
// the request's own scheme and Host, or Sec-Fetch-Site: same-origin), else 403; Basic and Bearer
// clients are not affected. An anonymous browser GET of the page (Accept: text/html) is sent to
// /login (303) instead of the 401; a page's script request without credentials (Sec-Fetch-Mode not
// navigate) or with a session cookie up does not know gets its 401 without the Basic challenge (a
// browser would ask for a password over the page; the page goes to /login). Example:
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
#include "up/up_session.h"

namespace inferscope::up {

// UpRouteRole gives one route (or, with `prefix`, every route whose path starts with `path`) the
// role it needs.
// `sign_in` marks the sign-in routes (/login, /logout): the guard lets them through without
// credentials (they check their own), their `role` is what the signed-in page then reaches.
struct UpRouteRole {
  std::string_view method;
  std::string_view path;
  bool prefix;
  config::WebRole role;
  bool sign_in = false;
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
    {"GET", "/login", false, config::WebRole::viewer, true},
    {"POST", "/login", false, config::WebRole::viewer, true},
    {"POST", "/logout", false, config::WebRole::viewer, true},
};

// The page's cookies and the CSRF header (see UpAccess).
inline constexpr std::string_view kUpSessionCookie = "inferscope_session";
inline constexpr std::string_view kUpCsrfCookie = "inferscope_csrf";
inline constexpr std::string_view kUpCsrfHeader = "X-CSRF-Token";
// kUpPageCsp is the page's Content-Security-Policy (dashboard_http.cpp sets the same on "/"; a
// test holds them equal): the login page gets it too, so it runs no script at all.
inline constexpr std::string_view kUpPageCsp = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'";

// up_route_sign_in reports whether `route` is one of the sign-in routes of kUpRouteRoles.
bool up_route_sign_in(const net::RouteInfo& route);

// up_same_origin reports whether a browser says `request` comes from the page's own origin:
// Sec-Fetch-Site, when sent, is "same-origin", and Origin, when sent, is the request's own scheme
// (https when it came over TLS) and Host. False when neither header is sent.
bool up_same_origin(const net::Request& request);

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

  // login answers POST /login (form fields user, password): 303 to / with the session and CSRF
  // cookies on a right password; the login page again with 401 (wrong password, same back-off and
  // log lines as Basic), 429 (backing off) or 403 (not same-origin).
  net::Response login(const net::Request& request);
  // logout answers POST /logout: drops the cookie's session, expires both cookies, 303 to /login
  // (403 when not same-origin).
  net::Response logout(const net::Request& request);
  // login_page answers GET /login: the form, with the page's CSP.
  static net::Response login_page(int status = 200, std::string_view message = {});
  UpSessions& sessions() { return sessions_; }

  // kMaxBackoff is the longest a client IP waits after repeated wrong passwords.
  static constexpr std::chrono::seconds kMaxBackoff{60};

 private:
  struct Backoff {
    int failures = 0;
    std::chrono::steady_clock::time_point until{};
  };
  // password_gate checks user and password with the back-off: a Response when refused, else
  // nullopt with *found set.
  std::optional<net::Response> password_gate(const net::Request& request, const std::string& user,
                                             const std::string& password, const config::WebUser** found);
  std::optional<net::Response> check_session(const net::Request& request, const net::RouteInfo& route,
                                             const UpSession& session);
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
  UpSessions sessions_;
};

// add_login_routes registers GET /login, POST /login (on lane `lane`: bcrypt blocks) and POST
// /logout, answered by `access`, which must outlive the server.
void add_login_routes(net::Router& router, UpAccess& access, const std::string& lane);

}  // namespace inferscope::up
