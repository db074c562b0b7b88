// File: test_llm_server.h
// TestLlmServer is a small OpenAI-style HTTP/1.1 server for the loadgen tests: it streams SSE
// tokens with configurable TTFT/ITL, or misbehaves on purpose (resets, malformed SSE, truncated
// streams, 500/429, never answering) so every client error kind can be provoked on loopback.
// Example: TestLlmServer srv({.behavior = Behavior::kReset}); run bench against srv.port();
// Runs its own io thread; start/stop from the test thread. Never binds anything but 127.0.0.1.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include <boost/asio.hpp>

namespace inferscope::loadgen::testing {

// kReplay answers every streamed request with 200 and TestServerOptions::replay as the SSE body
// (a recorded stream, e.g. llama.cpp's `error:` line); the other values misbehave as named.
enum class Behavior { kOk, kReset, kMalformed, kTruncate, kStatus500, kStatus429, kHang, kStreamErrorObject, kReplay };

struct TestServerOptions {
  Behavior behavior = Behavior::kOk;
  bool usage = true;        // send usage in the last chunk / body
  int tokens = 5;           // output tokens per request
  bool role_chunk = false;  // vLLM-style role-only first chunk
  std::chrono::microseconds ttft{0};
  std::chrono::microseconds itl{0};
  std::string replay = {};  // the SSE body for Behavior::kReplay
};

class TestLlmServer {
 public:
  explicit TestLlmServer(TestServerOptions options) : options_(options) {
    namespace asio = boost::asio;
    acceptor_.open(asio::ip::tcp::v4());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind({asio::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen(4096);
    port_ = acceptor_.local_endpoint().port();
    asio::co_spawn(io_, accept_loop(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TestLlmServer() { stop(); }

  void stop() {
    if (!thread_.joinable()) return;
    boost::asio::post(io_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
      for (auto& s : sockets_) s.close(ec);
      io_.stop();
    });
    thread_.join();
  }

  unsigned short port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_.load(); }

  // wait_for_requests blocks until `n` requests have arrived or `timeout` passed; reports which.
  bool wait_for_requests(int n, std::chrono::milliseconds timeout) {
    std::unique_lock lock(arrived_mutex_);
    return arrived_.wait_for(lock, timeout, [&] { return requests_.load() >= n; });
  }
  int peak_concurrent() const { return peak_.load(); }

 private:
  using Socket = boost::asio::ip::tcp::socket;
  template <class T>
  using Awaitable = boost::asio::awaitable<T>;

  static auto tok(boost::system::error_code& ec) {
    return boost::asio::redirect_error(boost::asio::use_awaitable, ec);
  }

  Awaitable<void> accept_loop() {
    for (;;) {
      boost::system::error_code ec;
      Socket socket(io_);
      co_await acceptor_.async_accept(socket, tok(ec));
      if (ec) co_return;
      socket.set_option(boost::asio::ip::tcp::no_delay(true), ec);
      sockets_.push_back(std::move(socket));
      auto it = std::prev(sockets_.end());
      boost::asio::co_spawn(io_, serve(it), boost::asio::detached);
    }
  }

  // chunk frames `s` as one HTTP/1.1 chunk.
  static std::string chunk(const std::string& s) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", s.size());
    return size + s + "\r\n";
  }

  std::string token_event(int i) const {
    return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" t" + std::to_string(i) +
           "\"},\"finish_reason\":null}]}\n\n";
  }
  std::string final_event() const {
    std::string usage = options_.usage ? ",\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":" +
                                             std::to_string(options_.tokens) + "}"
                                       : "";
    return "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]" + usage + "}\n\n";
  }

  Awaitable<bool> wait(std::chrono::microseconds d) {
    if (d.count() <= 0) co_return true;
    boost::asio::steady_timer t(io_, d);
    boost::system::error_code ec;
    co_await t.async_wait(tok(ec));
    co_return !ec;
  }

  Awaitable<bool> write(Socket& s, const std::string& data) {
    boost::system::error_code ec;
    co_await boost::asio::async_write(s, boost::asio::buffer(data), tok(ec));
    co_return !ec;
  }

  Awaitable<void> serve(std::list<Socket>::iterator it) {
    Socket& s = *it;
    std::string buf;
    for (;;) {
      // Read one request: headers, then Content-Length bytes of body.
      boost::system::error_code ec;
      std::size_t header_end;
      while ((header_end = buf.find("\r\n\r\n")) == std::string::npos) {
        char tmp[4096];
        std::size_t n = co_await s.async_read_some(boost::asio::buffer(tmp), tok(ec));
        if (ec) co_return;
        buf.append(tmp, n);
      }
      std::size_t cl_pos = buf.find("Content-Length: ");
      std::size_t body_len = cl_pos < header_end ? std::stoul(buf.substr(cl_pos + 16)) : 0;
      while (buf.size() < header_end + 4 + body_len) {
        char tmp[4096];
        std::size_t n = co_await s.async_read_some(boost::asio::buffer(tmp), tok(ec));
        if (ec) co_return;
        buf.append(tmp, n);
      }
      std::string body = buf.substr(header_end + 4, body_len);
      buf.erase(0, header_end + 4 + body_len);
      int now = ++active_;
      int peak = peak_.load();
      while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
      }
      {
        std::lock_guard lock(arrived_mutex_);
        ++requests_;
      }
      arrived_.notify_all();
      bool keep = co_await respond(s, body.find("\"stream\":true") != std::string::npos);
      --active_;
      if (!keep) co_return;
    }
  }

  // respond answers one request according to the behavior; false when the connection is done.
  Awaitable<bool> respond(Socket& s, bool stream) {
    boost::system::error_code ec;
    switch (options_.behavior) {
      case Behavior::kReset:
        s.set_option(boost::asio::socket_base::linger(true, 0), ec);
        s.close(ec);
        co_return false;
      case Behavior::kHang:
        co_await wait(std::chrono::hours(1));
        co_return false;
      case Behavior::kStatus500:
      case Behavior::kStatus429: {
        std::string body = R"({"error":{"message":"test","type":"server_error"}})";
        std::string status = options_.behavior == Behavior::kStatus500 ? "500 Internal Server Error" : "429 Too Many Requests";
        co_return co_await write(s, "HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nContent-Length: " +
                                        std::to_string(body.size()) + "\r\n\r\n" + body);
      }
      case Behavior::kReplay:
        co_return co_await write(s, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                        chunk(options_.replay) + "0\r\n\r\n");
      default:
        break;
    }
    if (!stream) {
      if (!co_await wait(options_.ttft)) co_return false;
      std::string usage = options_.usage ? ",\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":" +
                                               std::to_string(options_.tokens) + "}"
                                         : "";
      std::string body = R"({"choices":[{"index":0,"message":{"role":"assistant","content":"some output text"},"finish_reason":"length"}])" +
                         usage + "}";
      co_return co_await write(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                      std::to_string(body.size()) + "\r\n\r\n" + body);
    }
    if (!co_await write(s, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")) {
      co_return false;
    }
    if (options_.role_chunk &&
        !co_await write(s, chunk("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"))) {
      co_return false;
    }
    if (!co_await wait(options_.ttft)) co_return false;
    for (int i = 0; i < options_.tokens; ++i) {
      if (i > 0 && !co_await wait(options_.itl)) co_return false;
      if (!co_await write(s, chunk(token_event(i)))) co_return false;
      if (i == 1 && options_.behavior == Behavior::kTruncate) {
        s.shutdown(Socket::shutdown_send, ec);  // cut the chunked body: no terminating chunk
        co_return false;
      }
      if (i == 1 && options_.behavior == Behavior::kMalformed) {
        if (!co_await write(s, chunk("data: {\"choices\":[{\"delta\":\n\n"))) co_return false;
      }
      if (i == 1 && options_.behavior == Behavior::kStreamErrorObject) {
        if (!co_await write(s, chunk("data: {\"error\":{\"message\":\"engine failed\"}}\n\n"))) co_return false;
      }
    }
    co_return co_await write(s, chunk(final_event() + "data: [DONE]\n\n") + "0\r\n\r\n");
  }

  TestServerOptions options_;
  boost::asio::io_context io_{1};
  boost::asio::ip::tcp::acceptor acceptor_{io_};
  std::list<Socket> sockets_;
  std::thread thread_;
  unsigned short port_ = 0;
  std::atomic<int> requests_{0}, active_{0}, peak_{0};
  std::mutex arrived_mutex_;
  std::condition_variable arrived_;
};

}  // namespace inferscope::loadgen::testing
