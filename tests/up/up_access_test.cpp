// Tests of up's access control (up/up_access.h): the route -> role table, --listen parsing, bcrypt
// through libcrypt, and UpAccess's answers (401 / 403 / 429 with back-off) and log lines, which
// never hold a password or token. A test clock drives the back-off: no sleeps.
#include "up/up_access.h"

#include <gtest/gtest.h>

#include <boost/beast/http/field.hpp>

#include "net/authorization.h"
#include "net/connection.h"

namespace inferscope::up {
namespace {

using config::WebRole;
using std::chrono::seconds;

net::RouteInfo route_of(std::string method, std::string path, bool prefix = false) {
  return net::RouteInfo{std::move(method), std::move(path), prefix, net::RouteInfo::Kind::plain};
}

TEST(UpRouteRoles, EveryTableRouteHasItsRoleAndUnknownRoutesFail) {
  EXPECT_EQ(up_route_role(route_of("GET", "/")), WebRole::viewer);
  EXPECT_EQ(up_route_role(route_of("POST", "/api/drill")), WebRole::operator_);
  EXPECT_EQ(up_route_role(route_of("POST", "/api/report/send")), WebRole::operator_);
  EXPECT_EQ(up_route_role(route_of("POST", "/v1/traces")), WebRole::ingest);
  EXPECT_EQ(up_route_role(route_of("POST", "/api/alertmanager/webhook")), WebRole::ingest);
  EXPECT_EQ(up_route_role(route_of("GET", "/queues/redis1/metrics")), WebRole::viewer);
  EXPECT_EQ(up_route_role(route_of("GET", "/api/traces/", true)), WebRole::viewer);
  // Same path, another method: no role (a GET table entry does not cover a POST route).
  EXPECT_FALSE(up_route_role(route_of("POST", "/api/status")).has_value());
  // An exact entry does not cover a prefix route of the same path.
  EXPECT_FALSE(up_route_role(route_of("GET", "/api/status", true)).has_value());

  std::vector<net::RouteInfo> routes;
  for (const UpRouteRole& entry : kUpRouteRoles) {
    routes.push_back(route_of(std::string(entry.method), std::string(entry.path), entry.prefix));
  }
  EXPECT_TRUE(check_up_route_roles(routes).ok());
  routes.push_back(route_of("DELETE", "/api/traces"));
  auto missing = check_up_route_roles(routes);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "route DELETE /api/traces has no role in kUpRouteRoles (src/up/up_access.h): give it viewer, operator or ingest");
}

TEST(ListenAddress, ParsesIpv4Ipv6AndLocalhost) {
  auto any = parse_listen_address("0.0.0.0:9443");
  ASSERT_TRUE(any.ok()) << any.error().message;
  EXPECT_EQ(any->host, "0.0.0.0");
  EXPECT_EQ(any->port, 9443);
  EXPECT_FALSE(any->loopback);
  auto v6 = parse_listen_address("[::1]:0");
  ASSERT_TRUE(v6.ok()) << v6.error().message;
  EXPECT_EQ(v6->host, "::1");
  EXPECT_TRUE(v6->loopback);
  EXPECT_TRUE(parse_listen_address("127.0.0.2:1")->loopback);
  EXPECT_TRUE(parse_listen_address("localhost:80")->loopback);
  EXPECT_FALSE(parse_listen_address("[::]:80")->loopback);
  EXPECT_FALSE(parse_listen_address("10.1.2.3:80")->loopback);
  for (const char* bad : {"9443", ":9443", "0.0.0.0:", "0.0.0.0:65536", "0.0.0.0:x", "::1:80", "example.com:80", "1.2.3:80"}) {
    EXPECT_FALSE(parse_listen_address(bad).ok()) << bad;
  }
}

TEST(Bcrypt, HashesAndChecksThroughLibcrypt) {
  auto hash = bcrypt_hash("correct horse", 4);
  ASSERT_TRUE(hash.ok()) << hash.error().message;
  EXPECT_TRUE(config::is_bcrypt_hash(*hash)) << *hash;
  EXPECT_TRUE(bcrypt_matches("correct horse", *hash));
  EXPECT_FALSE(bcrypt_matches("correct horsf", *hash));
  EXPECT_FALSE(bcrypt_matches("", *hash));
  // The OpenBSD test vector: another implementation's hash checks here too.
  EXPECT_TRUE(bcrypt_matches("U*U", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"));
  EXPECT_NE(*bcrypt_hash("correct horse", 4), *hash);  // a fresh salt each time
  EXPECT_FALSE(bcrypt_hash("x", 3).ok());
}

// AccessFixture: alice (operator), bob (viewer), an ingest token; a clock the test moves.
class AccessFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    config::WebConfig web;
    web.users.push_back({"alice", *bcrypt_hash("alice-pass", 4), WebRole::operator_, "up.yaml:1:1"});
    web.users.push_back({"bob", *bcrypt_hash("bob-pass", 4), WebRole::viewer, "up.yaml:2:1"});
    web.tokens.push_back({"am", "/x", WebRole::ingest, "up.yaml:3:1", kToken});
    access_ = std::make_unique<UpAccess>(web, [this](const std::string& line) { log_.push_back(line); },
                                         [this] { return now_; });
  }

  std::optional<net::Response> ask(const std::string& method, const std::string& path, const std::string& authorization,
                                   const std::string& ip = "10.0.0.7") {
    net::HttpRequest native;
    if (!authorization.empty()) native.set(boost::beast::http::field::authorization, authorization);
    net::Request request;
    request.method = method;
    request.path = path;
    request.target = path;
    request.client_ip = ip;
    request.native = &native;
    return access_->check(request, route_of(method, path));
  }

  // send runs one request with `headers` through check(), or (for the sign-in routes) through
  // login/logout as the router would.
  std::optional<net::Response> send(const std::string& method, const std::string& path,
                                    const std::vector<std::pair<std::string, std::string>>& headers,
                                    const std::string& body = "", const std::string& ip = "10.0.0.7") {
    net::HttpRequest native;
    for (const auto& [name, value] : headers) native.set(name, value);
    net::Request request;
    request.method = method;
    request.path = path;
    request.target = path;
    request.body = body;
    request.client_ip = ip;
    request.tls = true;
    request.native = &native;
    if (auto refused = access_->check(request, route_of(method, path))) return refused;
    if (method == "POST" && path == "/login") return access_->login(request);
    if (method == "POST" && path == "/logout") return access_->logout(request);
    return std::nullopt;
  }

  static std::string header_of(const net::Response& r, const std::string& name, int nth = 0) {
    for (const auto& [n, v] : r.headers) {
      if (n == name && nth-- == 0) return v;
    }
    return "";
  }

  // sign_in logs `user` in through POST /login and returns the session and CSRF cookie values.
  std::pair<std::string, std::string> sign_in(const std::string& user, const std::string& password) {
    auto answer = send("POST", "/login", {{"Origin", "https://up.example:9443"}, {"Host", "up.example:9443"}},
                       "user=" + user + "&password=" + password);
    EXPECT_TRUE(answer.has_value());
    if (!answer || answer->status != 303) return {};
    auto value_of = [](const std::string& set_cookie) { return set_cookie.substr(set_cookie.find('=') + 1, 64); };
    return {value_of(header_of(*answer, "Set-Cookie", 0)), value_of(header_of(*answer, "Set-Cookie", 1))};
  }

  static constexpr const char* kToken = "tok-0123456789abcdef";
  std::unique_ptr<UpAccess> access_;
  std::vector<std::string> log_;
  std::chrono::steady_clock::time_point now_ = std::chrono::steady_clock::time_point() + std::chrono::hours(1);
};

TEST_F(AccessFixture, AnonymousGets401WithAChallenge) {
  auto answer = ask("GET", "/api/status", "");
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status, 401);
  bool challenged = false;
  for (const auto& [name, value] : answer->headers) challenged |= name == "WWW-Authenticate" && value.starts_with("Basic ");
  EXPECT_TRUE(challenged);
  auto malformed = ask("GET", "/api/status", "Basic !!!");
  ASSERT_TRUE(malformed.has_value());
  EXPECT_EQ(malformed->status, 401);
}

