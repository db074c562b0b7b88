// Tests of serve's tracing flags through the CLI (INFERSCOPE_BINARY): bad values and flags that
// need --otlp-endpoint fail with one line naming the flag; good ones start a server that says
// where it listens.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/temp_dir.h"
#include "support/test_process.h"
#include "support/wait_until.h"

namespace inferscope::trace {
namespace {

using namespace std::chrono_literals;

// Tests that bad tracing flags fail with one line naming the flag and a non-zero exit code.
TEST(ServeTraceFlagsTest, BadTracingFlagsFailWithOneLine) {
  struct Case {
    std::vector<std::string> flags;
    std::string named;
  };
  for (const Case& c : std::vector<Case>{
           {{"--otlp-endpoint", "http://127.0.0.1:1/v1/traces", "--trace-sample", "1.5"}, "--trace-sample"},
           {{"--trace-slow", "2s"}, "--trace-slow"},
           {{"--trace-sample", "0.5"}, "--trace-sample"},
           {{"--otlp-endpoint", "http://127.0.0.1:1/v1/traces", "--trace-slow", "soon"}, "--trace-slow"},
           {{"--otlp-endpoint", "ftp://x"}, "--otlp-endpoint"}}) {
    testing::TempDir dir("serve-flags");
    std::vector<std::string> args = {"serve", "--port", "0"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    testing::TestProcess p({.binary = INFERSCOPE_BINARY, .args = args, .stdout_file = dir.path() / "out",
                            .stderr_file = dir.path() / "out"});
    const auto code = p.wait_exit(20s);
    ASSERT_TRUE(code.has_value()) << c.named;
    EXPECT_NE(*code, 0) << c.named;
    const std::string out = p.stdout_text();
    EXPECT_NE(out.find(c.named), std::string::npos) << out;
    EXPECT_LE(std::count(out.begin(), out.end(), '\n'), 2) << out;  // CLI11's line (and its --help hint)
  }
}

// Tests that valid tracing flags start the server.
TEST(ServeTraceFlagsTest, GoodTracingFlagsStartTheServer) {
  testing::TempDir dir("serve-flags");
  testing::TestProcess p({.binary = INFERSCOPE_BINARY,
                          .args = {"serve", "--port", "0", "--otlp-endpoint", "http://127.0.0.1:1/v1/traces",
                                   "--trace-sample", "0.25", "--trace-slow", "1500ms"},
                          .stdout_file = dir.path() / "out",
                          .stderr_file = dir.path() / "err"});
  EXPECT_TRUE(testing::wait_until([&] { return p.stdout_text().find("listening on http://") != std::string::npos; },
                                  30s))
      << p.stdout_text() << p.stderr_text();
}

}  // namespace
}  // namespace inferscope::trace
