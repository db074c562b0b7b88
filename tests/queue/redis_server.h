// File: queue/redis_server.h
// RedisServer runs Debian's /usr/bin/redis-server without persistence on 127.0.0.1 and an
// ephemeral port (a free port is taken from the kernel, then handed to redis; a lost race is
// retried), as an up::ChildProcess (own process group, dies with its parent), terminated by the
// destructor. Used by the queue tests and bench/queue. No gtest here.
// Example: RedisServer redis; if (!redis.ok()) die(redis.error()); redis.run({"RPUSH", "q", "x"});
// Not thread-safe; one owner.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "queue/redis_client.h"
#include "up/child_process.h"
#include "support/loopback_port.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace inferscope::queue::testing {

using inferscope::testing::free_loopback_port;

// RedisServer runs /usr/bin/redis-server without persistence on 127.0.0.1. The password, when
// given, goes into the config file, never on the command line.
class RedisServer {
 public:
  explicit RedisServer(std::string password = {}, int port = 0) : password_(std::move(password)) {
    for (int attempt = 0; attempt < 5 && !child_; ++attempt) start(port != 0 ? port : free_loopback_port());
  }
  ~RedisServer() { stop(); }

  bool ok() const { return child_ != nullptr; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  // target returns where the collector connects (with the password, when set).
  RedisTarget target() const { return RedisTarget{.host = "127.0.0.1", .port = port_, .db = 0, .password = password_}; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_) + "/0"; }

  // run sends one command on a fresh connection and returns its reply (an error reply carrying
  // the message when the connection failed).
  RedisReply run(const RedisCommand& command) {
    auto client = RedisClient::connect(target(), std::chrono::seconds(5));
    if (!client) return RedisReply{.type = RedisReply::Type::kError, .str = client.error().message};
    auto replies = client->pipeline({command});
    if (!replies) return RedisReply{.type = RedisReply::Type::kError, .str = replies.error().message};
    return (*replies)[0];
  }

  // stop ends the server (SIGTERM); restart() starts it again on the same port.
  void stop() {
    if (child_) child_->terminate(std::chrono::seconds(5));
    child_.reset();
  }
  bool restart() {
    start(port_);
    return ok();
  }

 private:
  void start(int port) {
    port_ = port;
    const auto config = dir_.path() / "redis.conf";
    std::ofstream(config) << "bind 127.0.0.1\nport " << port << "\nsave \"\"\nappendonly no\ndir " << dir_.path().string()
                          << "\n" << (password_.empty() ? "" : "requirepass " + password_ + "\n");
    auto ready = std::make_shared<std::atomic<int>>(0);  // 1 ready, -1 failed
    auto child = up::ChildProcess::spawn(
        {.binary = "/usr/bin/redis-server", .args = {config.string()}, .log_file = dir_.path() / "redis.log"},
        [ready](std::string_view line) {
          if (line.find("Ready to accept connections") != std::string_view::npos) *ready = 1;
          if (line.find("Address already in use") != std::string_view::npos) *ready = -1;
        });
    if (!child) {
      error_ = child.error().message;
      return;
    }
    const bool settled = inferscope::testing::wait_until([&] { return *ready != 0 || (*child)->try_wait(); },
                                                         std::chrono::seconds(10));
    if (!settled || *ready != 1) {
      error_ = "redis-server did not start on port " + std::to_string(port);
      (*child)->terminate(std::chrono::seconds(2));
      return;
    }
    child_ = std::move(*child);
  }

  inferscope::testing::TempDir dir_{"redis"};
  std::string password_;
  int port_ = 0;
  std::string error_;
  std::unique_ptr<up::ChildProcess> child_;
};

}  // namespace inferscope::queue::testing
