// MetricsServer over real HTTP on loopback, driven by a tiny blocking Beast client.
#include <utility>  // first: Boost 1.74's asio headers use std::exchange without including it

#include <inferscope/metrics/metrics_server.h>

#include <sys/socket.h>
#include <sys/time.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <gtest/gtest.h>

#include <inferscope/metrics/buckets.h>
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/registry.h>

namespace inferscope::metrics {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

constexpr std::string_view kText004 = "text/plain; version=0.0.4; charset=utf-8";
constexpr std::string_view kOpenMetrics = "application/openmetrics-text; version=1.0.0; charset=utf-8";

struct Reply {
  unsigned status = 0;
  std::string content_type;
  std::string content_encoding;
  std::string allow;
  std::string content_length;
  std::string body;
  bool keep_alive = false;
};

// Client is a blocking HTTP/1.1 client on one keep-alive connection. Socket-level send/receive
// timeouts bound every call, so a broken server fails the test instead of hanging it.
class Client {
 public:
  explicit Client(std::uint16_t port) : socket_(ioc_) {
    socket_.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    timeval timeout{10, 0};
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  }

  // request sends one request and reads the reply; throws boost::system::system_error on failure.
  Reply request(http::verb method, std::string_view target, std::string_view accept = {},
                std::string_view accept_encoding = {}) {
    http::request<http::string_body> req{method, std::string(target), 11};
    req.set(http::field::host, "127.0.0.1");
    if (!accept.empty()) req.set(http::field::accept, std::string(accept));
    if (!accept_encoding.empty()) req.set(http::field::accept_encoding, std::string(accept_encoding));
    http::write(socket_, req);
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    if (method == http::verb::head) parser.skip(true);
    http::read(socket_, buffer_, parser);
    const auto& res = parser.get();
    auto field = [&res](http::field f) { return std::string(res[f]); };
    return Reply{res.result_int(), field(http::field::content_type), field(http::field::content_encoding),
                 field(http::field::allow), field(http::field::content_length), res.body(), res.keep_alive()};
  }

  tcp::socket& socket() { return socket_; }

 private:
  asio::io_context ioc_;
  tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

// gunzip inflates a gzip member; empty optional if the data is not valid gzip.
std::optional<std::string> gunzip(const std::string& data) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return std::nullopt;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char chunk[16384];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof chunk;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - zs.avail_out);
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

// value_of returns the sample value on the line starting with `series ` in a text exposition.
std::optional<double> value_of(const std::string& text, const std::string& series) {
  std::size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return std::nullopt;
  return std::stod(text.substr(at + series.size() + 2));
}

// Fixture: a registry with a counter and a histogram, and a server on an ephemeral loopback port.
class MetricsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MetricOptions requests;
    requests.name = "test_requests_total";
    requests.help = "Requests served.";
    requests_ = registry_.counter(requests).with({});
    HistogramOptions latency;
    latency.name = "test_latency_seconds";
    latency.help = "Request latency.";
    latency.buckets = default_latency_buckets();
    latency_ = registry_.histogram(latency).with({});
    requests_.add(3);
    latency_.observe(0.25);
  }
  std::unique_ptr<MetricsServer> start(MetricsServerOptions options = {}) {
    options.port = 0;
    auto server = MetricsServer::start(registry_, options);
    if (!server) throw std::runtime_error(server.error().message);
    return std::move(server.value());
  }

  Registry registry_;
  Counter requests_;
  Histogram latency_;
};

// Tests that a plain GET gets Prometheus text 0.0.4 with the exact Content-Type and the series.
TEST_F(MetricsServerTest, ServesPrometheusTextByDefault) {
  auto server = start();
  Client client(server->port());
  Reply reply = client.request(http::verb::get, "/metrics");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.content_type, kText004);
  EXPECT_EQ(reply.content_encoding, "");
  EXPECT_EQ(value_of(reply.body, "test_requests_total"), 3.0) << reply.body;
  EXPECT_EQ(value_of(reply.body, "test_latency_seconds_count"), 1.0) << reply.body;
}

