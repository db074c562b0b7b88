// File: detail/server_core.h
// ServerCore is what every Connection of one HttpServer shares: options, handler, drain flag and
// the count of live connections. DO NOT INCLUDE THIS FILE DIRECTLY outside src/net.
// Thread-safe: options and handler are immutable after start; the rest is atomic.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "net/http_server.h"

namespace inferscope::net::detail {

struct ServerCore {
  HttpServerOptions options;
  RequestHandler handler;
  std::unique_ptr<boost::asio::ssl::context> tls;  // set: every connection speaks TLS
  std::atomic<bool> draining{false};
  std::atomic<std::size_t> live{0};
  // Blocking handlers handed to a WorkerPool (router.cpp) and not yet finished. stop() waits for
  // none to be left before the io_contexts they post their answers to are destroyed; once
  // `stopped` is set, a job that has not started yet skips its handler.
  std::atomic<bool> stopped{false};
  std::mutex blocking_mu;
  std::condition_variable blocking_cv;
  std::size_t blocking_in_flight = 0;  // guarded by blocking_mu

  void blocking_started() {
    std::lock_guard lock(blocking_mu);
    ++blocking_in_flight;
  }
  void blocking_finished() {
    std::lock_guard lock(blocking_mu);
    --blocking_in_flight;
    blocking_cv.notify_all();
  }
  // wait_blocking_done waits until no blocking job is left; false if some still run after `limit`.
  bool wait_blocking_done(std::chrono::milliseconds limit) {
    std::unique_lock lock(blocking_mu);
    return blocking_cv.wait_for(lock, limit, [this] { return blocking_in_flight == 0; });
  }
};

// ConnectionSet tracks the live connections of one io thread so stop() can close them.
// Not thread-safe: used only on its io thread. Never owns the connections.
class ConnectionSet {
 public:
  void add(Connection* connection) { live_.insert(connection); }
  void remove(Connection* connection) { live_.erase(connection); }
  std::size_t size() const { return live_.size(); }
  // close_all closes every live connection's socket; their coroutines then end on their own.
  void close_all();
  // close_idle closes the connections waiting between requests.
  void close_idle();

 private:
  std::unordered_set<Connection*> live_;
};

}  // namespace inferscope::net::detail
