// File: up_access.cpp
#include "up/up_access.h"

#include <arpa/inet.h>
#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "net/authorization.h"
#include "net/cookie.h"
#include "net/query_parameter.h"

namespace inferscope::up {
namespace {

std::string up_access_sha256(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest.data()), size);
}

// up_access_log_name makes a client-chosen name safe for a log line: printable ASCII, at most 64.
std::string up_access_log_name(std::string_view name) {
  std::string out;
  for (const char c : name.substr(0, 64)) out.push_back(c > ' ' && c < 127 && c != '\'' ? c : '?');
  if (name.size() > 64) out += "...";
  return out;
}

// up_access_unauthorized is the 401 with `challenge` (WWW-Authenticate); Basic by default.
net::Response up_access_unauthorized(const std::string& message,
                                     std::string challenge = R"(Basic realm="inferscope", charset="UTF-8")") {
  net::Response response = net::Response::error(net::ApiError::unauthorized(message));
  response.headers.emplace_back("WWW-Authenticate", std::move(challenge));
  return response;
}

// up_access_page_request: a request without credentials that a page's script sent (fetch/XHR:
// Sec-Fetch-Mode other than navigate) or that still carries a session cookie up no longer knows
// (signed out elsewhere, expired, up restarted). Its 401 must not carry the Basic challenge, which
// makes a browser ask for a password over the page; the page sends its user to /login instead.
bool up_access_page_request(const net::Request& request) {
  const std::string_view mode = request.header("Sec-Fetch-Mode");
  return (!mode.empty() && mode != "navigate") ||
         net::cookie_value(request.header("Cookie"), kUpSessionCookie).has_value();
}

// up_access_session_ended is the 401 for up_access_page_request: the challenge names the sign-in
// form (the "Cookie" scheme of draft-broyer-http-cookie-auth, which no browser prompts for).
net::Response up_access_session_ended(const std::string& path) {
  net::Response response =
      up_access_unauthorized("cannot serve " + path + ": no session (signed out or expired): sign in at /login",
                             R"(Cookie realm="inferscope", form-action="/login", cookie-name=")" +
                                 std::string(kUpSessionCookie) + "\"");
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

std::string up_access_route_text(const net::Request& request) {
  return std::string(request.method) + " " + up_access_log_name(request.path);
}

net::Response up_access_forbidden(const std::string& message) {
  return net::Response::error(net::ApiError::forbidden(message));
}

bool up_access_state_changing(std::string_view method) {
  return method != "GET" && method != "HEAD" && method != "OPTIONS";
}

// up_access_html_escape escapes text for an HTML body.
std::string up_access_html_escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string up_access_cookie(std::string_view name, std::string_view value, bool http_only, std::string_view max_age) {
  std::string out = std::string(name) + "=" + std::string(value) + "; Secure; SameSite=Strict; Path=/; Max-Age=" +
                    std::string(max_age);
  if (http_only) out += "; HttpOnly";
  return out;
}

}  // namespace

bool up_route_sign_in(const net::RouteInfo& route) {
  for (const UpRouteRole& entry : kUpRouteRoles) {
    if (entry.sign_in && !route.prefix && entry.method == route.method && entry.path == route.path) return true;
  }
  return false;
}

bool up_same_origin(const net::Request& request) {
  const std::string_view site = request.header("Sec-Fetch-Site");
  const std::string_view origin = request.header("Origin");
  if (site.empty() && origin.empty()) return false;
  if (!site.empty() && site != "same-origin") return false;
  if (!origin.empty()) {
    const std::string_view host = request.header("Host");
    const std::string own = std::string(request.tls ? "https://" : "http://") + std::string(host);
    if (host.empty() || origin != own) return false;
  }
  return true;
}

std::optional<config::WebRole> up_route_role(const net::RouteInfo& route) {
  for (const UpRouteRole& entry : kUpRouteRoles) {
    if (entry.method != route.method) continue;
    if (entry.prefix ? route.path.starts_with(entry.path) : (!route.prefix && route.path == entry.path)) return entry.role;
  }
  return std::nullopt;
}

Result<void> check_up_route_roles(const std::vector<net::RouteInfo>& routes) {
  for (const net::RouteInfo& route : routes) {
    if (!up_route_role(route)) {
      return make_error("route " + route.method + " " + route.path + (route.prefix ? "*" : "") +
                        " has no role in kUpRouteRoles (src/up/up_access.h): give it viewer, operator or ingest");
    }
  }
  return {};
}

Result<ListenAddress> parse_listen_address(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return make_error("expected ADDR:PORT, e.g. 0.0.0.0:9443 or [::]:9443");
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535) {
    return make_error("expected a port 0..65535 after the last ':' (0 = ephemeral)");
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return make_error("write an IPv6 address in brackets, e.g. [::]:9443");
  }
  ListenAddress out;
  out.port = static_cast<std::uint16_t>(port);
  if (host == "localhost") {
    out.host = "127.0.0.1";
    out.loopback = true;
    return out;
  }
  const std::string host_text(host);
  in_addr v4{};
  in6_addr v6{};
  if (::inet_pton(AF_INET, host_text.c_str(), &v4) == 1) {
    out.loopback = (ntohl(v4.s_addr) >> 24) == 127;  // 127.0.0.0/8
  } else if (::inet_pton(AF_INET6, host_text.c_str(), &v6) == 1) {
    out.loopback = IN6_IS_ADDR_LOOPBACK(&v6);
  } else {
    return make_error("'" + host_text + "' is not a numeric IP address (or localhost)");
  }
  out.host = host_text;
  return out;
}

bool bcrypt_matches(std::string_view password, const std::string& hash) {
  if (password.find('\0') != std::string_view::npos) return false;
  auto data = std::make_unique<crypt_data>();  // ~32 KiB: not on the stack
  const std::string phrase(password);
  const char* out = crypt_rn(phrase.c_str(), hash.c_str(), data.get(), sizeof(crypt_data));
  if (out == nullptr || out[0] == '*') return false;
  const std::string_view result(out);
  return result.size() == hash.size() && CRYPTO_memcmp(result.data(), hash.data(), hash.size()) == 0;
}

Result<std::string> bcrypt_hash(std::string_view password, int cost) {
  if (cost < 4 || cost > 31) return make_error("bcrypt cost must be 4..31");
  if (password.find('\0') != std::string_view::npos) return make_error("a password cannot hold a NUL byte");
  std::array<char, CRYPT_GENSALT_OUTPUT_SIZE> salt{};
  if (crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, salt.data(), salt.size()) == nullptr) {
    return make_error("cannot make a bcrypt salt (libcrypt without bcrypt?)");
  }
  auto data = std::make_unique<crypt_data>();
  const std::string phrase(password);
  const char* out = crypt_rn(phrase.c_str(), salt.data(), data.get(), sizeof(crypt_data));
  if (out == nullptr || out[0] == '*') return make_error("cannot hash the password with bcrypt");
  return std::string(out);
}

UpAccess::UpAccess(const config::WebConfig& web, std::function<void(const std::string&)> log, Clock now)
    : users_(web.users), tokens_(web.tokens), log_(std::move(log)), now_(std::move(now)),
      sessions_([this] { return now_(); }) {
  if (!now_) now_ = [] { return std::chrono::steady_clock::now(); };
  for (const config::WebToken& token : tokens_) token_digests_.push_back(up_access_sha256(token.value));
}

std::optional<net::Response> UpAccess::check(const net::Request& request, const net::RouteInfo& route) {
  const std::string where = up_access_route_text(request);
  const std::string ip(request.client_ip);
  if (up_route_sign_in(route)) return std::nullopt;  // /login and /logout check their own
  const std::string_view header = request.header("Authorization");
  if (header.empty()) {
    if (auto id = net::cookie_value(request.header("Cookie"), kUpSessionCookie)) {
      if (auto session = sessions_.find(*id)) return check_session(request, route, *session);
    }
    if (request.method == "GET" && (request.path == "/" || request.path == "/index.html") &&
        request.header("Accept").find("text/html") != std::string_view::npos) {
      net::Response to_login;
      to_login.status = 303;
      to_login.content_type = "text/plain; charset=utf-8";
      to_login.body = "sign in at /login\n";
      to_login.headers.emplace_back("Location", "/login");
      to_login.headers.emplace_back("Cache-Control", "no-store");
      return to_login;
    }
    if (up_access_page_request(request)) return up_access_session_ended(std::string(request.path));
    return up_access_unauthorized("cannot serve " + std::string(request.path) +
                                  " without credentials: sign in (Basic) or send a Bearer token");
  }
  auto credentials = net::parse_authorization(header);
  if (!credentials) {
    log_("inferscope up: access refused from " + ip + " on " + where + ": " + credentials.error().message);
    return up_access_unauthorized(credentials.error().message);
  }
  if (credentials->scheme == net::AuthScheme::bearer) {
    const std::string digest = up_access_sha256(credentials->token);
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
      if (CRYPTO_memcmp(digest.data(), token_digests_[i].data(), digest.size()) == 0) {
        return authorize(request, route, "token '" + tokens_[i].name + "'", tokens_[i].role);
      }
    }
    log_("inferscope up: access refused: unknown bearer token from " + ip + " on " + where);
    return up_access_unauthorized("cannot serve " + std::string(request.path) + ": the bearer token is not known here");
  }
  return check_password(request, route, credentials->user, credentials->password);
}

std::optional<net::Response> UpAccess::check_password(const net::Request& request, const net::RouteInfo& route,
                                                      const std::string& user, const std::string& password) {
  const config::WebUser* found = nullptr;
  if (auto refused = password_gate(request, user, password, &found)) return refused;
  return authorize(request, route, "user '" + up_access_log_name(user) + "'", found->role);
}

std::optional<net::Response> UpAccess::check_session(const net::Request& request, const net::RouteInfo& route,
                                                     const UpSession& session) {
  const std::string who = "user '" + up_access_log_name(session.user) + "' (session)";
  if (up_access_state_changing(request.method)) {
    const std::string where = up_access_route_text(request);
    const std::string ip(request.client_ip);
    const std::string_view token = request.header(kUpCsrfHeader);
    const bool token_ok = token.size() == session.csrf.size() &&
                          CRYPTO_memcmp(token.data(), session.csrf.data(), token.size()) == 0;
    if (!token_ok || !up_same_origin(request)) {
      const std::string why = !token_ok ? "without the session's " + std::string(kUpCsrfHeader) + " header"
                                        : "from another origin (Origin / Sec-Fetch-Site)";
      log_("inferscope up: access refused: " + who + " from " + ip + " on " + where + " " + why);
      return up_access_forbidden("cannot serve " + std::string(request.method) + " " + std::string(request.path) +
                                 " with a page session " + why + ": cross-site requests are refused");
    }
  }
  return authorize(request, route, who, session.role);
}

std::optional<net::Response> UpAccess::password_gate(const net::Request& request, const std::string& user,
                                                     const std::string& password, const config::WebUser** found_out) {
  const std::string where = up_access_route_text(request);
  const std::string ip(request.client_ip);
  const std::string who = "user '" + up_access_log_name(user) + "'";
  {
    std::lock_guard lock(mutex_);
    auto it = backoff_.find(ip);
    const auto now = now_();
    if (it != backoff_.end() && now < it->second.until) {
      const double left = std::chrono::duration<double>(it->second.until - now).count();
      const int retry = std::max(1, static_cast<int>(std::ceil(left)));
      log_("inferscope up: access refused: " + who + " from " + ip + " on " + where + " while that address backs off (" +
           std::to_string(it->second.failures) + " wrong passwords; " + std::to_string(retry) + " s left)");
      return net::Response::error(net::ApiError::too_many_requests(
          "cannot check credentials from this address for " + std::to_string(retry) + " s after wrong passwords", retry));
    }
  }
  *found_out = nullptr;
  const config::WebUser* found = nullptr;
  for (const config::WebUser& u : users_) {
    if (u.name == user) found = &u;
  }
  bool ok = false;
  if (found != nullptr) {
    ok = verified(user, password, found->password_hash);
  } else if (!users_.empty()) {
    // An unknown user costs a bcrypt check too, so the answer's timing does not tell who exists.
    (void)bcrypt_matches(password, users_.front().password_hash);
  }
  if (ok) {
    std::lock_guard lock(mutex_);
    backoff_.erase(ip);
    *found_out = found;
    return std::nullopt;
  }
  int failures = 0;
  std::int64_t wait_s = 0;
  {
    std::lock_guard lock(mutex_);
    const auto now = now_();
    if (backoff_.size() > 10000) {  // bound memory: forget addresses whose back-off has long passed
      std::erase_if(backoff_, [&](const auto& entry) { return entry.second.until + kMaxBackoff < now; });
    }
    Backoff& b = backoff_[ip];
    failures = ++b.failures;
    wait_s = std::min<std::int64_t>(kMaxBackoff.count(), std::int64_t{1} << std::min(failures - 1, 6));
    b.until = now + std::chrono::seconds(wait_s);
  }
  log_("inferscope up: access refused: wrong password for " + (found ? who : "unknown " + who) + " from " + ip + " on " +
       where + " (" + std::to_string(failures) + " in a row; this address waits " + std::to_string(wait_s) + " s)");
  return up_access_unauthorized("cannot serve " + std::string(request.path) + ": wrong user name or password");
}

std::optional<net::Response> UpAccess::authorize(const net::Request& request, const net::RouteInfo& route,
                                                 std::string who, config::WebRole held) {
  const std::optional<config::WebRole> needed = up_route_role(route);
  if (needed && config::web_role_allows(held, *needed)) return std::nullopt;
  const std::string need_text = needed ? std::string(config::web_role_name(*needed)) : "a role this route lacks";
  log_("inferscope up: access refused: " + who + " (" + std::string(config::web_role_name(held)) + ") from " +
       std::string(request.client_ip) + " may not " + up_access_route_text(request) + " (needs " + need_text + ")");
  return up_access_forbidden("cannot serve " + std::string(request.path) + ": it needs the " + need_text + " role, " +
                             who + " has " + std::string(config::web_role_name(held)));
}

bool UpAccess::verified(const std::string& user, const std::string& password, const std::string& hash) {
  std::string key = user;
  key += '\0';
  key += password;
  key += '\0';
  key += hash;
  const std::string digest = up_access_sha256(key);
  {
    std::lock_guard lock(mutex_);
    if (verified_.contains(digest)) return true;
  }
  if (!bcrypt_matches(password, hash)) return false;  // the slow part, outside the lock
  std::lock_guard lock(mutex_);
  if (verified_.size() >= 1024) verified_.clear();
  verified_.insert(digest);
  return true;
}

net::Response UpAccess::login_page(int status, std::string_view message) {
  net::Response page;
  page.status = status;
  page.content_type = "text/html; charset=utf-8";
  page.body =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>inferscope: sign in</title>\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<style>body{font-family:system-ui,sans-serif;max-width:22rem;margin:4rem auto;padding:0 1rem}"
      "label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.4rem;box-sizing:border-box}"
      "button{margin-top:1rem;padding:.4rem 1.2rem}.message{color:#b00020}</style></head>\n"
      "<body><h1>inferscope</h1>\n";
  if (!message.empty()) page.body += "<p class=\"message\" role=\"alert\">" + up_access_html_escape(message) + "</p>\n";
  page.body +=
      "<form method=\"post\" action=\"/login\">\n"
      "<label for=\"user\">User</label><input id=\"user\" name=\"user\" autocomplete=\"username\" required>\n"
      "<label for=\"password\">Password</label>"
      "<input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\" required>\n"
      "<button type=\"submit\">Sign in</button>\n</form></body></html>\n";
  page.headers.emplace_back("Content-Security-Policy", std::string(kUpPageCsp));
  page.headers.emplace_back("Cache-Control", "no-store");
  page.headers.emplace_back("X-Content-Type-Options", "nosniff");
  page.headers.emplace_back("X-Frame-Options", "DENY");
  return page;
}

net::Response UpAccess::login(const net::Request& request) {
  const std::string ip(request.client_ip);
  if (!up_same_origin(request)) {
    log_("inferscope up: sign-in refused from " + ip + ": not same-origin (Origin / Sec-Fetch-Site)");
    return login_page(403, "Sign in from this page: the form was sent from another site.");
  }
  const std::string user = net::query_parameter(request.body, "user");
  const std::string password = net::query_parameter(request.body, "password");
  const config::WebUser* found = nullptr;
  if (auto refused = password_gate(request, user, password, &found)) {
    if (refused->status == 429) {
      net::Response page = login_page(429, "Too many wrong passwords from this address: wait a little and try again.");
      for (const auto& header : refused->headers) {
        if (header.first == "Retry-After") page.headers.push_back(header);
      }
      return page;
    }
    return login_page(401, "Wrong user name or password.");
  }
  auto made = sessions_.create(found->name, found->role);
  if (!made) {
    log_("inferscope up: sign-in failed for user '" + up_access_log_name(user) + "': " + made.error().message);
    return login_page(500, "The server cannot make a session now.");
  }
  log_("inferscope up: user '" + up_access_log_name(user) + "' signed in from " + ip);
  const std::string max_age = std::to_string(std::chrono::seconds(UpSessions::kLifetime).count());
  net::Response to_page;
  to_page.status = 303;
  to_page.content_type = "text/plain; charset=utf-8";
  to_page.body = "signed in\n";
  to_page.headers.emplace_back("Location", "/");
  to_page.headers.emplace_back("Cache-Control", "no-store");
  to_page.headers.emplace_back("Set-Cookie", up_access_cookie(kUpSessionCookie, made->id, true, max_age));
  to_page.headers.emplace_back("Set-Cookie", up_access_cookie(kUpCsrfCookie, made->csrf, false, max_age));
  return to_page;
}

net::Response UpAccess::logout(const net::Request& request) {
  const std::string ip(request.client_ip);
  if (!up_same_origin(request)) {
    log_("inferscope up: sign-out refused from " + ip + ": not same-origin (Origin / Sec-Fetch-Site)");
    return up_access_forbidden("cannot sign out from another site");
  }
  if (auto id = net::cookie_value(request.header("Cookie"), kUpSessionCookie)) {
    if (auto session = sessions_.find(*id)) {
      sessions_.drop(*id);
      log_("inferscope up: user '" + up_access_log_name(session->user) + "' signed out from " + ip);
    }
  }
  net::Response to_login;
  to_login.status = 303;
  to_login.content_type = "text/plain; charset=utf-8";
  to_login.body = "signed out\n";
  to_login.headers.emplace_back("Location", "/login");
  to_login.headers.emplace_back("Cache-Control", "no-store");
  to_login.headers.emplace_back("Set-Cookie", up_access_cookie(kUpSessionCookie, "", true, "0"));
  to_login.headers.emplace_back("Set-Cookie", up_access_cookie(kUpCsrfCookie, "", false, "0"));
  return to_login;
}

void add_login_routes(net::Router& router, UpAccess& access, const std::string& lane) {
  router.get("/login", [](const net::Request&) { return UpAccess::login_page(); });
  router.add_blocking("POST", "/login", [&access](const net::Request& r) { return access.login(r); }, lane);
  router.post("/logout", [&access](const net::Request& r) { return access.logout(r); });
}

}  // namespace inferscope::up