// Tests that an OpenMetrics Accept header (Prometheus 3's default) gets OpenMetrics with # EOF.
TEST_F(MetricsServerTest, NegotiatesOpenMetrics) {
  auto server = start();
  Client client(server->port());
  Reply reply = client.request(http::verb::get, "/metrics",
                               "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,"
                               "text/plain;version=0.0.4;q=0.2,*/*;q=0.1");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.content_type, kOpenMetrics);
  ASSERT_GE(reply.body.size(), 6u);
  EXPECT_EQ(reply.body.substr(reply.body.size() - 6), "# EOF\n");
}

// Tests that gzip is sent when accepted, decompresses to the plain body, and honours q=0.
TEST_F(MetricsServerTest, GzipBodyDecompressesToSameText) {
  auto server = start();
  Client client(server->port());
  Reply plain = client.request(http::verb::get, "/metrics");
  Reply zipped = client.request(http::verb::get, "/metrics", {}, "gzip, deflate");
  EXPECT_EQ(zipped.status, 200u);
  EXPECT_EQ(zipped.content_encoding, "gzip");
  EXPECT_EQ(zipped.content_type, kText004);
  EXPECT_EQ(gunzip(zipped.body), plain.body);
  Reply refused = client.request(http::verb::get, "/metrics", {}, "gzip;q=0, identity");
  EXPECT_EQ(refused.content_encoding, "");
  EXPECT_EQ(refused.body, plain.body);
}

// Tests that HEAD gets the GET headers and length but no body, on a connection that stays usable.
TEST_F(MetricsServerTest, HeadHasHeadersWithoutBody) {
  auto server = start();
  Client client(server->port());
  Reply get = client.request(http::verb::get, "/metrics");
  Reply head = client.request(http::verb::head, "/metrics");
  EXPECT_EQ(head.status, 200u);
  EXPECT_EQ(head.content_type, kText004);
  EXPECT_EQ(head.content_length, std::to_string(get.body.size()));
  EXPECT_TRUE(head.body.empty());
  EXPECT_EQ(client.request(http::verb::get, "/metrics").body, get.body);  // no stray body bytes
}

// Tests 404 for other paths (a query string on the metrics path is fine) and 405 with Allow.
TEST_F(MetricsServerTest, OtherPathsAre404AndOtherMethods405) {
  auto server = start();
  Client client(server->port());
  EXPECT_EQ(client.request(http::verb::get, "/").status, 404u);
  EXPECT_EQ(client.request(http::verb::get, "/metricsx").status, 404u);
  EXPECT_EQ(client.request(http::verb::get, "/metrics?debug=1").status, 200u);
  Reply post = client.request(http::verb::post, "/metrics");
  EXPECT_EQ(post.status, 405u);
  EXPECT_EQ(post.allow, "GET, HEAD");
  EXPECT_EQ(client.request(http::verb::delete_, "/metrics").status, 405u);
  EXPECT_TRUE(post.keep_alive);
}

// Tests that a custom path is served and the default one is not.
TEST_F(MetricsServerTest, CustomPath) {
  auto server = start({.path = "/internal/prom"});
  Client client(server->port());
  EXPECT_EQ(client.request(http::verb::get, "/internal/prom").status, 200u);
  EXPECT_EQ(client.request(http::verb::get, "/metrics").status, 404u);
}

// Tests that the default bind is loopback: the server reports it and the client sees it.
TEST_F(MetricsServerTest, BindsLoopbackByDefault) {
  auto result = MetricsServer::start(registry_, {.port = 0});
  ASSERT_TRUE(result.ok()) << result.error().message;
  auto& server = *result;
  EXPECT_EQ(server->local_address(), "127.0.0.1");
  Client client(server->port());
  EXPECT_EQ(client.socket().remote_endpoint().address().to_string(), "127.0.0.1");
  EXPECT_TRUE(client.socket().remote_endpoint().address().is_loopback());
}

// Tests that port 0 gives distinct real ports and that a taken port is a clear error.
TEST_F(MetricsServerTest, EphemeralPortsAndBindErrors) {
  auto first = start();
  auto second = start();
  EXPECT_NE(first->port(), 0);
  EXPECT_NE(first->port(), second->port());
  auto clash = MetricsServer::start(registry_, {.port = first->port()});
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.error().message.rfind("cannot listen for metrics scrapes on 127.0.0.1:", 0), 0u)
      << clash.error().message;
  EXPECT_FALSE(MetricsServer::start(registry_, {.bind_address = "localhost!", .port = 0}).ok());
  EXPECT_FALSE(MetricsServer::start(registry_, {.port = 0, .path = "metrics"}).ok());
}

