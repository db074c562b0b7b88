// File: load_loop.h
// LoadLoop sends small non-streaming completions to an `inferscope serve` on loopback until it is
// destroyed, so error ratios and latency rules have traffic. Example: LoadLoop load(serve->port());
// Test-only; the loop runs on its own thread, joined by the destructor.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "net/blocking_client.h"

namespace inferscope::up::testing {

class LoadLoop {
 public:
  explicit LoadLoop(std::uint16_t port) : thread_([this, port] {
      const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/v1/completions";
      while (!stop_) {
        (void)net::blocking_http_request("POST", url, R"({"model":"sim","prompt":"hi","max_tokens":4})",
                                         "application/json", std::chrono::seconds(5));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }) {}
  ~LoadLoop() {
    stop_ = true;
    thread_.join();
  }
  LoadLoop(const LoadLoop&) = delete;
  LoadLoop& operator=(const LoadLoop&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace inferscope::up::testing
