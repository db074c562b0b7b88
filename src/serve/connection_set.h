// File: connection_set.h
// ConnectionSet tracks the live connections of one io thread so Server::stop() can close them.
// Example: set.add(this); ... set.remove(this);   // on stop: post([&] { set.close_all(); })
// Not thread-safe: used only on its io thread. Never owns the connections.
#pragma once

#include <cstddef>
#include <unordered_set>

namespace inferscope::serve {

class Connection;

class ConnectionSet {
 public:
  void add(Connection* connection) { live_.insert(connection); }
  void remove(Connection* connection) { live_.erase(connection); }
  std::size_t size() const { return live_.size(); }
  // close_all closes every live connection's socket; their coroutines then end on their own.
  void close_all();

 private:
  std::unordered_set<Connection*> live_;
};

}  // namespace inferscope::serve
