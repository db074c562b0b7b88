// File: queue/queue_test_support.h
// Peers for the queue collector's integration tests: redis-server (redis_server.h), the python
// workers of tests/queue/python run with /usr/bin/python3, and readers of the collector's series.
// Every child is a stack::ChildProcess (own process group, dies with the test process) and is
// terminated by its destructor, also when a test fails.
// Example: RedisServer redis; ASSERT_TRUE(redis.ok()) << redis.error(); redis.run({"RPUSH", "q", "x"});
// Not thread-safe; one owner per object.
#pragma once

#include <gtest/gtest.h>
#include <inferscope/metrics/exposition_parser.h>

#include <atomic>
#include <csignal>
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
#include "stack/child_process.h"
#include "support/registry_scrape.h"
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
    auto child = stack::ChildProcess::spawn({.binary = binary, .args = std::move(args), .log_file = {}}, [lines](std::string_view line) {
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
  std::unique_ptr<stack::ChildProcess> child_;
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
  auto result = stack::run_command(kPython, argv, std::chrono::seconds(60));
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

}  // namespace inferscope::queue::testing
