// Tests of net::BlockingClient against net's own HTTP server on 127.0.0.1 port 0: a path prefix
// and the request's method, body, Content-Type and Accept; keep-alive reuse and the retry when the
// server has closed the kept-alive connection; 4xx as an answer; the deadline, the body limit, a
// refused connection and a bad URL as errors naming what failed. TLS verification is tested with
// a real TLS front in tests/up/cli/prometheus_https_integration_test.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "net/blocking_client.h"
#include "net/http_server.h"
#include "net/router.h"
#include "support/wait_until.h"

namespace inferscope::net {
namespace {

using namespace std::chrono_literals;

class BlockingClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.post("/api/echo", [](const Request& r) {
      return Response::text(std::string(r.header("Content-Type")) + "|" + std::string(r.header("Accept")) + "|" +
                            std::string(r.body));
    });
    router_.get("/api/big", [](const Request&) { return Response::text(std::string(64 * 1024, 'x')); });
    router_.set_lane("slow", {.threads = 1, .max_waiting = 4, .retry_after_s = 1});
    router_.get_blocking("/api/slow", [](const Request&) {
      std::this_thread::sleep_for(1500ms);
      return Response::text("late");
    }, "slow");
    auto server = HttpServer::start({.idle_timeout_ms = 300}, router_.handler());
    ASSERT_TRUE(server) << server.error().message;
    server_ = std::move(*server);
    base_ = "http://127.0.0.1:" + std::to_string(server_->port());
  }
  void TearDown() override {
    if (server_) server_->stop(1s);
  }

  Router router_;
  std::unique_ptr<HttpServer> server_;
  std::string base_;
};

// Tests the request as sent, the answer as read, and one connection for consecutive requests.
TEST_F(BlockingClientTest, SendsUnderPrefixAndReusesConnection) {
  auto client = BlockingClient::create(base_ + "/api/", {.accept = "application/json"});
  ASSERT_TRUE(client) << client.error().message;
  for (int i = 0; i < 3; ++i) {
    auto reply = client->request("POST", "/echo", "q=" + std::to_string(i), "application/x-www-form-urlencoded");
    ASSERT_TRUE(reply) << reply.error().message;
    EXPECT_EQ(reply->status, 200);
    EXPECT_EQ(reply->body, "application/x-www-form-urlencoded|application/json|q=" + std::to_string(i));
    EXPECT_EQ(reply->content_type.rfind("text/plain", 0), 0u) << reply->content_type;
  }
  EXPECT_EQ(server_->connections(), 1u);
  auto missing = client->request("GET", "/nope");
  ASSERT_TRUE(missing) << missing.error().message;
  EXPECT_EQ(missing->status, 404);
  EXPECT_NE(missing->body.find("\"error\""), std::string::npos) << missing->body;
}

// Tests that a kept-alive connection the server closed (idle timeout) is retried on a fresh one.
TEST_F(BlockingClientTest, RetriesWhenKeptAliveConnectionWasClosed) {
  auto client = BlockingClient::create(base_);
  ASSERT_TRUE(client) << client.error().message;
  ASSERT_TRUE(client->request("POST", "/api/echo", "a", "text/plain"));
  ASSERT_TRUE(inferscope::testing::wait_until([&] { return server_->connections() == 0; }, 10s, 20ms));
  auto again = client->request("POST", "/api/echo", "b", "text/plain");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->body, "text/plain||b");
}

// Tests the deadline, the body limit, a refused connection and a bad URL.
TEST_F(BlockingClientTest, FailuresNameTheUrlAndCause) {
  auto slow = BlockingClient::create(base_, {.timeout = 300ms});
  ASSERT_TRUE(slow);
  auto late = slow->request("GET", "/api/slow");
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().message, "cannot GET " + base_ + "/api/slow: no answer within 300 ms");

  auto small = BlockingClient::create(base_, {.max_body_bytes = 1000});
  ASSERT_TRUE(small);
  auto big = small->request("GET", "/api/big");
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().message, "cannot GET " + base_ + "/api/big: answer larger than 1000 bytes");

  server_->stop(1s);
  server_.reset();
  auto refused = blocking_http_request("GET", base_ + "/api/big?x=1");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message.rfind("cannot GET " + base_ + "/api/big?x=1: cannot connect: ", 0), 0u)
      << refused.error().message;

  auto bad = BlockingClient::create("ftp://h/x", {}, "--prometheus");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("--prometheus"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("ftp://h/x"), std::string::npos) << bad.error().message;
  auto no_ca = BlockingClient::create("https://127.0.0.1:1", {.tls = {.ca_file = "/nonexistent/ca.pem"}});
  ASSERT_FALSE(no_ca);
  EXPECT_NE(no_ca.error().message.find("/nonexistent/ca.pem"), std::string::npos) << no_ca.error().message;
}

}  // namespace
}  // namespace inferscope::net
