// Integration tests of the `inferscope serve` subcommand as a subprocess: the "listening on" line,
// a clean stop on SIGTERM, and one-line errors with a non-zero exit for bad flags.
#include <signal.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <regex>
#include <string>
#include <vector>

#include "serve_test_support.h"
#include "support/temp_dir.h"
#include "support/test_process.h"
#include "support/wait_until.h"

namespace inferscope::serve::testing {
namespace {

// Child is a running `inferscope` with stdout and stderr captured in a private directory; the
// TestProcess stops it if it still runs at the end.
class Child {
 public:
  explicit Child(std::vector<std::string> args)
      : dir_("serve-cli"),
        process_({.binary = INFERSCOPE_BINARY,
                  .args = std::move(args),
                  .stdout_file = dir_.path() / "out",
                  .stderr_file = dir_.path() / "err"}) {}
  // read_line_from_stdout waits up to `limit` for stdout's first line.
  std::string read_line_from_stdout(std::chrono::milliseconds limit) {
    inferscope::testing::wait_until([&] { return process_.stdout_text().find('\n') != std::string::npos; }, limit);
    const std::string out = process_.stdout_text();
    return out.substr(0, out.find('\n'));
  }
  // wait_exit waits up to `limit` for the exit status (-1 on timeout).
  int wait_exit(std::chrono::milliseconds limit) { return process_.wait_exit(limit).value_or(-1); }
  std::string drain_stderr() const { return process_.stderr_text(); }
  pid_t pid() const { return process_.pid(); }

 private:
  inferscope::testing::TempDir dir_;
  inferscope::testing::TestProcess process_;
};

// Tests that serve prints the listening line, answers on that port and stops cleanly on SIGTERM.
TEST(ServeCommandTest, ListensAndStopsOnSigterm) {
  Child child({"serve", "--port", "0", "--time-scale", "50", "--model", "m1,m2"});
  std::string line = child.read_line_from_stdout(std::chrono::seconds(20));
  std::smatch match;
  ASSERT_TRUE(std::regex_match(line, match, std::regex(R"(inferscope serve: listening on http://127\.0\.0\.1:(\d+))")))
      << line << child.drain_stderr();
  const auto port = static_cast<std::uint16_t>(std::stoi(match[1]));
  EXPECT_EQ(request(port, http::verb::get, "/health").status, 200);
  auto models = nlohmann::json::parse(request(port, http::verb::get, "/v1/models").body);
  EXPECT_EQ(models["data"][1]["id"], "m2");
  kill(child.pid(), SIGTERM);
  EXPECT_EQ(child.wait_exit(std::chrono::seconds(10)), 0) << child.drain_stderr();
}

// Tests that bad flags give one line naming the flag and a non-zero exit.
TEST(ServeCommandTest, BadFlagsFailWithOneLine) {
  auto check = [](std::vector<std::string> args, const std::string& flag) {
    Child child(args);
    const int code = child.wait_exit(std::chrono::seconds(20));
    const std::string err = child.drain_stderr();
    EXPECT_NE(code, 0) << err;
    EXPECT_NE(code, -1) << "did not exit";
    EXPECT_NE(err.find(flag), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  };
  check({"serve", "--port", "notaport"}, "--port");
  check({"serve", "--time-scale", "-2"}, "--time-scale");
  check({"serve", "--dialects", "prometheus2"}, "--dialects");
  check({"serve", "--fault", "no_such_fault=1"}, "--fault");
  check({"serve", "--profile", "no-such-profile", "--port", "0"}, "inferscope serve: cannot");
  check({"serve", "--speculative-tokens", "9"}, "--speculative-tokens");
  check({"serve", "--speculative-acceptance", "1.5"}, "--speculative-acceptance");
  check({"serve", "--fault", "spec_acceptance=2"}, "--fault");
  check({"serve", "--speculative-tokens", "2", "--profile", "seed-mock", "--port", "0"}, "no speculative decoding");
  check({"serve", "--data-parallel-size", "0"}, "--data-parallel-size");
  check({"serve", "--data-parallel-size", "2", "--port", "0", "--fault", "engine_slowdown={\"engine\":2,\"factor\":3}"},
        "--fault engine_slowdown: rank 2 is not served");
  check({"serve", "--max-loras", "0"}, "--max-loras");
  check({"serve", "--lora-modules", "inferscope-sim-8b", "--port", "0"}, "--lora-modules");
  check({"serve", "--lora-modules", "a", "--profile", "seed-mock", "--port", "0"}, "no LoRA adapters");
}

}  // namespace
}  // namespace inferscope::serve::testing
