// File: tests/support/promtool.h
// Runs Debian's `promtool check metrics` on an exposition held in memory, for integration tests.
// Example: PromtoolResult r = run_promtool_check_metrics(text); EXPECT_EQ(r.exit_code, 0) << r.output;
// Each call starts one TestProcess and waits for it (at most a minute); never throws; returns
// exit_code -1 when promtool cannot be started or does not finish (output says why).
#pragma once

#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/temp_dir.h"
#include "support/test_process.h"

namespace inferscope::testing {

inline constexpr const char* kPromtoolPath = "/usr/bin/promtool";

// PromtoolResult is promtool's exit code (0 clean, 1 parse error, 3 lint problems) and its
// combined stdout+stderr (findings go to stderr).
struct PromtoolResult {
  int exit_code = -1;
  std::string output;
};

// run_promtool_in runs `promtool <args...>` in `dir` (relative rule_files resolve against it) with
// `stdin_file` as its input (empty: none) and returns its exit code and stdout+stderr. Output goes
// to a file, so a chatty child can never deadlock on a pipe.
inline PromtoolResult run_promtool_in(const std::vector<std::string>& args, const std::filesystem::path& dir,
                                      const std::filesystem::path& stdin_file = {}) {
  PromtoolResult result;
  TempDir capture("promtool");
  if (capture.path().empty()) {
    result.output = "cannot create a temporary directory for promtool's output";
    return result;
  }
  const std::filesystem::path out = capture.path() / "out";
  TestProcess promtool({.binary = kPromtoolPath,
                        .args = args,
                        .stdout_file = out,
                        .stderr_file = out,
                        .stdin_file = stdin_file,
                        .working_dir = dir});
  if (!promtool.started()) {
    result.output = promtool.start_error();
    return result;
  }
  const std::optional<int> code = promtool.wait_exit(std::chrono::minutes(1));
  result.output = code ? promtool.stdout_text() : "promtool did not finish within a minute";
  result.exit_code = code.value_or(-1);
  return result;
}

// run_promtool_check_metrics feeds text to `promtool check metrics` on stdin (through a temporary
// file) and waits for it.
inline PromtoolResult run_promtool_check_metrics(std::string_view text) {
  TempDir input("promtool-in");
  const std::filesystem::path in = input.path() / "in";
  if (input.path().empty() || !(std::ofstream(in) << text)) {
    return PromtoolResult{-1, "cannot write promtool's input to a temporary file"};
  }
  return run_promtool_in({"check", "metrics"}, {}, in);
}

}  // namespace inferscope::testing