TEST_F(AccessFixture, RolesReachTheirRoutesOnly) {
  const std::string alice = net::basic_authorization("alice", "alice-pass");
  const std::string bob = net::basic_authorization("bob", "bob-pass");
  const std::string token = std::string("Bearer ") + kToken;
  EXPECT_FALSE(ask("GET", "/api/status", alice).has_value());
  EXPECT_FALSE(ask("POST", "/api/drill", alice).has_value());
  EXPECT_FALSE(ask("GET", "/api/status", bob).has_value());
  EXPECT_FALSE(ask("POST", "/v1/traces", token).has_value());
  EXPECT_FALSE(ask("POST", "/api/alertmanager/webhook", token).has_value());
  struct Refused {
    std::string method, path, authorization;
  };
  for (const Refused& r : std::vector<Refused>{{"POST", "/api/drill", bob},
                                               {"POST", "/api/report/send", bob},
                                               {"POST", "/v1/traces", bob},
                                               {"POST", "/api/alertmanager/webhook", alice},
                                               {"GET", "/api/status", token},
                                               {"POST", "/api/drill", token}}) {
    auto answer = ask(r.method, r.path, r.authorization);
    ASSERT_TRUE(answer.has_value()) << r.method << " " << r.path;
    EXPECT_EQ(answer->status, 403) << r.method << " " << r.path;
  }
  ASSERT_FALSE(log_.empty());
  EXPECT_NE(log_.front().find("user 'bob' (viewer) from 10.0.0.7 may not POST /api/drill (needs operator)"),
            std::string::npos)
      << log_.front();
}

