// Tests of the `inferscope gateway` command line (INFERSCOPE_BINARY as a subprocess): the ready
// line others rely on, SIGTERM ends it cleanly, and a bad config value is one line naming the
// file, the line and the key.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace {

class GatewayCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gw-cli-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::filesystem::remove_all(dir_);
  }
  // spawn starts the binary with `args`, stdout and stderr to files in the test's directory.
  void spawn(std::vector<std::string> args) {
    args.insert(args.begin(), INFERSCOPE_BINARY);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, (dir_ / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, (dir_ / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_EQ(posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
  }
  std::string read(const char* name) {
    std::ifstream in(dir_ / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // wait_exit waits up to 20 s for the child and returns its exit status (-1: still running).
  int wait_exit() {
    for (int i = 0; i < 2000; ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
  std::filesystem::path dir_;
  pid_t pid_ = -1;
};

// Tests the ready line and a clean exit on SIGTERM.
TEST_F(GatewayCliTest, PrintsListeningLineAndStopsOnSigterm) {
  spawn({"gateway", "--upstream", "http://127.0.0.1:9", "--port", "0", "--drain-timeout", "1s"});
  bool ready = false;
  for (int i = 0; i < 2000 && !ready; ++i) {
    ready = read("out").find("inferscope gateway: listening on http://127.0.0.1:") != std::string::npos;
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(ready) << read("out") << read("err");
  ::kill(pid_, SIGTERM);
  EXPECT_EQ(wait_exit(), 0) << read("err");
}

// Tests that a bad config value is rejected with one line naming file, line and key.
TEST_F(GatewayCliTest, BadConfigValueIsOneLineWithFileLineAndKey) {
  const std::string config = (dir_ / "gw.yaml").string();
  std::ofstream(config) << "upstreams:\n  - url: http://127.0.0.1:8000\nmax_queue: -1\n";
  spawn({"gateway", "--config", config});
  EXPECT_EQ(wait_exit(), 1);
  const std::string err = read("err");
  EXPECT_NE(err.find("inferscope gateway: cannot load gateway config from " + config + ":3: key 'max_queue'"),
            std::string::npos)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace
