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

net::Response up_access_unauthorized(const std::string& message) {
  net::ApiError error;
  error.status = 401;
  error.type = "authentication_error";
  error.code = "unauthorized";
  error.message = message;
  net::Response response = net::Response::error(error);
  response.headers.emplace_back("WWW-Authenticate", R"(Basic realm="inferscope", charset="UTF-8")");
  return response;
}

std::string up_access_route_text(const net::Request& request) {
  return std::string(request.method) + " " + up_access_log_name(request.path);
}

}  // namespace

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
    : users_(web.users), tokens_(web.tokens), log_(std::move(log)), now_(std::move(now)) {
  if (!now_) now_ = [] { return std::chrono::steady_clock::now(); };
  for (const config::WebToken& token : tokens_) token_digests_.push_back(up_access_sha256(token.value));
}

std::optional<net::Response> UpAccess::check(const net::Request& request, const net::RouteInfo& route) {
  const std::string where = up_access_route_text(request);
  const std::string ip(request.client_ip);
  const std::string_view header = request.header("Authorization");
  if (header.empty()) {
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
    return authorize(request, route, who, found->role);
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
  net::ApiError error;
  error.status = 403;
  error.type = "permission_error";
  error.code = "forbidden";
  error.message = "cannot serve " + std::string(request.path) + ": it needs the " + need_text + " role, " + who +
                  " has " + std::string(config::web_role_name(held));
  return net::Response::error(error);
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

}  // namespace inferscope::up
