// File: tests/support/promtool_run.h
// Runs Debian's promtool with arguments (`check rules FILE`, `test rules FILE`) in a directory and
// captures its exit code and combined output, for tests of generated rule files.
// Example: PromtoolResult r = run_promtool({"check", "rules", "rules.yml"}, dir); EXPECT_EQ(r.exit_code, 0);
// Never throws; exit_code -1 when promtool cannot be started (output says why).
#pragma once

#include <string>
#include <vector>

#include "support/promtool.h"

namespace inferscope::testing {

// run_promtool runs `promtool <args...>` with working directory `dir` (relative rule_files in a
// test file resolve against it) and returns its exit code and stdout+stderr.
inline PromtoolResult run_promtool(const std::vector<std::string>& args, const std::string& dir) {
  return run_promtool_in(args, dir);
}

}  // namespace inferscope::testing