// Tests that stop() is idempotent, joins even with an idle keep-alive connection open (its read
// deadline is far away, so only an active close ends it), and that the port then refuses.
TEST_F(MetricsServerTest, StopIsIdempotentAndClosesConnections) {
  auto server = start({.read_timeout = std::chrono::minutes(10)});
  const std::uint16_t port = server->port();
  Client idle(port);
  EXPECT_EQ(idle.request(http::verb::get, "/metrics").status, 200u);
  server->stop();
  server->stop();
  EXPECT_THROW(idle.request(http::verb::get, "/metrics"), boost::system::system_error);
  EXPECT_THROW(Client refused(port), boost::system::system_error);
  server.reset();  // destructor after stop() is a no-op
}

// Tests that a collect hook that throws gives a 500 and the server keeps serving afterwards.
TEST_F(MetricsServerTest, RenderFailureIs500) {
  std::atomic<bool> fail{true};
  registry_.add_collect_hook([&fail] {
    if (fail.load()) throw std::runtime_error("hook broke");
  });
  auto server = start();
  Client client(server->port());
  Reply broken = client.request(http::verb::get, "/metrics");
  EXPECT_EQ(broken.status, 500u);
  EXPECT_NE(broken.body.find("hook broke"), std::string::npos);
  fail = false;
  EXPECT_EQ(client.request(http::verb::get, "/metrics").status, 200u);
}

// Tests that a malformed request gets a 400 and the connection is closed.
TEST_F(MetricsServerTest, MalformedRequestIs400) {
  auto server = start();
  Client client(server->port());
  const std::string garbage = "GET /metrics HTTP/1.1\r\nHost: x\r\nbad header line\r\n\r\n";
  asio::write(client.socket(), asio::buffer(garbage));
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(client.socket(), buffer, res);
  EXPECT_EQ(res.result_int(), 400u);
  EXPECT_FALSE(res.keep_alive());
}

// Tests that connections beyond max_connections are refused and a slot frees when one closes.
TEST_F(MetricsServerTest, BoundsConcurrentConnections) {
  auto server = start({.max_connections = 1});
  auto held = std::make_unique<Client>(server->port());
  EXPECT_EQ(held->request(http::verb::get, "/metrics").status, 200u);  // now surely counted
  {
    Client extra(server->port());  // the kernel accepts; the server answers 503 and closes
    unsigned status = 0;
    try {
      status = extra.request(http::verb::get, "/metrics").status;
    } catch (const boost::system::system_error&) {
      status = 0;  // a reset before the 503 was read also means "refused"
    }
    EXPECT_NE(status, 200u);
  }
  held.reset();
  // The server sees the close asynchronously: wait for it, then a new connection must be served.
  ASSERT_TRUE(server->wait_connections_at_most_for_test(0, std::chrono::seconds(20)));
  const unsigned status = Client(server->port()).request(http::verb::get, "/metrics").status;
  EXPECT_EQ(status, 200u);
}

// Tests concurrent scrapes on several connections while writer threads update the metrics: every
// scrape succeeds and each client sees the counter never go down.
TEST_F(MetricsServerTest, ConcurrentScrapesWhileWritersBusy) {
  auto server = start();
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([this, &done] {
      for (int i = 0; i < 50'000'000 && !done.load(std::memory_order_relaxed); ++i) {
        requests_.inc();
        latency_.observe(0.001 * (i % 1000));
      }
    });
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> scrapers;
  for (int s = 0; s < 3; ++s) {
    scrapers.emplace_back([&server, &failures, s] {
      try {
        Client client(server->port());
        double last = 0;
        for (int i = 0; i < 25; ++i) {
          Reply reply = client.request(http::verb::get, "/metrics", s == 1 ? "application/openmetrics-text" : "",
                                       s == 2 ? "gzip" : "");
          std::optional<std::string> text = s == 2 ? gunzip(reply.body) : std::optional(reply.body);
          std::optional<double> value = text ? value_of(*text, "test_requests_total") : std::nullopt;
          if (reply.status != 200 || !value || *value < last) ++failures;
          last = value.value_or(last);
        }
      } catch (const std::exception&) {
        ++failures;
      }
    });
  }
  for (auto& t : scrapers) t.join();
  done = true;
  for (auto& t : writers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace inferscope::metrics
