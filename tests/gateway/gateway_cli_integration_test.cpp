// Tests of the `inferscope gateway` command line (INFERSCOPE_BINARY as a subprocess): the ready
// line others rely on, SIGTERM ends it cleanly, and a bad config value is one line naming the
// file, the line and the key.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "support/temp_dir.h"
#include "support/test_process.h"
#include "support/wait_until.h"

namespace {
using inferscope::testing::TempDir;
using inferscope::testing::TestProcess;

// start_gateway starts the binary with `args`, stdout and stderr to files in `dir`.
TestProcess start_gateway(const TempDir& dir, std::vector<std::string> args) {
  return TestProcess({.binary = INFERSCOPE_BINARY,
                      .args = std::move(args),
                      .stdout_file = dir.path() / "out",
                      .stderr_file = dir.path() / "err"});
}

// Tests the ready line and a clean exit on SIGTERM.
TEST(GatewayCliTest, PrintsListeningLineAndStopsOnSigterm) {
  TempDir dir("gw-cli");
  TestProcess gateway =
      start_gateway(dir, {"gateway", "--upstream", "http://127.0.0.1:9", "--port", "0", "--drain-timeout", "1s"});
  ASSERT_TRUE(gateway.started()) << gateway.start_error();
  const bool ready = inferscope::testing::wait_until(
      [&] { return gateway.stdout_text().find("inferscope gateway: listening on http://127.0.0.1:") != std::string::npos; },
      std::chrono::seconds(20));
  ASSERT_TRUE(ready) << gateway.stdout_text() << gateway.stderr_text();
  gateway.signal(SIGTERM);
  EXPECT_EQ(gateway.wait_exit(std::chrono::seconds(20)), 0) << gateway.stderr_text();
}

// Tests that a bad config value is rejected with one line naming file, line and key.
TEST(GatewayCliTest, BadConfigValueIsOneLineWithFileLineAndKey) {
  TempDir dir("gw-cli");
  const std::string config = (dir.path() / "gw.yaml").string();
  std::ofstream(config) << "upstreams:\n  - url: http://127.0.0.1:8000\nmax_queue: -1\n";
  TestProcess gateway = start_gateway(dir, {"gateway", "--config", config});
  ASSERT_TRUE(gateway.started()) << gateway.start_error();
  EXPECT_EQ(gateway.wait_exit(std::chrono::seconds(20)), 1);
  const std::string err = gateway.stderr_text();
  EXPECT_NE(err.find("inferscope gateway: cannot load gateway config from " + config + ":3: key 'max_queue'"),
            std::string::npos)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace
