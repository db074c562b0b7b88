// Tests of the tracing flags of serve and gateway through the CLI (INFERSCOPE_BINARY; both
// register them with trace::add_trace_flags): bad values and flags that need --otlp-endpoint fail
// with one line naming the flag; good ones, and the gateway's config file's tracing map with a
// flag over it, start a server that says where it listens.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "support/temp_dir.h"
#include "support/test_process.h"
#include "support/wait_until.h"

namespace inferscope::trace {
namespace {

using namespace std::chrono_literals;

// command_args: the command and what it needs to start on an ephemeral port.
const std::vector<std::vector<std::string>> kCommands = {
    {"serve", "--port", "0"},
    {"gateway", "--port", "0", "--upstream", "http://127.0.0.1:1"},
};

// Tests that bad tracing flags fail with one line naming the flag and a non-zero exit code.
TEST(TraceFlagsTest, BadTracingFlagsFailWithOneLine) {
  struct Case {
    std::vector<std::string> flags;
    std::string named;
  };
  for (const auto& command : kCommands) {
    for (const Case& c : std::vector<Case>{
             {{"--otlp-endpoint", "http://127.0.0.1:1/v1/traces", "--trace-sample", "1.5"}, "--trace-sample"},
             {{"--trace-slow", "2s"}, "--trace-slow"},
             {{"--trace-sample", "0.5"}, "--trace-sample"},
             {{"--otlp-endpoint", "http://127.0.0.1:1/v1/traces", "--trace-slow", "soon"}, "--trace-slow"},
             {{"--otlp-endpoint", "ftp://x"}, "--otlp-endpoint"}}) {
      testing::TempDir dir("trace-flags");
      std::vector<std::string> args = command;
      args.insert(args.end(), c.flags.begin(), c.flags.end());
      testing::TestProcess p({.binary = INFERSCOPE_BINARY, .args = args, .stdout_file = dir.path() / "out",
                              .stderr_file = dir.path() / "out"});
      const auto code = p.wait_exit(20s);
      ASSERT_TRUE(code.has_value()) << command[0] << " " << c.named;
      EXPECT_NE(*code, 0) << command[0] << " " << c.named;
      const std::string out = p.stdout_text();
      EXPECT_NE(out.find(c.named), std::string::npos) << command[0] << ": " << out;
      EXPECT_LE(std::count(out.begin(), out.end(), '\n'), 2) << out;  // CLI11's line (and its --help hint)
    }
  }
}

// Tests that a malformed OTEL_RESOURCE_ATTRIBUTES stops either command at start with one line
// naming the variable and the bad entry's position, never the entry's text.
TEST(TraceFlagsTest, MalformedResourceAttributesFailWithOneLine) {
  for (const auto& command : kCommands) {
    testing::TempDir dir("trace-flags");
    std::vector<std::string> args = command;
    args.insert(args.end(), {"--otlp-endpoint", "http://127.0.0.1:1/v1/traces"});
    testing::TestProcess p({.binary = INFERSCOPE_BINARY, .args = args,
                            .env = {"OTEL_RESOURCE_ATTRIBUTES=team=llm,hunter2-token"},
                            .stdout_file = dir.path() / "out", .stderr_file = dir.path() / "out"});
    const auto code = p.wait_exit(20s);
    ASSERT_TRUE(code.has_value()) << command[0];
    EXPECT_NE(*code, 0) << command[0];
    const std::string out = p.stdout_text();
    EXPECT_NE(out.find("OTEL_RESOURCE_ATTRIBUTES: entry 2"), std::string::npos) << command[0] << ": " << out;
    EXPECT_EQ(out.find("hunter2"), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
}

// Tests that valid tracing flags start the server.
TEST(TraceFlagsTest, GoodTracingFlagsStartTheServer) {
  for (const auto& command : kCommands) {
    testing::TempDir dir("trace-flags");
    std::vector<std::string> args = command;
    for (const char* flag : {"--otlp-endpoint", "http://127.0.0.1:1/v1/traces", "--trace-sample", "0.25",
                             "--trace-slow", "1500ms"}) {
      args.emplace_back(flag);
    }
    testing::TestProcess p({.binary = INFERSCOPE_BINARY, .args = args, .stdout_file = dir.path() / "out",
                            .stderr_file = dir.path() / "err"});
    EXPECT_TRUE(testing::wait_until([&] { return p.stdout_text().find("listening on http://") != std::string::npos; },
                                    30s))
        << command[0] << ": " << p.stdout_text() << p.stderr_text();
  }
}

// Tests the gateway's config file: its tracing map supplies the endpoint a --trace-sample flag
// needs (flags override the file).
TEST(TraceFlagsTest, GatewayConfigEndpointWithSampleFlag) {
  testing::TempDir dir("trace-flags");
  const std::string config = (dir.path() / "gw.yaml").string();
  std::ofstream(config) << "upstreams:\n  - url: http://127.0.0.1:1\ntracing:\n"
                           "  otlp_endpoint: http://127.0.0.1:1/v1/traces\n  sample: 1\n";
  testing::TestProcess p({.binary = INFERSCOPE_BINARY,
                          .args = {"gateway", "--port", "0", "--config", config, "--trace-sample", "0.5"},
                          .stdout_file = dir.path() / "out",
                          .stderr_file = dir.path() / "err"});
  EXPECT_TRUE(testing::wait_until([&] { return p.stdout_text().find("listening on http://") != std::string::npos; },
                                  30s))
      << p.stdout_text() << p.stderr_text();
}

}  // namespace
}  // namespace inferscope::trace
