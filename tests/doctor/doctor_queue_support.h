// File: doctor_queue_support.h
// The queue tier the doctor's queue tests run against, in either mode: Debian's redis-server, an
// in-process `serve` (real-time 8B profile, admin API on) that the jobs call, three real workers
// and a producer thread enqueueing with the queue system's own API every 2 s: RQ 1.13
// (python3-rq) by default, or Celery 5.2 (python3-celery, QueueWorkload::Celery()) whose messages
// carry no enqueue time, as Celery sends them. The test adds the collector (in process for
// --scrape, or `inferscope up`'s for --prometheus).
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

// QueueWorkload runs redis, serve, three workers and a producer that enqueues jobs_per_tick jobs
// every 2 s (or every python start, when that is slower), each holding its worker hold_seconds
// after its serve call.
// RQ (the default): queue "default", 8 jobs per tick, hold 0.05 s: under what the workers finish
// (RQ forks per job, a job runs about 0.6 s on a loaded 2-core host; about 2 jobs/s enqueued there).
// Celery (Celery()): queue "celery", three workers of one prefork process each (late acks,
// prefetch 1, tests/queue/python/celery_app.py), hold 0.2 s. Such a worker takes one message per
// poll of kombu's Redis transport, about one a second, however short the job: the three finish
// at most about 2.5-3 jobs/s (3 jobs/s draining instant jobs), and 2 jobs per tick (1 job/s) is
// well under it. The messages are plain Celery ones (no inferscope_enqueued_at header): no oldest
// age, no wait; and the workers' heartbeats (every 2 s) mostly find them between two messages,
// idle, even with a backlog.
class QueueWorkload {
 public:
  enum class System { kRq, kCelery };
  struct Options {
    System system = System::kRq;
    int jobs_per_tick = 8;
    const char* hold_seconds = "0.05";
  };
  static Options Celery() { return {.system = System::kCelery, .jobs_per_tick = 2, .hold_seconds = "0.2"}; }

  QueueWorkload() : QueueWorkload(Options{}) {}
  explicit QueueWorkload(Options options)
      : options_(options), server_(scenario_server_options()), jobs_per_tick_(options.jobs_per_tick) {
    if (!redis_.ok() || !server_.ok()) {
      ADD_FAILURE() << "queue tier: " << (redis_.ok() ? "serve did not start" : redis_.error());
      return;
    }
    const bool celery = options_.system == System::kCelery;
    const std::string ready = celery ? "ready." : "Listening on default";
    // All three start at once (a Celery worker takes seconds to get ready on a loaded host).
    for (int i = 0; i < 3; ++i) {
      if (celery) {
        workers_.push_back(std::make_unique<queue::testing::Worker>(
            queue::testing::kPython,
            std::vector<std::string>{"-m", "celery", "--broker", redis_.url(), "--workdir", queue::testing::kPythonDir,
                                     "-A", "celery_app", "worker", "--concurrency", "1", "--hostname",
                                     "w" + std::to_string(i) + "@%h", "--without-mingle", "--without-gossip",
                                     "--loglevel", "INFO", "--queues", "celery"}));
      } else {
        workers_.push_back(std::make_unique<queue::testing::Worker>(
            "/usr/bin/rq",
            std::vector<std::string>{"worker", "--url", redis_.url(), "--path", queue::testing::kPythonDir, "default"}));
      }
    }
    for (auto& w : workers_) {
      if (!inferscope::testing::wait_until([&] { return w->output().find(ready) != std::string::npos; },
                                           std::chrono::seconds(30))) {
        ADD_FAILURE() << "worker not ready (no '" << ready << "'):\n" << w->output();
        return;
      }
    }
    // Celery's own API sends plain messages ("celery-plain": without the opt-in header).
    const std::string system = celery ? "celery-plain" : "rq", queue = celery ? "celery" : "default";
    producer_ = std::thread([this, system, queue] {
      for (auto next = std::chrono::steady_clock::now(); !stop_; next += std::chrono::seconds(2)) {
        queue::testing::enqueue({system, redis_.url(), queue, std::to_string(jobs_per_tick_.load()), serve_url(),
                                 options_.hold_seconds, started_.path().string()});
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
  System system() const { return options_.system; }
  queue::testing::RedisServer& redis() { return redis_; }
  std::uint16_t serve_port() const { return server_.port(); }
  std::string serve_url() const { return "http://127.0.0.1:" + std::to_string(server_.port()); }
  int jobs_per_tick() const { return jobs_per_tick_; }
  // set_jobs_per_tick changes the producer's batch from its next tick on.
  void set_jobs_per_tick(int jobs) { jobs_per_tick_ = jobs; }
  // kill_workers SIGKILLs every worker (RQ keeps listing them until their hashes expire).
  void kill_workers() {
    for (auto& w : workers_) w->kill();
  }

 private:
  Options options_;
  queue::testing::RedisServer redis_;
  serve::testing::TestServer server_;
  inferscope::testing::TempDir started_{"doctor-queue-started"};
  std::vector<std::unique_ptr<queue::testing::Worker>> workers_;
  std::atomic<int> jobs_per_tick_;
  std::atomic<bool> stop_{false};
  bool ok_ = false;
  std::thread producer_;
};

}  // namespace inferscope::doctor::testing
