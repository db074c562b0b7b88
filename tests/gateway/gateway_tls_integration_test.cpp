// Integration test of an HTTPS upstream: a certificate made by the openssl CLI for this test
// (self-signed, SAN IP:127.0.0.1) on a small TLS server; the gateway refuses it while its CA is
// not trusted (502, kind tls) and relays through it once the config names the CA (ca_file).
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "gateway/gateway_test_support.h"

namespace inferscope::gateway {
namespace {

using namespace testing;  // NOLINT
namespace asio = boost::asio;
namespace ssl = asio::ssl;

const std::string kAnswer =
    R"({"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"secure"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1}})";

// TlsUpstream answers every request with kAnswer over TLS, then closes the connection.
class TlsUpstream {
 public:
  TlsUpstream(const std::string& cert, const std::string& key) {
    context_.use_certificate_chain_file(cert);
    context_.use_private_key_file(key, ssl::context::pem);
    acceptor_.open(asio::ip::tcp::v4());
    acceptor_.bind({asio::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    asio::co_spawn(io_, accept_loop(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TlsUpstream() {
    asio::post(io_, [this] { io_.stop(); });
    thread_.join();
  }
  std::uint16_t port() const { return port_; }

 private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      boost::system::error_code ec;
      asio::ip::tcp::socket socket(io_);
      co_await acceptor_.async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      asio::co_spawn(io_, serve(std::move(socket)), asio::detached);
    }
  }
  asio::awaitable<void> serve(asio::ip::tcp::socket socket) {
    auto stream = std::make_shared<ssl::stream<asio::ip::tcp::socket>>(std::move(socket), context_);
    boost::system::error_code ec;
    co_await stream->async_handshake(ssl::stream_base::server, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;  // the gateway rejected our certificate
    std::string request;
    char buf[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      std::size_t n = co_await stream->async_read_some(asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      request.append(buf, n);
    }
    const std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                              std::to_string(kAnswer.size()) + "\r\n\r\n" + kAnswer;
    co_await asio::async_write(*stream, asio::buffer(reply), asio::redirect_error(asio::use_awaitable, ec));
    co_await stream->async_shutdown(asio::redirect_error(asio::use_awaitable, ec));
  }

  asio::io_context io_{1};
  ssl::context context_{ssl::context::tls_server};
  asio::ip::tcp::acceptor acceptor_{io_};
  std::thread thread_;
  std::uint16_t port_ = 0;
};

// Tests that verification is on by default and that naming the CA lets the request through.
TEST(GatewayTlsTest, SelfSignedUpstreamNeedsItsCa) {
  const auto dir = std::filesystem::temp_directory_path() / ("gw-tls-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string cert = (dir / "cert.pem").string(), key = (dir / "key.pem").string();
  const std::string command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
                              "-addext subjectAltName=IP:127.0.0.1 -keyout " + key + " -out " + cert +
                              " > " + (dir / "openssl.log").string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << "openssl CLI failed; see " << dir;
  TlsUpstream upstream(cert, key);
  const std::string url = "https://127.0.0.1:" + std::to_string(upstream.port());
  const std::string body = R"({"model":"x","messages":[]})";
  {
    TestGateway gw(config_for({url}));
    ASSERT_TRUE(gw.ok());
    const HttpReply r = gw.post("/v1/chat/completions", body);
    EXPECT_EQ(r.status, 502) << r.body;
    EXPECT_NE(r.body.find("upstream_tls"), std::string::npos) << r.body;
    EXPECT_EQ(metric(gw.scrape(), "inferscope_gateway_errors_total", {{"kind", "tls"}}), 1);
  }
  {
    GatewayConfig c = config_for({url});
    c.upstreams.front().ca_file = cert;
    TestGateway gw(std::move(c));
    ASSERT_TRUE(gw.ok());
    const HttpReply r = gw.post("/v1/chat/completions", body);
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body, kAnswer);
    EXPECT_EQ(metric(gw.scrape_after(1), "inferscope_generation_tokens_total"), 1);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace inferscope::gateway
