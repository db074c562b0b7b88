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

}  // namespace
}  // namespace inferscope::up
