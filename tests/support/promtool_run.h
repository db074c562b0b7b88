// File: tests/support/promtool_run.h
// Runs Debian's promtool with arguments (`check rules FILE`, `test rules FILE`) in a directory and
// captures its exit code and combined output, for tests of generated rule files.
// Example: PromtoolResult r = run_promtool({"check", "rules", "rules.yml"}, dir); EXPECT_EQ(r.exit_code, 0);
// Each call forks one child and waits for it (bounded by promtool itself: it reads local files only).
// Never throws; exit_code -1 when promtool cannot be started (output says why).
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/promtool.h"

namespace inferscope::testing {

// run_promtool runs `promtool <args...>` with working directory `dir` (relative rule_files in a
// test file resolve against it) and returns its exit code and stdout+stderr.
inline PromtoolResult run_promtool(const std::vector<std::string>& args, const std::string& dir) {
  PromtoolResult result;
  char out_path[] = "/tmp/inferscope-promtool-out-XXXXXX";
  const int out_fd = mkstemp(out_path);
  if (out_fd < 0) {
    result.output = "cannot create a temporary file for promtool";
    return result;
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>("promtool"));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    const int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(out_fd, STDERR_FILENO);
    execv(kPromtoolPath, argv.data());
    _exit(127);
  }
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  close(out_fd);
  std::ifstream out_file(out_path);
  std::stringstream buffer;
  buffer << out_file.rdbuf();
  result.output = pid > 0 ? buffer.str() : "cannot start promtool";
  unlink(out_path);
  return result;
}

}  // namespace inferscope::testing
