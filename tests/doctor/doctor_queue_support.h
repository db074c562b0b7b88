// File: doctor_queue_support.h
// The queue tier the doctor's queue tests run against, in either mode: Debian's redis-server, an
// in-process `serve` (real-time 8B profile, admin API on) that the jobs call, three real RQ 1.13
// workers (python3-rq) and a producer thread enqueueing with RQ's own API every 2 s. The test adds
// the collector (in process for --scrape, or `inferscope up`'s for --prometheus).
// Example: QueueWorkload w; w.set_jobs_per_tick(40); w.kill_workers(); w.serve_port();
// Every child is an up::ChildProcess (own process group, dies with the test) ended by the
// destructor, also when a test fails. Not thread-safe beyond set_jobs_per_tick (atomic).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "doctor/doctor_scenario_support.h"
#include "queue/queue_test_support.h"

namespace inferscope::doctor::testing {

// QueueWorkload runs redis, serve, three RQ workers of queue "default" and a producer that
// enqueues jobs_per_tick jobs every 2 s (or every python start, when that is slower: about 2 jobs/s
// on a loaded 2-core host), each holding its worker kHoldSeconds after its serve call. At the
// default 8 jobs per tick that is under what the workers finish (a job runs about 0.6 s there).
class QueueWorkload {
 public:
  static constexpr const char* kHoldSeconds = "0.05";
  static constexpr int kDefaultJobsPerTick = 8;

  QueueWorkload() : server_(scenario_server_options()) {
    if (!redis_.ok() || !server_.ok()) {
      ADD_FAILURE() << "queue tier: " << (redis_.ok() ? "serve did not start" : redis_.error());
      return;
    }
    for (int i = 0; i < 3; ++i)
      workers_.push_back(std::make_unique<queue::testing::Worker>(
          "/usr/bin/rq",
          std::vector<std::string>{"worker", "--url", redis_.url(), "--path", queue::testing::kPythonDir, "default"},
          "Listening on default"));
    producer_ = std::thread([this] {
      for (auto next = std::chrono::steady_clock::now(); !stop_; next += std::chrono::seconds(2)) {
        queue::testing::enqueue({"rq", redis_.url(), "default", std::to_string(jobs_per_tick_.load()), serve_url(),
                                 kHoldSeconds, started_.path().string()});
        std::this_thread::sleep_until(next + std::chrono::seconds(2));
      }
    });
    ok_ = true;
  }
  ~QueueWorkload() {
    stop_ = true;
    if (producer_.joinable()) producer_.join();
    workers_.clear();
  }
  QueueWorkload(const QueueWorkload&) = delete;
  QueueWorkload& operator=(const QueueWorkload&) = delete;

  bool ok() const { return ok_; }
  queue::testing::RedisServer& redis() { return redis_; }
  std::uint16_t serve_port() const { return server_.port(); }
  std::string serve_url() const { return "http://127.0.0.1:" + std::to_string(server_.port()); }
  // set_jobs_per_tick changes the producer's batch from its next tick on.
  void set_jobs_per_tick(int jobs) { jobs_per_tick_ = jobs; }
  // kill_workers SIGKILLs every worker (RQ keeps listing them until their hashes expire).
  void kill_workers() {
    for (auto& w : workers_) w->kill();
  }

 private:
  queue::testing::RedisServer redis_;
  serve::testing::TestServer server_;
  inferscope::testing::TempDir started_{"doctor-queue-started"};
  std::vector<std::unique_ptr<queue::testing::Worker>> workers_;
  std::atomic<int> jobs_per_tick_{kDefaultJobsPerTick};
  std::atomic<bool> stop_{false};
  bool ok_ = false;
  std::thread producer_;
};

}  // namespace inferscope::doctor::testing
