// File: serve_test_support.h
// Helpers for the serve integration tests: an in-process Server on 127.0.0.1 port 0, a blocking
// HTTP/1.1 client with socket timeouts (so a hung server fails a test instead of hanging it), SSE
// splitting, and /metrics scraping through the exposition parser.
// Example: TestServer s(fast_options()); auto r = s.post("/v1/chat/completions", chat_body("hi", 8));
// Not thread-safe per client call; each call opens its own connection.
#pragma once

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <gtest/gtest.h>
#include <inferscope/metrics/exposition_parser.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "serve/engine/engine.h"
#include "serve/server.h"
#include "support/wait_until.h"

namespace inferscope::serve::testing {

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

// HttpReply is a whole response as the client saw it.
struct HttpReply {
  int status = 0;
  std::string body;
  http::fields headers;
  std::string header(std::string_view name) const {
    auto it = headers.find(boost::beast::string_view(name.data(), name.size()));
    return it == headers.end() ? std::string() : std::string(it->value());
  }
};

// fast_options returns a server config for tests: port 0, real 8B profile 20x faster than real time.
inline ServerOptions fast_options() {
  ServerOptions o;
  o.port = 0;
  o.engine.time_scale = 20;
  o.model_names = {"sim-a", "sim-b"};
  o.dialects = {"inferscope", "vllm", "gen_ai"};
  return o;
}

// connect_with_timeouts opens a blocking socket to the port whose reads/writes give up after 30 s.
inline void connect_with_timeouts(tcp::socket& socket, std::uint16_t port) {
  socket.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  timeval tv{30, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// request sends one request on a fresh connection and reads the whole response (chunked bodies
// are decoded). Network failures become status 0 with the error text as body.
inline HttpReply request(std::uint16_t port, http::verb method, std::string target, std::string body = {},
                         std::string content_type = "application/json",
                         std::vector<std::pair<http::field, std::string>> extra = {}) {
  HttpReply reply;
  try {
    boost::asio::io_context io;
    tcp::socket socket(io);
    connect_with_timeouts(socket, port);
    http::request<http::string_body> req{method, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!body.empty()) req.set(http::field::content_type, content_type);
    for (auto& [field, value] : extra) req.set(field, value);
    req.body() = std::move(body);
    req.prepare_payload();
    http::write(socket, req);
    boost::beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    http::read(socket, buffer, parser);
    reply.status = static_cast<int>(parser.get().result_int());
    reply.body = parser.get().body();
    reply.headers = parser.get().base();
  } catch (const std::exception& e) {
    reply.status = 0;
    reply.body = e.what();
  }
  return reply;
}

// sse_payloads splits an SSE body into the payloads of its `data: ` lines, in order.
inline std::vector<std::string> sse_payloads(const std::string& body) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < body.size()) {
    std::size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) end = body.size();
    std::string event = body.substr(pos, end - pos);
    if (event.rfind("data: ", 0) == 0) out.push_back(event.substr(6));
    pos = end + 2;
  }
  return out;
}

// chat_body builds a chat request with one user message.
inline std::string chat_body(const std::string& content, int max_tokens, bool stream = false,
                             nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json body = {{"model", "sim-a"},
                         {"messages", {{{"role", "user"}, {"content", content}}}},
                         {"max_tokens", max_tokens},
                         {"stream", stream}};
  body.update(extra);
  return body.dump();
}

// words returns a prompt of n short words (about n tokens).
inline std::string words(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += (i % 7 == 0) ? " cat" : " dog";
  return out;
}

// TestServer starts a Server in-process and stops it when destroyed.
class TestServer {
 public:
  explicit TestServer(ServerOptions options) {
    auto started = Server::start(std::move(options));
    if (!started) ADD_FAILURE() << started.error().message;
    else server_ = std::move(*started);
  }
  ~TestServer() {
    if (server_) server_->stop();
  }
  bool ok() const { return server_ != nullptr; }
  Server& server() { return *server_; }
  std::uint16_t port() const { return server_->port(); }

  HttpReply post(const std::string& target, std::string body,
                 std::vector<std::pair<http::field, std::string>> extra = {}) {
    return request(port(), http::verb::post, target, std::move(body), "application/json", std::move(extra));
  }
  HttpReply get(const std::string& target) { return request(port(), http::verb::get, target); }

  // scrape fetches and parses /metrics (0.0.4); fails the test on a bad exposition.
  metrics::ParsedExposition scrape() {
    HttpReply r = get("/metrics");
    EXPECT_EQ(r.status, 200) << r.body;
    auto parsed = metrics::parse_exposition(r.body, metrics::ExpositionTextFormat::kPrometheus004);
    if (!parsed) {
      ADD_FAILURE() << parsed.error().message;
      return {};
    }
    return std::move(*parsed);
  }

 private:
  std::unique_ptr<Server> server_;
};

// metric returns the sum of every sample named `name` carrying `labels`, or -1 when none exists.
inline double metric(const metrics::ParsedExposition& e, std::string_view name,
                     metrics::LabelSubset labels = {}) {
  auto samples = metrics::find_samples(e, name, labels);
  if (samples.empty()) return -1;
  double sum = 0;
  for (const auto* s : samples) sum += s->value;
  return sum;
}

// StageTotals is one stage's histogram sum and count (over all models) at one scrape.
struct StageTotals {
  double sum = 0;
  double count = 0;
};

inline StageTotals stage_totals(const metrics::ParsedExposition& e, std::string_view stage) {
  return {std::max(0.0, metric(e, "inferscope_stage_duration_seconds_sum", {{"stage", stage}})),
          std::max(0.0, metric(e, "inferscope_stage_duration_seconds_count", {{"stage", stage}}))};
}

// stage_mean_between returns the mean stage duration of the requests between two scrapes.
inline double stage_mean_between(const metrics::ParsedExposition& before, const metrics::ParsedExposition& after,
                                 std::string_view stage) {
  StageTotals a = stage_totals(before, stage), b = stage_totals(after, stage);
  return b.count > a.count ? (b.sum - a.sum) / (b.count - a.count) : 0;
}

// wait_until polls `condition` every 10 ms until it holds or `limit` passes. Only for observers
// outside the process under test (a gateway's or Prometheus's view, scraped over HTTP); in-process
// serve tests wait on events instead: Engine::wait_stats, ServeMetrics::wait_requests_recorded.
inline bool wait_until(const std::function<bool()>& condition,
                       std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  return inferscope::testing::wait_until(condition, limit);
}

}  // namespace inferscope::serve::testing

namespace inferscope::serve::testing {

// RawStream is a request written on its own socket whose response is read only when asked, so a
// test can hold many requests open at once or hang up in the middle of a stream.
class RawStream {
 public:
  RawStream(std::uint16_t port, const std::string& target, const std::string& body) : socket_(io_) {
    connect_with_timeouts(socket_, port);
    http::request<http::string_body> req{http::verb::post, target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    http::write(socket_, req);
  }
  // read_until reads until the bytes seen so far contain `needle` (or the 30 s socket timeout).
  bool read_until(std::string_view needle) {
    char chunk[4096];
    while (seen_.find(needle) == std::string::npos) {
      boost::system::error_code ec;
      std::size_t n = socket_.read_some(boost::asio::buffer(chunk), ec);
      if (ec) return false;
      seen_.append(chunk, n);
    }
    return true;
  }
  const std::string& seen() const { return seen_; }
  void close() {
    boost::system::error_code ec;
    socket_.close(ec);
  }

 private:
  boost::asio::io_context io_;
  tcp::socket socket_;
  std::string seen_;
};

}  // namespace inferscope::serve::testing
