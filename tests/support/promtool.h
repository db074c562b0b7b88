// File: tests/support/promtool.h
// Runs Debian's `promtool check metrics` on an exposition held in memory, for integration tests.
// Example: PromtoolResult r = run_promtool_check_metrics(text); EXPECT_EQ(r.exit_code, 0) << r.output;
// Not thread-safe across concurrent calls only in the sense that each call forks a child; never
// throws; returns exit_code -1 when promtool cannot be started (output says why).
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace inferscope::testing {

inline constexpr const char* kPromtoolPath = "/usr/bin/promtool";

// PromtoolResult is promtool's exit code (0 clean, 1 parse error, 3 lint problems) and its
// combined stdout+stderr (findings go to stderr).
struct PromtoolResult {
  int exit_code = -1;
  std::string output;
};

// run_promtool_check_metrics feeds text to `promtool check metrics` on stdin (through a temporary
// file, so a chatty child can never deadlock on a pipe) and waits for it.
inline PromtoolResult run_promtool_check_metrics(std::string_view text) {
  PromtoolResult result;
  char in_path[] = "/tmp/inferscope-promtool-in-XXXXXX";
  char out_path[] = "/tmp/inferscope-promtool-out-XXXXXX";
  const int in_fd = mkstemp(in_path);
  const int out_fd = mkstemp(out_path);
  if (in_fd < 0 || out_fd < 0) {
    result.output = "cannot create temporary files for promtool";
    return result;
  }
  const bool written = write(in_fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  lseek(in_fd, 0, SEEK_SET);
  const pid_t pid = written ? fork() : -1;
  if (pid == 0) {
    dup2(in_fd, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(out_fd, STDERR_FILENO);
    execl(kPromtoolPath, "promtool", "check", "metrics", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  close(in_fd);
  close(out_fd);
  std::ifstream out_file(out_path);
  std::stringstream buffer;
  buffer << out_file.rdbuf();
  result.output = pid > 0 ? buffer.str() : "cannot start promtool";
  unlink(in_path);
  unlink(out_path);
  return result;
}

}  // namespace inferscope::testing
