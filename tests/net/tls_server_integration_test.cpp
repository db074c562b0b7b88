// Tests of the HTTP server core over TLS and of route guards: a CA and certificates made in the
// test with the openssl CLI, curl as the real TLS client. HTTPS answers with the CA trusted and
// refuses a client that does not trust it; mutual TLS refuses a client without a certificate;
// unreadable or mismatched files fail start() naming the file; a guard answers instead of the
// handler on the server it was given to, and not on another server of the same Router.
#include <gtest/gtest.h>

#include <fstream>
#include <mutex>
#include <string>

#include "net/http_server.h"
#include "net/router.h"
#include "support/temp_dir.h"
#include "support/test_ca.h"

namespace inferscope::net {
namespace {

Router tls_test_router() {
  Router router;
  router.get("/who", [](const Request& r) {
    return Response::json(std::string(R"({"ip":")") + std::string(r.client_ip) + R"(","tls":)" +
                          (r.tls ? "true" : "false") + "}");
  });
  router.post("/private", [](const Request& r) { return Response::json(R"({"got":)" + std::to_string(r.body.size()) + "}"); });
  router.add_stream("/events", [](const Request&, EventStream& s) -> boost::asio::awaitable<void> {
    co_await s.send("data: one\n\n");
    co_await s.send("data: two\n\n");
  });
  return router;
}

std::unique_ptr<HttpServer> start_tls(Router& router, TlsServerFiles files, RouteGuard guard = nullptr) {
  HttpServerOptions options;
  options.tls = std::move(files);
  auto server = HttpServer::start(options, guard ? router.handler(std::move(guard)) : router.handler());
  EXPECT_TRUE(server.ok()) << (server.ok() ? "" : server.error().message);
  return server.ok() ? std::move(*server) : nullptr;
}

std::string url_of(const HttpServer& server, const std::string& path, const char* scheme = "https") {
  return std::string(scheme) + "://127.0.0.1:" + std::to_string(server.port()) + path;
}

TEST(TlsServer, AnswersOverHttpsAndTellsHandlersTheClient) {
  testing::TempDir dir("net-tls");
  testing::TestCa ca(dir.path());
  ASSERT_TRUE(ca.ok()) << ca.error();
  Router router = tls_test_router();
  auto server = start_tls(router, {ca.cert_file(), ca.key_file(), ""});
  ASSERT_NE(server, nullptr);

  auto reply = testing::curl_https(url_of(*server, "/who"), {"--cacert", ca.ca_file()});
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.body, R"({"ip":"127.0.0.1","tls":true})");
  // The body of a POST and a streamed (chunked) answer come through TLS whole.
  auto post = testing::curl_https(url_of(*server, "/private"), {"--cacert", ca.ca_file(), "--data-binary", "12345"});
  EXPECT_EQ(post.status, 200);
  EXPECT_EQ(post.body, R"({"got":5})");
  auto events = testing::curl_https(url_of(*server, "/events"), {"--cacert", ca.ca_file()});
  EXPECT_EQ(events.status, 200);
  EXPECT_EQ(events.body, "data: one\n\ndata: two\n\n");
  // A client that does not trust the CA gets no answer, nor does one speaking plain HTTP.
  EXPECT_EQ(testing::curl_https(url_of(*server, "/who"), {}).status, 0);
  EXPECT_EQ(testing::curl_https(url_of(*server, "/who", "http"), {}).status, 0);
  // The server still serves after the refused clients.
  EXPECT_EQ(testing::curl_https(url_of(*server, "/who"), {"--cacert", ca.ca_file()}).status, 200);
}

TEST(TlsServer, MutualTlsRefusesClientsWithoutACertificate) {
  testing::TempDir dir("net-mtls");
  testing::TestCa ca(dir.path());
  ASSERT_TRUE(ca.ok()) << ca.error();
  Router router = tls_test_router();
  auto server = start_tls(router, {ca.cert_file(), ca.key_file(), ca.ca_file()});
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(testing::curl_https(url_of(*server, "/who"), {"--cacert", ca.ca_file()}).status, 0);
  // A certificate from another CA is refused too.
  testing::TempDir other_dir("net-mtls-other");
  testing::TestCa other(other_dir.path());
  ASSERT_TRUE(other.ok()) << other.error();
  EXPECT_EQ(testing::curl_https(url_of(*server, "/who"), {"--cacert", ca.ca_file(), "--cert", other.client_cert_file(),
                                                          "--key", other.client_key_file()})
                .status,
            0);
  auto reply = testing::curl_https(url_of(*server, "/who"), {"--cacert", ca.ca_file(), "--cert", ca.client_cert_file(),
                                                             "--key", ca.client_key_file()});
  EXPECT_EQ(reply.status, 200) << reply.body;
}

TEST(TlsServer, StartFailsNamingAFileItCannotUse) {
  testing::TempDir dir("net-tls-bad");
  testing::TestCa ca(dir.path());
  ASSERT_TRUE(ca.ok()) << ca.error();
  testing::TempDir other_dir("net-tls-bad-other");
  testing::TestCa other(other_dir.path());
  ASSERT_TRUE(other.ok()) << other.error();
  Router router = tls_test_router();
  const std::string missing = (dir.path() / "missing.pem").string();
  struct Case {
    TlsServerFiles files;
    std::string names;
  };
  const std::vector<Case> cases = {
      {{missing, ca.key_file(), ""}, "certificate file " + missing},
      {{ca.cert_file(), missing, ""}, "key file " + missing},
      {{ca.cert_file(), other.key_file(), ""}, "does not match certificate file " + ca.cert_file()},
      {{ca.cert_file(), ca.key_file(), missing}, "client CA file " + missing},
  };
  for (const Case& c : cases) {
    HttpServerOptions options;
    options.tls = c.files;
    auto server = HttpServer::start(options, router.handler());
    ASSERT_FALSE(server.ok()) << c.names;
    EXPECT_NE(server.error().message.find(c.names), std::string::npos) << server.error().message;
    EXPECT_EQ(server.error().message.find('\n'), std::string::npos) << server.error().message;
  }
}

TEST(RouteGuard, AnswersInsteadOfTheHandlerOnlyOnItsServer) {
  // On the io thread (no lane) and on a lane of its own, as a guard that may block runs.
  for (const std::string lane : {"", "guard"}) {
    SCOPED_TRACE("lane '" + lane + "'");
    Router router = tls_test_router();
    std::mutex mutex;
    std::vector<std::string> asked;
    RouteGuard guard = [&](const Request& r, const RouteInfo& route) -> std::optional<Response> {
      std::lock_guard lock(mutex);
      asked.push_back(route.method + " " + route.path);
      if (route.path == "/private" && r.header("X-Pass") != "yes") return Response::json(R"({"refused":true})", 401);
      return std::nullopt;
    };
    auto guarded = HttpServer::start({}, router.handler(guard, lane));
    auto open = HttpServer::start({}, router.handler());
    ASSERT_TRUE(guarded.ok() && open.ok());
    const std::vector<std::string> post = {"--data-binary", "abc"};
    auto refused = testing::curl_https(url_of(**guarded, "/private", "http"), post);
    EXPECT_EQ(refused.status, 401);
    EXPECT_EQ(refused.body, R"({"refused":true})");
    auto passed = testing::curl_https(url_of(**guarded, "/private", "http"), {"--data-binary", "abc", "-H", "X-Pass: yes"});
    EXPECT_EQ(passed.status, 200);
    EXPECT_EQ(passed.body, R"({"got":3})");
    EXPECT_EQ(testing::curl_https(url_of(**guarded, "/who", "http"), {}).status, 200);
    // A guarded stream route streams once let through.
    EXPECT_EQ(testing::curl_https(url_of(**guarded, "/events", "http"), {}).body, "data: one\n\ndata: two\n\n");
    // Unknown routes get their 404 without asking the guard.
    EXPECT_EQ(testing::curl_https(url_of(**guarded, "/nowhere", "http"), {}).status, 404);
    {
      std::lock_guard lock(mutex);
      EXPECT_EQ(asked, (std::vector<std::string>{"POST /private", "POST /private", "GET /who", "GET /events"}));
    }
    // The same Router's unguarded server serves /private to anyone.
    EXPECT_EQ(testing::curl_https(url_of(**open, "/private", "http"), post).status, 200);
  }
}

TEST(RouterRoutes, ListsEveryRouteWithItsKind) {
  Router router = tls_test_router();
  router.get_blocking("/slow", [](const Request&) { return Response::json("{}"); });
  router.add_prefix("GET", "/ui/", [](const Request&) { return Response::text("x"); });
  router.get("/who", [](const Request&) { return Response::json("{}"); });  // replaces, keeps its place
  const std::vector<RouteInfo> routes = router.routes();
  ASSERT_EQ(routes.size(), 5u);
  EXPECT_EQ(routes[0].path, "/who");
  EXPECT_EQ(routes[0].kind, RouteInfo::Kind::plain);
  EXPECT_EQ(routes[1].method, "POST");
  EXPECT_EQ(routes[2].kind, RouteInfo::Kind::stream);
  EXPECT_EQ(routes[3].kind, RouteInfo::Kind::blocking);
  EXPECT_TRUE(routes[4].prefix);
  EXPECT_EQ(routes[4].path, "/ui/");
}

}  // namespace
}  // namespace inferscope::net
