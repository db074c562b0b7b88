// File: doctor_scenario_support.h
// Scenario harness for the doctor's integration tests: an in-process `inferscope serve` per
// scenario, an open-loop streaming load driver whose shape (rate, prompt length, output length,
// shared-prefix share) can change mid-run, and fault injection through /admin/faults.
// Example: Scenario s(base_shape()); s.driver().set_shape(longer); s.set_faults(R"({"decode_slowdown":3})");
// Not thread-safe per object; each scenario runs on its own thread with its own server.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "serve/serve_test_support.h"

namespace inferscope::doctor::testing {

// LoadShape is what the driver sends.
struct LoadShape {
  double rate = 8;          // requests per second (constant spacing: open loop)
  int prompt_words = 500;  // about one token per word
  int max_tokens = 32;      // output tokens (ignore_eos: exactly this many)
  double shared_prefix = 0; // share of the prompt that is the same for every request (prefix cache)
  std::string model = "sim-a";  // the request's model (a gateway routes by it)
};

// LoadDriver sends streaming chat requests on a constant schedule through a bounded worker pool;
// when every worker is busy, arrivals queue (the schedule keeps its pace).
class LoadDriver {
 public:
  LoadDriver(std::uint16_t port, LoadShape shape, int workers = 12) : port_(port), shape_(shape) {
    for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { work(); });
    dispatcher_ = std::thread([this] { dispatch(); });
  }
  ~LoadDriver() { stop(); }

  void set_shape(LoadShape shape) {
    std::lock_guard lock(mu_);
    shape_ = shape;
  }
  LoadShape shape() {
    std::lock_guard lock(mu_);
    return shape_;
  }
  void stop() {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    cv_.notify_all();
    dispatcher_.join();
    for (auto& w : workers_) w.join();
  }
  std::uint64_t completed() const { return completed_; }
  std::uint64_t failed() const { return failed_; }

 private:
  void dispatch() {
    auto next = std::chrono::steady_clock::now();
    std::unique_lock lock(mu_);
    while (!stopping_) {
      if (cv_.wait_until(lock, next, [this] { return stopping_; })) break;
      queue_.push_back(seq_++);
      cv_.notify_one();
      next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(1.0 / shape_.rate));
    }
  }

  void work() {
    for (;;) {
      std::uint64_t id;
      LoadShape shape;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;
        id = queue_.front();
        queue_.pop_front();
        shape = shape_;
      }
      auto reply = serve::testing::request(port_, serve::testing::http::verb::post, "/v1/chat/completions",
                                           body(shape, id));
      (reply.status == 200 ? completed_ : failed_)++;
    }
  }

  static std::string body(const LoadShape& shape, std::uint64_t id) {
    // A shared prefix (same words for every request) then words unique to this request, so the
    // prefix cache hits exactly the shared share.
    int shared = static_cast<int>(shape.prompt_words * shape.shared_prefix);
    std::string prompt;
    prompt.reserve(static_cast<std::size_t>(shape.prompt_words) * 8);
    for (int i = 0; i < shared; ++i) prompt += (i % 5 == 0) ? "alpha " : "beta ";
    std::uint64_t x = id * 0x9E3779B97F4A7C15ull + 1;
    for (int i = shared; i < shape.prompt_words; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      prompt += "w" + std::to_string(x % 50000) + " ";
    }
    nlohmann::json j = {{"model", shape.model},
                        {"messages", {{{"role", "user"}, {"content", prompt}}}},
                        {"max_tokens", shape.max_tokens},
                        {"ignore_eos", true},
                        {"stream", true}};
    return j.dump();
  }

  std::uint16_t port_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::uint64_t> queue_;
  std::uint64_t seq_ = 0;
  LoadShape shape_;
  bool stopping_ = false;
  std::atomic<std::uint64_t> completed_{0}, failed_{0};
  std::vector<std::thread> workers_;
  std::thread dispatcher_;
};

// scenario_server_options: real-time 8B profile, a small batch cap and KV cache so that load,
// KV and capacity faults show within seconds, admin API on.
inline serve::ServerOptions scenario_server_options() {
  serve::ServerOptions o;
  o.port = 0;
  o.model_names = {"sim-a"};
  o.dialects = {"inferscope", "vllm"};
  o.enable_admin = true;
  o.engine.time_scale = 1;
  o.engine.max_num_seqs = 4;
  o.engine.kv_capacity_tokens = 6000;
  o.io_threads = 1;
  return o;
}

// set_faults posts a /admin/faults body; returns the HTTP status.
inline int set_faults(std::uint16_t port, const std::string& json) {
  return serve::testing::request(port, serve::testing::http::verb::post, "/admin/faults", json).status;
}

// run_command runs a shell command line, its stderr with its stdout into `out`; returns its exit
// status (-1 when it did not exit normally).
inline int run_command(const std::string& command_line, std::string* out) {
  FILE* pipe = popen((command_line + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  char buf[4096];
  out->clear();
  while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) out->append(buf, n);
  int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace inferscope::doctor::testing
