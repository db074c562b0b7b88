// Integration tests of the `inferscope serve` subcommand as a subprocess: the "listening on" line,
// a clean stop on SIGTERM, and one-line errors with a non-zero exit for bad flags.
#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <regex>
#include <string>
#include <vector>

#include "serve_test_support.h"

namespace inferscope::serve::testing {
namespace {

// Child is a running `inferscope` with stdout and stderr captured; killed if still alive at the end.
class Child {
 public:
  explicit Child(std::vector<std::string> args) {
    int out[2], err[2];
    if (pipe(out) != 0 || pipe(err) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(err[1], 2);
      close(out[0]); close(err[0]); close(out[1]); close(err[1]);
      std::vector<char*> argv{const_cast<char*>(INFERSCOPE_BINARY)};
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(INFERSCOPE_BINARY, argv.data());
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    out_ = out[0];
    err_ = err[0];
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
    if (err_ >= 0) close(err_);
  }
  // read_line_from_stdout reads stdout until a newline or `limit` passes.
  std::string read_line_from_stdout(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (stdout_.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 100) > 0) {
        char buf[512];
        ssize_t n = read(out_, buf, sizeof buf);
        if (n <= 0) break;
        stdout_.append(buf, static_cast<std::size_t>(n));
      }
    }
    return stdout_.substr(0, stdout_.find('\n'));
  }
  // wait_exit waits up to `limit` for the exit status (-1 on timeout): poll() on a pidfd wakes
  // when the child exits, so nothing sleeps and retries.
  int wait_exit(std::chrono::milliseconds limit) {
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd < 0) return -1;
    pollfd p{pidfd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(limit.count()));
    close(pidfd);
    int status = 0;
    if (ready <= 0 || waitpid(pid_, &status, WNOHANG) != pid_) return -1;
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string drain_stderr() {
    std::string all;
    char buf[512];
    fcntl(err_, F_SETFL, O_NONBLOCK);
    for (ssize_t n; (n = read(err_, buf, sizeof buf)) > 0;) all.append(buf, static_cast<std::size_t>(n));
    return all;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
  bool reaped_ = false;
  std::string stdout_;
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
}

}  // namespace
}  // namespace inferscope::serve::testing
