// File: queue/queue_test_support.h
// Peers for the queue collector's integration tests: redis-server (redis_server.h), the python
// workers of tests/queue/python run with /usr/bin/python3, and readers of the collector's series.
// Every child is an up::ChildProcess (own process group, dies with the test process) and is
// terminated by its destructor, also when a test fails.
// Example: RedisServer redis; ASSERT_TRUE(redis.ok()) << redis.error(); redis.run({"RPUSH", "q", "x"});
// Not thread-safe; one owner per object.
#pragma once

#include <gtest/gtest.h>
#include <inferscope/metrics/exposition_parser.h>

#include <atomic>
#include <csignal>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "queue/redis_client.h"
#include "queue/redis_server.h"
#include "up/child_process.h"
#include "queue/queue_collector.h"
#include "serve/serve_test_support.h"
#include "support/registry_scrape.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace inferscope::queue::testing {

inline const std::string kPython = "/usr/bin/python3";
inline const std::string kPythonDir = INFERSCOPE_SOURCE_DIR "/tests/queue/python";

// Worker is one python worker process (RQ, Celery or the stream consumer); its output is kept for
// failure messages.
class Worker {
 public:
  Worker(const std::string& binary, std::vector<std::string> args, const std::string& ready_line = {}) {
    auto lines = lines_;
    auto child = up::ChildProcess::spawn({.binary = binary, .args = std::move(args), .log_file = {}}, [lines](std::string_view line) {
      std::lock_guard lock(lines->mutex);
      lines->text.append(line).push_back('\n');
    });
    if (!child) {
      ADD_FAILURE() << child.error().message;
      return;
    }
    child_ = std::move(*child);
    if (!ready_line.empty() &&
        !inferscope::testing::wait_until([&] { return output().find(ready_line) != std::string::npos; },
                                         std::chrono::seconds(30))) {
      ADD_FAILURE() << "worker not ready (no '" << ready_line << "'):\n" << output();
    }
  }
  ~Worker() { stop(); }
  std::string output() const {
    std::lock_guard lock(lines_->mutex);
    return lines_->text;
  }
  pid_t pid() const { return child_ ? child_->pid() : -1; }
  // kill ends the worker's whole process group with SIGKILL (a crash: no clean-up runs).
  void kill() {
    if (child_) ::kill(-child_->pid(), SIGKILL);
  }
  void stop() {
    if (child_) child_->terminate(std::chrono::seconds(10));
    child_.reset();
  }

 private:
  struct Lines {
    mutable std::mutex mutex;
    std::string text;
  };
  std::shared_ptr<Lines> lines_ = std::make_shared<Lines>();
  std::unique_ptr<up::ChildProcess> child_;
};

// Enqueued is one job the test enqueued: its index and the producer's clock at enqueue.
struct Enqueued {
  int index = 0;
  double at = 0;
};

// enqueue runs python/enqueue.py and returns the jobs it enqueued, in order.
inline std::vector<Enqueued> enqueue(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kPythonDir + "/enqueue.py"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto result = up::run_command(kPython, argv, std::chrono::seconds(60));
  std::vector<Enqueued> jobs;
  if (!result || !result->ok()) {
    ADD_FAILURE() << "enqueue.py failed: " << (result ? result->output : result.error().message);
    return jobs;
  }
  std::istringstream lines(result->output);
  Enqueued job;
  while (lines >> job.index >> job.at) jobs.push_back(job);
  return jobs;
}

// unix_now returns the test's clock in Unix seconds (the clock the producers and tasks use).
inline double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// expect_oldest_age checks an oldest-age gauge against the job the test knows is oldest: the gauge
// was computed at most one collection interval (plus 0.2 s of scheduling) ago, and the producer
// read its clock just after the system stamped the job.
inline void expect_oldest_age(std::optional<double> age, double enqueued_at, std::chrono::milliseconds interval) {
  ASSERT_TRUE(age.has_value());
  const double expected = unix_now() - enqueued_at;
  EXPECT_LE(*age, expected + 0.2);
  EXPECT_GE(*age, expected - std::chrono::duration<double>(interval).count() - 0.2);
}

// started_at reads the start time a job's task wrote into `dir`/<index>; nullopt until it ran.
inline std::optional<double> started_at(const std::filesystem::path& dir, int index) {
  std::ifstream in(dir / std::to_string(index));
  double value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

// series returns the value of one sample of the collector's registry, or nullopt when absent.
inline std::optional<double> series(const metrics::Registry& registry, std::string_view name,
                                    metrics::LabelSubset labels) {
  const auto exposition = inferscope::testing::scrape(registry);
  const auto samples = metrics::find_samples(exposition, name, labels);
  if (samples.empty()) return std::nullopt;
  double sum = 0;
  for (const auto* sample : samples) sum += sample->value;
  return sum;
}

// eventually polls `condition` every 100 ms (each poll renders and parses the whole registry).
inline bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  return inferscope::testing::wait_until(condition, limit, std::chrono::milliseconds(100));
}

// kWorkerInterval is the collection interval of the worker tests: "agrees within one interval".
inline constexpr std::chrono::milliseconds kWorkerInterval{1000};
// kHold is how many seconds each test job stays in progress after calling serve.
inline constexpr double kHold = 2.0;

// WorkerRig holds what a test with real workers needs: redis, an in-process `serve` (fast
// profile) that the jobs call, a directory where tasks write their start times, and a collector of
// `systems` on kWorkerInterval, started.
class WorkerRig {
 public:
  explicit WorkerRig(QueueCollectorOptions options) : server_(serve::testing::fast_options()) {
    if (!redis_.ok() || !server_.ok()) return;
    options.target_name = "jobs";
    options.target = redis_.target();
    options.interval = kWorkerInterval;
    collector_ = std::make_unique<QueueCollector>(std::move(options), registry_);
    collector_->start();
  }
  ~WorkerRig() {
    if (collector_) collector_->stop();
  }
  // ok is false (and error() says why) when redis or serve did not start.
  bool ok() const { return collector_ != nullptr; }
  std::string error() const { return redis_.ok() ? "serve did not start" : redis_.error(); }

  RedisServer& redis() { return redis_; }
  QueueCollector& collector() { return *collector_; }
  const std::filesystem::path& started_dir() const { return started_.path(); }
  std::string serve_url() const { return "http://127.0.0.1:" + std::to_string(server_.port()); }
  // served returns how many chat requests serve has answered.
  double served() { return serve::testing::metric(server_.scrape(), "inferscope_request_duration_seconds_count"); }
  // get returns one of the collector's series (summed over matching samples), nullopt if absent.
  std::optional<double> get(std::string_view name, metrics::LabelSubset labels) const {
    return series(registry_, name, labels);
  }

 private:
  RedisServer redis_;
  serve::testing::TestServer server_;
  inferscope::testing::TempDir started_{"queue-started"};
  metrics::Registry registry_;
  std::unique_ptr<QueueCollector> collector_;
};

}  // namespace inferscope::queue::testing
