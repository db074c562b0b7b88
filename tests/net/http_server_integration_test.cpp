// Tests of the shared HTTP server core through its Beast-free Router: routing, 404/405, SSE
// routes, header-read and body-size limits, idle keep-alive close and graceful drain. Each test
// starts its own server on 127.0.0.1 port 0 and talks to it over raw blocking sockets with
// timeouts, so a hung server fails the test instead of hanging it.
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "net/http_server.h"
#include "net/router.h"
#include "support/wait_until.h"

namespace inferscope::net {
namespace {

using tcp = boost::asio::ip::tcp;

struct RawClient {
  boost::asio::io_context io;
  tcp::socket socket{io};
  explicit RawClient(std::uint16_t port, int timeout_s = 20) {
    socket.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
    timeval tv{timeout_s, 0};
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  void send(std::string_view bytes) { boost::asio::write(socket, boost::asio::buffer(bytes.data(), bytes.size())); }
  // read_all reads until the server closes the connection (or the socket timeout passes).
  std::string read_all() {
    std::string out;
    char buf[4096];
    for (;;) {
      boost::system::error_code ec;
      std::size_t n = socket.read_some(boost::asio::buffer(buf), ec);
      out.append(buf, n);
      if (ec) break;
    }
    return out;
  }
  // read_until reads until `marker` appears (or the connection ends).
  std::string read_until(std::string_view marker) {
    std::string out;
    char buf[4096];
    while (out.find(marker) == std::string::npos) {
      boost::system::error_code ec;
      std::size_t n = socket.read_some(boost::asio::buffer(buf), ec);
      out.append(buf, n);
      if (ec) break;
    }
    return out;
  }
};

std::unique_ptr<HttpServer> start(const Router& router, HttpServerOptions o = {}) {
  o.port = 0;
  auto server = HttpServer::start(o, router.handler());
  EXPECT_TRUE(server.ok()) << (server.ok() ? "" : server.error().message);
  return server.ok() ? std::move(*server) : nullptr;
}

Router status_router() {
  Router router;
  router.get("/api/status", [](const Request& r) {
    return Response::json(std::string(R"({"loopback":)") + (r.peer_loopback ? "true" : "false") + "}");
  });
  router.post("/hooks/echo", [](const Request& r) {
    Response response = Response::text(std::string(r.body));
    response.headers.emplace_back("X-Echo-Type", std::string(r.header("content-type")));
    return response;
  });
  router.add_prefix("GET", "/static/", [](const Request& r) { return Response::text(std::string(r.path)); });
  return router;
}

// Tests that plain routes answer, headers reach the handler and keep-alive carries two requests.
TEST(HttpServerTest, PlainRoutesAnswerOnOneKeepAliveConnection) {
  Router router = status_router();
  auto server = start(router);
  ASSERT_TRUE(server);
  RawClient c(server->port());
  c.send("GET /api/status HTTP/1.1\r\nHost: x\r\n\r\n"
         "POST /hooks/echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/x-test\r\nContent-Length: 5\r\n"
         "Connection: close\r\n\r\nhello");
  const std::string reply = c.read_all();
  EXPECT_NE(reply.find("HTTP/1.1 200 OK"), std::string::npos) << reply;
  EXPECT_NE(reply.find(R"({"loopback":true})"), std::string::npos) << reply;
  EXPECT_NE(reply.find("X-Echo-Type: text/x-test"), std::string::npos) << reply;
  EXPECT_NE(reply.rfind("hello"), std::string::npos) << reply;
}

// Tests that an unknown path is 404 and a known path with another method is 405 with Allow, both
// as OpenAI error JSON, and that a prefix route matches below its prefix.
TEST(HttpServerTest, UnknownPathAndWrongMethodAreOpenAiErrors) {
  Router router = status_router();
  auto server = start(router);
  ASSERT_TRUE(server);
  {
    RawClient c(server->port());
    c.send("GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const std::string reply = c.read_all();
    EXPECT_NE(reply.find("HTTP/1.1 404"), std::string::npos) << reply;
    EXPECT_NE(reply.find(R"("error":{)"), std::string::npos) << reply;
  }
  {
    RawClient c(server->port());
    c.send("DELETE /api/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const std::string reply = c.read_all();
    EXPECT_NE(reply.find("HTTP/1.1 405"), std::string::npos) << reply;
    EXPECT_NE(reply.find("Allow: GET"), std::string::npos) << reply;
  }
  {
    RawClient c(server->port());
    c.send("GET /static/app.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const std::string reply = c.read_all();
    EXPECT_NE(reply.find("HTTP/1.1 200"), std::string::npos) << reply;
    EXPECT_NE(reply.find("/static/app.js"), std::string::npos) << reply;
  }
}

// Tests that an SSE route's events reach the client as chunks of a text/event-stream.
TEST(HttpServerTest, StreamRouteWritesEventsAsChunks) {
  Router router;
  router.add_stream("/api/events", [](const Request&, EventStream& s) -> boost::asio::awaitable<void> {
    for (int i = 0; i < 3; ++i) {
      if (!co_await s.send("data: " + std::to_string(i) + "\n\n")) co_return;
    }
  });
  auto server = start(router);
  ASSERT_TRUE(server);
  RawClient c(server->port());
  c.send("GET /api/events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string reply = c.read_all();
  EXPECT_NE(reply.find("Content-Type: text/event-stream"), std::string::npos) << reply;
  EXPECT_NE(reply.find("Transfer-Encoding: chunked"), std::string::npos) << reply;
  EXPECT_NE(reply.find("data: 0\n\n"), std::string::npos) << reply;
  EXPECT_NE(reply.find("data: 2\n\n"), std::string::npos) << reply;
  EXPECT_NE(reply.find("\r\n0\r\n\r\n"), std::string::npos) << reply;  // the last chunk
}

// Tests that a client sending its headers slower than the header timeout is disconnected
// (slowloris), while the idle keep-alive timeout alone would have let it stay.
TEST(HttpServerTest, SlowHeadersAreCutAtTheHeaderTimeout) {
  Router router = status_router();
  HttpServerOptions o;
  o.header_timeout_ms = 300;
  o.idle_timeout_ms = 20000;
  auto server = start(router, o);
  ASSERT_TRUE(server);
  RawClient c(server->port());
  c.send("GET /api/status HTTP/1.1\r\n");
  const auto begin = std::chrono::steady_clock::now();
  bool cut = false;
  for (int i = 0; i < 100 && !cut; ++i) {  // one header line every 100 ms, never finishing
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    boost::system::error_code ec;
    const std::string line = "X-Slow-" + std::to_string(i) + ": 1\r\n";
    boost::asio::write(c.socket, boost::asio::buffer(line), ec);
    if (ec) cut = true;
    char byte;
    c.socket.non_blocking(true);
    c.socket.read_some(boost::asio::buffer(&byte, 1), ec);
    c.socket.non_blocking(false);
    if (ec && ec != boost::asio::error::would_block) cut = true;
  }
  EXPECT_TRUE(cut);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(8));
}

// Tests that a body over the limit gets 413 as OpenAI error JSON and the connection closes.
TEST(HttpServerTest, OversizedBodyIs413) {
  Router router = status_router();
  HttpServerOptions o;
  o.max_body_bytes = 1024;
  auto server = start(router, o);
  ASSERT_TRUE(server);
  RawClient c(server->port());
  c.send("POST /hooks/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + std::string(2048, 'a'));
  const std::string reply = c.read_all();
  EXPECT_NE(reply.find("HTTP/1.1 413"), std::string::npos) << reply;
  EXPECT_NE(reply.find("request_too_large"), std::string::npos) << reply;
}

// Tests that headers over the limit get 431 and the connection closes.
TEST(HttpServerTest, OversizedHeadersAre431) {
  Router router = status_router();
  HttpServerOptions o;
  o.max_header_bytes = 1024;
  auto server = start(router, o);
  ASSERT_TRUE(server);
  RawClient c(server->port());
  c.send("GET /api/status HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4096, 'b') + "\r\n\r\n");
  const std::string reply = c.read_all();
  EXPECT_NE(reply.find("HTTP/1.1 431"), std::string::npos) << reply;
}

// Tests that stop() with a drain lets an in-flight stream finish, closes idle connections at
// once, and refuses new connections.
TEST(HttpServerTest, StopDrainsInFlightStreams) {
  Router router;
  router.add_stream("/slow", [](const Request&, EventStream& s) -> boost::asio::awaitable<void> {
    for (int i = 0; i < 5; ++i) {
      boost::asio::steady_timer timer(s.executor(), std::chrono::milliseconds(100));
      boost::system::error_code ec;
      co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
      if (!co_await s.send("data: tick\n\n")) co_return;
    }
  });
  router.get("/fast", [](const Request&) { return Response::text("ok"); });
  auto server = start(router);
  ASSERT_TRUE(server);
  const std::uint16_t port = server->port();
  RawClient idle(port);
  idle.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(idle.read_until("ok").find("ok"), std::string::npos);
  RawClient busy(port);
  busy.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(busy.read_until("data: tick").find("data: tick"), std::string::npos);
  std::thread stopper([&] { server->stop(std::chrono::seconds(10)); });
  const std::string rest = busy.read_all();  // ends when the server closes after the stream
  stopper.join();
  std::size_t ticks = 0;
  for (std::size_t at = rest.find("data: tick"); at != std::string::npos; at = rest.find("data: tick", at + 1)) ++ticks;
  EXPECT_EQ(ticks, 4u) << rest;  // the other four of five
  EXPECT_NE(rest.find("\r\n0\r\n\r\n"), std::string::npos) << rest;
  EXPECT_EQ(idle.read_all(), "");  // closed without an answer
  boost::asio::io_context io;
  tcp::socket late(io);
  boost::system::error_code ec;
  late.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port), ec);
  EXPECT_TRUE(ec) << "a stopped server still accepts";
}

// Gate blocks the blocking handlers of a test until open() (bounded: a forgotten open fails the
// test after 30 s instead of hanging it).
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool opened = false;
  int entered = 0;
  int left = 0;
  void pass() {
    std::unique_lock lock(mu);
    ++entered;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(30), [this] { return opened; });
    ++left;
  }
  void open() {
    std::lock_guard lock(mu);
    opened = true;
    cv.notify_all();
  }
  bool wait_entered(int n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(20), [&] { return entered >= n; });
  }
  int left_count() {
    std::lock_guard lock(mu);
    return left;
  }
};

// Tests that a blocking route runs off the io thread: with its one worker stuck and its one
// waiting slot taken, a plain route on the server's single io thread still answers (before the
// stuck call returns), a third blocking request gets 503 + Retry-After as OpenAI error JSON at
// once, and the stuck and the waiting request are answered once the worker is free.
TEST(HttpServerTest, BlockingRouteRunsOnItsBoundedLane) {
  Gate gate;
  Router router;
  router.set_lane("slow", {.threads = 1, .max_waiting = 1, .retry_after_s = 7});
  router.get_blocking("/slow", [&gate](const Request& r) {
    gate.pass();
    return Response::text("slow done " + std::string(r.query));
  }, "slow");
  router.get("/fast", [](const Request&) { return Response::text("fast"); });
  auto server = start(router, {.io_threads = 1});
  ASSERT_TRUE(server);
  RawClient first(server->port());
  first.send("GET /slow?n=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  ASSERT_TRUE(gate.wait_entered(1));
  RawClient second(server->port());
  second.send("GET /slow?n=2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  ASSERT_TRUE(inferscope::testing::wait_until([&] { return router.lane_busy("slow") >= 2; }, std::chrono::seconds(10),
                                              std::chrono::milliseconds(5)));
  ASSERT_EQ(router.lane_busy("slow"), 2u);

  RawClient fast(server->port());
  fast.send("GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string fast_reply = fast.read_all();
  EXPECT_NE(fast_reply.find("HTTP/1.1 200 OK"), std::string::npos) << fast_reply;
  EXPECT_EQ(gate.left_count(), 0) << "the plain route was answered only after the blocking call returned";

  RawClient third(server->port());
  third.send("GET /slow?n=3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string refused = third.read_all();
  EXPECT_NE(refused.find("HTTP/1.1 503"), std::string::npos) << refused;
  EXPECT_NE(refused.find("Retry-After: 7"), std::string::npos) << refused;
  EXPECT_NE(refused.find(R"("error":{)"), std::string::npos) << refused;
  EXPECT_EQ(gate.left_count(), 0);

  gate.open();
  const std::string one = first.read_all();
  const std::string two = second.read_all();
  EXPECT_NE(one.find("slow done n=1"), std::string::npos) << one;
  EXPECT_NE(two.find("slow done n=2"), std::string::npos) << two;
  // A job counts itself finished only after its answer is handed to the io thread, so the client
  // can read the answer a moment before the lane is idle again.
  EXPECT_TRUE(inferscope::testing::wait_until([&] { return router.lane_busy("slow") == 0; }, std::chrono::seconds(2)))
      << router.lane_busy("slow") << " job(s) still busy";
}

// Tests that stop() returns only after a blocking handler that was running has returned (its
// answer is posted to an io_context that must still exist), and that the server then is gone.
TEST(HttpServerTest, StopWaitsForRunningBlockingHandlers) {
  Gate gate;
  Router router;
  router.get_blocking("/slow", [&gate](const Request&) {
    gate.pass();
    return Response::text("late");
  });
  auto server = start(router);
  ASSERT_TRUE(server);
  RawClient client(server->port());
  client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(gate.wait_entered(1));
  std::thread opener([&gate] { gate.open(); });
  server->stop(std::chrono::milliseconds(0));
  EXPECT_EQ(gate.left_count(), 1);
  opener.join();
  server.reset();
}

}  // namespace
}  // namespace inferscope::net