TEST_F(AccessFixture, WrongPasswordsBackOffPerAddressAndAreLoggedWithoutThePassword) {
  const std::string wrong = net::basic_authorization("alice", "guess-one");
  auto first = ask("GET", "/", wrong);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->status, 401);
  // At once again: 429 for 1 s, even with the right password; another address is not slowed.
  auto again = ask("GET", "/", net::basic_authorization("alice", "alice-pass"));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->status, 429);
  bool retry_after_1 = false;
  for (const auto& [name, value] : again->headers) retry_after_1 |= name == "Retry-After" && value == "1";
  EXPECT_TRUE(retry_after_1);
  EXPECT_FALSE(ask("GET", "/", net::basic_authorization("alice", "alice-pass"), "10.0.0.8").has_value());
  // Each wrong password doubles the wait: 1, 2, 4, ... capped at 60 s.
  std::vector<std::string> waits;
  for (int i = 0; i < 8; ++i) {
    now_ += seconds(61);
    auto answer = ask("GET", "/", net::basic_authorization(i % 2 ? "alice" : "nobody", "guess-" + std::to_string(i)));
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(answer->status, 401);
    const std::string& line = log_.back();
    waits.push_back(line.substr(line.rfind("waits ")));
    EXPECT_EQ(line.find("guess-"), std::string::npos) << line;
  }
  EXPECT_EQ(waits, (std::vector<std::string>{"waits 2 s)", "waits 4 s)", "waits 8 s)", "waits 16 s)", "waits 32 s)",
                                             "waits 60 s)", "waits 60 s)", "waits 60 s)"}));
  EXPECT_NE(log_.back().find("wrong password for user 'alice' from 10.0.0.7 on GET /"), std::string::npos) << log_.back();
  EXPECT_NE(log_[log_.size() - 2].find("wrong password for unknown user 'nobody'"), std::string::npos);
  // Once the wait passed, the right password gets through and clears the address's count.
  now_ += seconds(60);
  EXPECT_FALSE(ask("GET", "/", net::basic_authorization("alice", "alice-pass")).has_value());
  ask("GET", "/", wrong);
  EXPECT_NE(log_.back().find("(1 in a row; this address waits 1 s)"), std::string::npos) << log_.back();
  for (const std::string& line : log_) {
    EXPECT_EQ(line.find("alice-pass"), std::string::npos) << line;
    EXPECT_EQ(line.find("guess-one"), std::string::npos) << line;
  }
}

