// File: support/stopped_process.h
// StoppedProcess: SIGSTOPs a process (a peer such as Prometheus, to show what a stalled dependency
// does to its callers) and resumes it when the guard ends, also when the test fails. Its
// constructor waits until every thread of the process is in the stopped state: kill() only
// queues SIGSTOP, and on a busy machine a thread already woken by a request answers it before the
// stop reaches it (a stalled-Prometheus test saw /api/alerts get a 200 in 2 of 20 runs beside
// four busy loops). No gtest dependency.
// Example:
//   testing::StoppedProcess stalled(prometheus_pid, std::chrono::seconds(10));
//   ASSERT_TRUE(stalled.stopped()) << "Prometheus did not stop";
#pragma once

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "support/wait_until.h"

namespace inferscope::testing {

// every_thread_stopped tells whether each thread of `pid` is in the stopped state.
inline bool every_thread_stopped(int pid) {
  std::error_code ec;
  std::filesystem::directory_iterator tasks("/proc/" + std::to_string(pid) + "/task", ec);
  if (ec) return false;
  for (const auto& task : tasks) {
    std::ifstream stat(task.path() / "stat");
    std::string line;
    std::getline(stat, line);
    // The state follows the command name, which is in parentheses and may hold spaces.
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size()) return false;
    const char state = line[close + 2];
    if (state != 'T' && state != 't') return false;
  }
  return true;
}

class StoppedProcess {
 public:
  StoppedProcess(int pid, std::chrono::milliseconds limit) : pid_(pid) {
    if (pid_ <= 0 || ::kill(pid_, SIGSTOP) != 0) return;
    stopped_ = wait_until([this] { return every_thread_stopped(pid_); }, limit);
  }
  ~StoppedProcess() { resume(); }
  StoppedProcess(const StoppedProcess&) = delete;
  StoppedProcess& operator=(const StoppedProcess&) = delete;

  // stopped: whether every thread was seen stopped within the limit.
  bool stopped() const { return stopped_; }
  // resume sends SIGCONT now (the destructor does it otherwise); idempotent.
  void resume() {
    if (pid_ > 0) ::kill(pid_, SIGCONT);
    pid_ = 0;
  }

 private:
  int pid_;
  bool stopped_ = false;
};

}  // namespace inferscope::testing
