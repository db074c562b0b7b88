// Integration tests of how the gateway reports upstream failures: each kind (refused, reset,
// header timeout, idle timeout mid-stream, malformed stream, truncated stream, 4xx, 5xx, a serve
// fault) gives the client a clear error (before the head: an HTTP error; inside a stream: an
// error event then [DONE]) and counts inferscope_gateway_errors_total{kind}. Also passive health,
// client limits and client auth.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gateway/gateway_test_support.h"
#include "loadgen/test_llm_server.h"

namespace inferscope::gateway {
namespace {

using namespace testing;  // NOLINT
using loadgen::testing::Behavior;
using loadgen::testing::TestLlmServer;
using loadgen::testing::TestServerOptions;
using serve::testing::chat_body;
using serve::testing::fast_options;
using serve::testing::sse_payloads;
using serve::testing::TestServer;

const std::string kStreamBody = R"({"model":"x","stream":true,"messages":[]})";

// free_port returns a loopback port nobody listens on (bound, then released).
std::uint16_t free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

double errors(TestGateway& gw, const char* kind) {
  return metric(gw.scrape(), "inferscope_gateway_errors_total", {{"kind", kind}});
}

// check_stream_error asserts a 200 stream that ends with an error event of `code`, then [DONE].
void check_stream_error(const HttpReply& r, const std::string& code) {
  ASSERT_EQ(r.status, 200) << r.body;
  const auto events = sse_payloads(r.body);
  ASSERT_GE(events.size(), 2u) << r.body;
  EXPECT_EQ(events.back(), "[DONE]") << r.body;
  EXPECT_NE(events[events.size() - 2].find("\"code\":\"" + code + "\""), std::string::npos) << r.body;
}

// Tests the failures that happen before any response byte: an HTTP error naming the upstream.
TEST(GatewayFailuresTest, FailuresBeforeTheHeadAreHttpErrors) {
  {
    TestGateway gw(config_for({url(free_port())}));
    const HttpReply r = gw.post("/v1/chat/completions", kStreamBody);
    EXPECT_EQ(r.status, 502) << r.body;
    EXPECT_NE(r.body.find("upstream_connect_refused"), std::string::npos) << r.body;
    EXPECT_EQ(errors(gw, "connect_refused"), 1);
  }
  {
    TestLlmServer upstream({.behavior = Behavior::kReset});
    TestGateway gw(config_for({upstream.base_url()}));
    const HttpReply r = gw.post("/v1/chat/completions", kStreamBody);
    EXPECT_EQ(r.status, 502) << r.body;
    EXPECT_NE(r.body.find("upstream_reset"), std::string::npos) << r.body;
    EXPECT_EQ(errors(gw, "reset"), 1);
  }
  {
    TestLlmServer upstream({.behavior = Behavior::kHang});
    GatewayConfig c = config_for({upstream.base_url()});
    c.header_timeout = std::chrono::milliseconds(300);
    TestGateway gw(std::move(c));
    const HttpReply r = gw.post("/v1/chat/completions", kStreamBody);
    EXPECT_EQ(r.status, 504) << r.body;
    EXPECT_NE(r.body.find("upstream_header_timeout"), std::string::npos) << r.body;
    EXPECT_EQ(errors(gw, "header_timeout"), 1);
  }
}

// Tests the failures inside a stream: the client sees an error event, then [DONE].
TEST(GatewayFailuresTest, BrokenStreamsEndWithAnErrorEvent) {
  {
    TestLlmServer upstream({.behavior = Behavior::kMalformed});
    TestGateway gw(config_for({upstream.base_url()}));
    check_stream_error(gw.post("/v1/chat/completions", kStreamBody), "upstream_malformed_stream");
    EXPECT_EQ(errors(gw, "malformed_stream"), 1);
  }
  {
    TestLlmServer upstream({.behavior = Behavior::kTruncate});
    TestGateway gw(config_for({upstream.base_url()}));
    check_stream_error(gw.post("/v1/chat/completions", kStreamBody), "upstream_truncated_stream");
    EXPECT_EQ(errors(gw, "truncated_stream"), 1);
    // Tokens that reached the client before the break are still counted.
    EXPECT_EQ(metric(gw.scrape_after(1), "inferscope_generation_tokens_total"), 2);
  }
  {
    TestServerOptions so;
    so.tokens = 3;
    so.itl = std::chrono::seconds(5);
    TestLlmServer upstream(so);
    GatewayConfig c = config_for({upstream.base_url()});
    c.idle_timeout = std::chrono::milliseconds(300);
    TestGateway gw(std::move(c));
    check_stream_error(gw.post("/v1/chat/completions", kStreamBody), "upstream_idle_timeout");
    EXPECT_EQ(errors(gw, "idle_timeout"), 1);
  }
}

// Tests that upstream 4xx/5xx answers pass through with their status and body and are counted.
TEST(GatewayFailuresTest, UpstreamStatusErrorsPassThrough) {
  {
    TestLlmServer upstream({.behavior = Behavior::kStatus500});
    TestGateway gw(config_for({upstream.base_url()}));
    const HttpReply r = gw.post("/v1/chat/completions", kStreamBody);
    EXPECT_EQ(r.status, 500);
    EXPECT_NE(r.body.find("\"server_error\""), std::string::npos) << r.body;
    EXPECT_EQ(errors(gw, "upstream_5xx"), 1);
    EXPECT_EQ(metric(gw.scrape_after(1), "inferscope_requests_total", {{"status_class", "5xx"}}), 1);
  }
  {
    TestLlmServer upstream({.behavior = Behavior::kStatus429});
    TestGateway gw(config_for({upstream.base_url()}));
    EXPECT_EQ(gw.post("/v1/chat/completions", kStreamBody).status, 429);
    EXPECT_EQ(errors(gw, "upstream_4xx"), 1);
  }
  {
    serve::ServerOptions so = fast_options();
    so.faults.error_rate = 1;
    TestServer serve(so);
    TestGateway gw(config_for({url(serve.port())}));
    const HttpReply r = gw.post("/v1/chat/completions", chat_body("hi", 4, true));
    EXPECT_EQ(r.status, 500) << r.body;
    EXPECT_NE(r.body.find("error_rate"), std::string::npos) << r.body;
    EXPECT_EQ(errors(gw, "upstream_5xx"), 1);
  }
}

// Tests passive health: a refusing upstream leaves rotation after its failures and the healthy
// one takes the traffic.
TEST(GatewayFailuresTest, FailingUpstreamIsSkipped) {
  TestLlmServer good({});
  GatewayConfig c = config_for({url(free_port()), good.base_url()});
  c.health_failures = 1;
  c.health_backoff = std::chrono::seconds(60);
  TestGateway gw(std::move(c));
  int ok = 0;
  for (int i = 0; i < 6; ++i) ok += gw.post("/v1/chat/completions", kStreamBody).status == 200;
  EXPECT_GE(ok, 5);
  EXPECT_EQ(metric(gw.scrape(), "inferscope_gateway_upstream_healthy"), 1);  // one of two is up
}

// Tests client limits (oversized body -> 413) and client bearer auth from a file.
TEST(GatewayFailuresTest, ClientLimitsAndAuth) {
  TestLlmServer upstream({});
  const auto dir = std::filesystem::temp_directory_path() / ("gw-auth-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "keys") << "# gateway keys\nsk-test-1\n";
  GatewayConfig c = config_for({upstream.base_url()});
  c.max_body_bytes = 1024;
  c.auth_keys_file = (dir / "keys").string();
  TestGateway gw(std::move(c));
  ASSERT_TRUE(gw.ok());
  EXPECT_EQ(gw.post("/v1/chat/completions", kStreamBody).status, 401);
  const HttpReply authed = request(gw.port(), http::verb::post, "/v1/chat/completions", kStreamBody,
                                   "application/json", {{http::field::authorization, "Bearer sk-test-1"}});
  EXPECT_EQ(authed.status, 200) << authed.body;
  const HttpReply big = request(gw.port(), http::verb::post, "/v1/chat/completions", std::string(4096, ' '),
                                "application/json", {{http::field::authorization, "Bearer sk-test-1"}});
  EXPECT_EQ(big.status, 413);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace inferscope::gateway
