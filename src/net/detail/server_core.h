// File: detail/server_core.h
// ServerCore is what every Connection of one HttpServer shares: options, handler, drain flag and
// the count of live connections. DO NOT INCLUDE THIS FILE DIRECTLY outside src/net.
// Thread-safe: options and handler are immutable after start; the rest is atomic.
#pragma once

#include <atomic>
#include <cstddef>
#include <unordered_set>

#include "net/http_server.h"

namespace inferscope::net::detail {

struct ServerCore {
  HttpServerOptions options;
  RequestHandler handler;
  std::atomic<bool> draining{false};
  std::atomic<std::size_t> live{0};
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