TEST_F(AccessFixture, WrongTokensAreLoggedButNotSlowed) {
  for (int i = 0; i < 5; ++i) {
    auto answer = ask("POST", "/v1/traces", "Bearer wrong-token-" + std::to_string(i) + "-abcdef");
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(answer->status, 401);
    EXPECT_NE(log_.back().find("unknown bearer token from 10.0.0.7 on POST /v1/traces"), std::string::npos);
    EXPECT_EQ(log_.back().find("wrong-token"), std::string::npos) << log_.back();
  }
  EXPECT_FALSE(ask("POST", "/v1/traces", std::string("Bearer ") + kToken).has_value());
}

TEST(UpSessions, RandomIdsExpireAndDrop) {
  auto now = std::chrono::steady_clock::time_point() + std::chrono::hours(1);
  UpSessions sessions([&now] { return now; });
  auto a = sessions.create("alice", WebRole::operator_);
  auto b = sessions.create("alice", WebRole::operator_);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->id.size(), 64u);  // 256 bits in hex
  EXPECT_EQ(a->csrf.size(), 64u);
  EXPECT_NE(a->id, b->id);
  EXPECT_NE(a->id, a->csrf);
  auto found = sessions.find(a->id);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->user, "alice");
  EXPECT_EQ(found->role, WebRole::operator_);
  EXPECT_EQ(found->csrf, a->csrf);
  EXPECT_FALSE(sessions.find(a->csrf).has_value());
  EXPECT_TRUE(sessions.drop(b->id));
  EXPECT_FALSE(sessions.find(b->id).has_value());
  EXPECT_FALSE(sessions.drop(b->id));
  now += UpSessions::kLifetime - seconds(1);
  EXPECT_TRUE(sessions.find(a->id).has_value());
  now += seconds(1);
  EXPECT_FALSE(sessions.find(a->id).has_value());
  EXPECT_EQ(sessions.size(), 0u);
}

TEST_F(AccessFixture, LoginSetsStrictCookiesAndTheCookieCarriesTheRole) {
  auto answer = send("POST", "/login", {{"Origin", "https://up.example:9443"}, {"Host", "up.example:9443"}},
                     "user=bob&password=bob-pass");
  ASSERT_TRUE(answer.has_value());
  ASSERT_EQ(answer->status, 303) << answer->body;
  EXPECT_EQ(header_of(*answer, "Location"), "/");
  const std::string session = header_of(*answer, "Set-Cookie", 0);
  const std::string csrf = header_of(*answer, "Set-Cookie", 1);
  EXPECT_TRUE(session.starts_with("inferscope_session=")) << session;
  EXPECT_NE(session.find("; HttpOnly"), std::string::npos) << session;
  EXPECT_NE(session.find("; Secure"), std::string::npos);
  EXPECT_NE(session.find("; SameSite=Strict"), std::string::npos);
  EXPECT_NE(session.find("; Path=/"), std::string::npos);
  EXPECT_TRUE(csrf.starts_with("inferscope_csrf=")) << csrf;
  EXPECT_EQ(csrf.find("HttpOnly"), std::string::npos) << "the page reads the CSRF cookie";
  EXPECT_NE(csrf.find("; SameSite=Strict"), std::string::npos);
  const std::string id = session.substr(session.find('=') + 1, 64);
  const std::string cookie = "inferscope_session=" + id;
  EXPECT_FALSE(send("GET", "/api/status", {{"Cookie", cookie}}).has_value());
  EXPECT_FALSE(send("GET", "/", {{"Cookie", "other=1; " + cookie}}).has_value());
  // bob is a viewer: his session reaches viewer routes only, even with a right CSRF token.
  const std::string token = csrf.substr(csrf.find('=') + 1, 64);
  auto drill = send("POST", "/api/drill",
                    {{"Cookie", cookie}, {"X-CSRF-Token", token}, {"Origin", "https://up.example:9443"},
                     {"Host", "up.example:9443"}});
  ASSERT_TRUE(drill.has_value());
  EXPECT_EQ(drill->status, 403);
  // A made-up or dropped session is no session: 401 (the API) or 303 to /login (a browser page load).
  auto made_up = send("GET", "/api/status", {{"Cookie", "inferscope_session=" + std::string(64, 'a')}});
  ASSERT_TRUE(made_up.has_value());
  EXPECT_EQ(made_up->status, 401);
  auto page = send("GET", "/", {{"Accept", "text/html,application/xhtml+xml"}});
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->status, 303);
  EXPECT_EQ(header_of(*page, "Location"), "/login");
  for (const std::string& line : log_) EXPECT_EQ(line.find("bob-pass"), std::string::npos) << line;
}

TEST_F(AccessFixture, CookieStateChangesNeedTheTokenAndTheSameOrigin) {
  const auto [id, csrf] = sign_in("alice", "alice-pass");
  ASSERT_EQ(id.size(), 64u);
  const std::string cookie = "inferscope_session=" + id;
  const std::pair<std::string, std::string> host{"Host", "up.example:9443"};
  const std::pair<std::string, std::string> origin{"Origin", "https://up.example:9443"};
  EXPECT_FALSE(send("POST", "/api/drill", {{"Cookie", cookie}, {"X-CSRF-Token", csrf}, origin, host}).has_value());
  EXPECT_FALSE(send("POST", "/api/drill", {{"Cookie", cookie}, {"X-CSRF-Token", csrf}, {"Sec-Fetch-Site", "same-origin"},
                                           host}).has_value());
  auto status_of = [](const std::optional<net::Response>& r) { return r ? r->status : 0; };
  // A cross-site form post: another Origin, no token.
  EXPECT_EQ(status_of(send("POST", "/api/drill", {{"Cookie", cookie}, {"Origin", "https://evil.example"}, host})), 403);
  EXPECT_NE(log_.back().find("without the session's X-CSRF-Token header"), std::string::npos) << log_.back();
  // The right token from another origin, a wrong token, no origin at all, a cross-site fetch.
  EXPECT_EQ(status_of(send("POST", "/api/drill", {{"Cookie", cookie}, {"X-CSRF-Token", csrf},
                                                  {"Origin", "https://evil.example"}, host})), 403);
  EXPECT_NE(log_.back().find("from another origin"), std::string::npos) << log_.back();
  EXPECT_EQ(status_of(send("POST", "/api/drill", {{"Cookie", cookie}, {"X-CSRF-Token", std::string(64, '0')}, origin,
                                                  host})), 403);
  EXPECT_EQ(status_of(send("POST", "/api/drill", {{"Cookie", cookie}, {"X-CSRF-Token", csrf}, host})), 403);
  EXPECT_EQ(status_of(send("POST", "/api/drill", {{"Cookie", cookie}, {"X-CSRF-Token", csrf},
                                                  {"Sec-Fetch-Site", "cross-site"}, host})), 403);
  // An http:// origin is not the https server's origin.
  EXPECT_EQ(status_of(send("POST", "/api/drill", {{"Cookie", cookie}, {"X-CSRF-Token", csrf},
                                                  {"Origin", "http://up.example:9443"}, host})), 403);
  // Basic clients are unaffected: no token, no Origin needed.
  EXPECT_FALSE(send("POST", "/api/drill", {{"Authorization", net::basic_authorization("alice", "alice-pass")}}).has_value());
  for (const std::string& line : log_) EXPECT_EQ(line.find(csrf), std::string::npos) << line;
}

TEST_F(AccessFixture, LoginBacksOffLikeBasicAndLogoutEndsTheSession) {
  const std::vector<std::pair<std::string, std::string>> same = {{"Origin", "https://up.example:9443"},
                                                                 {"Host", "up.example:9443"}};
  auto wrong = send("POST", "/login", same, "user=alice&password=guess-1");
  ASSERT_TRUE(wrong.has_value());
  EXPECT_EQ(wrong->status, 401);
  EXPECT_NE(wrong->body.find("Wrong user name or password"), std::string::npos);
  EXPECT_EQ(header_of(*wrong, "Set-Cookie"), "");
  auto waiting = send("POST", "/login", same, "user=alice&password=alice-pass");
  ASSERT_TRUE(waiting.has_value());
  EXPECT_EQ(waiting->status, 429);
  EXPECT_EQ(header_of(*waiting, "Retry-After"), "1");
  EXPECT_NE(log_.back().find("backs off"), std::string::npos) << log_.back();
  now_ += seconds(1);
  // A login form posted from another site is refused before any password check.
  auto cross = send("POST", "/login", {{"Origin", "https://evil.example"}, {"Host", "up.example:9443"}},
                    "user=alice&password=alice-pass");
  ASSERT_TRUE(cross.has_value());
  EXPECT_EQ(cross->status, 403);
  const auto [id, csrf] = sign_in("alice", "alice-pass");
  ASSERT_EQ(id.size(), 64u);
  const std::string cookie = "inferscope_session=" + id;
  EXPECT_FALSE(send("GET", "/api/status", {{"Cookie", cookie}}).has_value());
  auto cross_out = send("POST", "/logout", {{"Cookie", cookie}, {"Origin", "https://evil.example"}});
  ASSERT_TRUE(cross_out.has_value());
  EXPECT_EQ(cross_out->status, 403);
  EXPECT_FALSE(send("GET", "/api/status", {{"Cookie", cookie}}).has_value());
  std::vector<std::pair<std::string, std::string>> out_headers = same;
  out_headers.emplace_back("Cookie", cookie);
  auto out = send("POST", "/logout", out_headers);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->status, 303);
  EXPECT_EQ(header_of(*out, "Location"), "/login");
  EXPECT_NE(header_of(*out, "Set-Cookie").find("Max-Age=0"), std::string::npos);
  auto after = send("GET", "/api/status", {{"Cookie", cookie}});
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->status, 401);
  EXPECT_EQ(access_->sessions().size(), 0u);
  for (const std::string& line : log_) {
    EXPECT_EQ(line.find("alice-pass"), std::string::npos) << line;
    EXPECT_EQ(line.find(id), std::string::npos) << line;
  }
}

// A page's script (fetch: Sec-Fetch-Mode cors) or a request with a session cookie up no longer
// knows gets its 401 without the Basic challenge, which would make a browser ask for a password
// over the page; navigations and scripts without cookies (curl) keep the Basic challenge.
TEST_F(AccessFixture, PageRequestsWithoutASessionGet401WithoutTheBasicChallenge) {
  auto challenge_of = [&](const std::vector<std::pair<std::string, std::string>>& headers) {
    auto answer = send("GET", "/api/dashboard/data", headers);
    EXPECT_TRUE(answer.has_value());
    if (!answer) return std::string("(no answer)");
    EXPECT_EQ(answer->status, 401);
    return header_of(*answer, "WWW-Authenticate");
  };
  const std::string cookie_challenge = R"(Cookie realm="inferscope", form-action="/login", cookie-name="inferscope_session")";
  EXPECT_EQ(challenge_of({{"Sec-Fetch-Mode", "cors"}, {"Sec-Fetch-Site", "same-origin"}}), cookie_challenge);
  EXPECT_EQ(challenge_of({{"Cookie", "inferscope_session=" + std::string(64, 'a')}}), cookie_challenge);
  const auto [id, csrf] = sign_in("alice", "alice-pass");
  std::vector<std::pair<std::string, std::string>> out_headers = {{"Origin", "https://up.example:9443"},
                                                                  {"Host", "up.example:9443"},
                                                                  {"Cookie", "inferscope_session=" + id}};
  ASSERT_TRUE(send("POST", "/logout", out_headers).has_value());
  EXPECT_EQ(challenge_of({{"Cookie", "inferscope_session=" + id}, {"Sec-Fetch-Mode", "cors"}}), cookie_challenge);
  EXPECT_TRUE(challenge_of({{"Sec-Fetch-Mode", "navigate"}}).starts_with("Basic "));
  EXPECT_TRUE(challenge_of({}).starts_with("Basic "));
}

TEST(UpLoginPage, IsAFormWithoutScriptUnderThePageCsp) {
  const net::Response page = UpAccess::login_page(401, "<b>x</b>");
  EXPECT_EQ(page.status, 401);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("<form method=\"post\" action=\"/login\">"), std::string::npos);
  EXPECT_EQ(page.body.find("<script"), std::string::npos);
  EXPECT_NE(page.body.find("&lt;b&gt;x&lt;/b&gt;"), std::string::npos);
  bool csp = false;
  for (const auto& [n, v] : page.headers) csp |= n == "Content-Security-Policy" && v == kUpPageCsp;
  EXPECT_TRUE(csp);
}

}  // namespace
}  // namespace inferscope::up
