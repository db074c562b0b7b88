// File: support/test_process.h
// TestProcess: the one way tests start a program (the inferscope binary, Alertmanager, ...). The
// child gets its own process group, and the destructor SIGTERMs that group, gives it a grace
// period, SIGKILLs what is left and reaps the child, also when the test fails: nothing a test
// starts outlives it. No gtest dependency.
// Example:
//   testing::TestProcess up({.binary = INFERSCOPE_BINARY, .args = {"up", "--port", "0"},
//                            .stdout_file = dir.path() / "out", .stderr_file = dir.path() / "err"});
//   ASSERT_TRUE(up.started()) << up.start_error();
// Not thread-safe; one owner.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace inferscope::testing {

// ProcessOptions describes one program to start.
struct ProcessOptions {
  std::string binary;                 // absolute path; also argv[0]
  std::vector<std::string> args;      // excluding argv[0]
  std::vector<std::string> env = {};  // NAME=value entries added to (or overriding) the test's environment
  std::filesystem::path stdout_file;  // truncated; empty: the test's own stdout
  std::filesystem::path stderr_file;  // truncated; empty: the test's own stderr; equal to stdout_file: both there
  std::filesystem::path stdin_file = {};   // read from; empty: /dev/null (never the test's own stdin)
  std::filesystem::path working_dir = {};  // empty: the test's own
};

class TestProcess {
 public:
  explicit TestProcess(ProcessOptions options, std::chrono::milliseconds stop_grace = std::chrono::seconds(10))
      : options_(std::move(options)), stop_grace_(stop_grace) {
    std::vector<std::string> argv_text{options_.binary};
    argv_text.insert(argv_text.end(), options_.args.begin(), options_.args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);

    std::vector<std::string> env_text = merged_environment(options_.env);
    std::vector<char*> envp;
    for (std::string& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    constexpr int kFlags = O_WRONLY | O_CREAT | O_TRUNC;
    const std::string stdin_path = options_.stdin_file.empty() ? "/dev/null" : options_.stdin_file.string();
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, stdin_path.c_str(), O_RDONLY, 0);
    if (!options_.stdout_file.empty()) {
      posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, options_.stdout_file.c_str(), kFlags, 0644);
    }
    if (!options_.stderr_file.empty() && options_.stderr_file == options_.stdout_file) {
      posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    } else if (!options_.stderr_file.empty()) {
      posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, options_.stderr_file.c_str(), kFlags, 0644);
    }
    // Only after the files are opened: every path in the options is read from the test's own directory.
    if (!options_.working_dir.empty()) posix_spawn_file_actions_addchdir_np(&actions, options_.working_dir.c_str());
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);  // the child leads a new group, so the group kill reaches its children
    std::fflush(nullptr);
    const int rc = posix_spawn(&pid_, options_.binary.c_str(), &actions, &attributes, argv.data(), envp.data());
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      pid_ = -1;
      start_error_ = "cannot start " + options_.binary + ": " + std::strerror(rc);
    }
  }

  ~TestProcess() { stop(); }
  TestProcess(const TestProcess&) = delete;
  TestProcess& operator=(const TestProcess&) = delete;

  bool started() const { return pid_ > 0; }
  const std::string& start_error() const { return start_error_; }
  pid_t pid() const { return pid_; }

  // signal sends `sig` to the program itself (not its group); false once it has been reaped.
  bool signal(int sig) const { return pid_ > 0 && !exit_status_ && ::kill(pid_, sig) == 0; }

  // wait_exit waits up to `limit` for the program to end: its exit code, or 128 + the signal that
  // killed it; nullopt when it still runs. Waits on a pidfd, so nothing sleeps and retries.
  std::optional<int> wait_exit(std::chrono::milliseconds limit) {
    if (exit_status_ || pid_ <= 0) return exit_status_;
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd >= 0) {
      pollfd ready{pidfd, POLLIN, 0};
      ::poll(&ready, 1, static_cast<int>(limit.count()));
      ::close(pidfd);
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
    exit_signal_ = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_status_;
  }

  // exit_signal is the signal that killed the program, 0 when it exited by itself (or still runs),
  // so a test can tell "handled SIGINT and exited 130" from "died of SIGINT".
  int exit_signal() const { return exit_signal_; }

  // stop SIGTERMs the process group, SIGKILLs it after the grace period and reaps the program;
  // returns how it ended. Idempotent; the destructor calls it.
  std::optional<int> stop() {
    if (pid_ <= 0) return std::nullopt;
    if (!exit_status_) {
      ::kill(-pid_, SIGTERM);
      if (!wait_exit(stop_grace_)) {
        ::kill(-pid_, SIGKILL);
        wait_exit(std::chrono::seconds(10));
      }
    }
    ::kill(-pid_, SIGKILL);  // children the program left behind in its group
    return exit_status_;
  }

  // stdout_text and stderr_text read what the program has written to its capture files so far.
  std::string stdout_text() const { return read_file(options_.stdout_file); }
  std::string stderr_text() const { return read_file(options_.stderr_file); }

 private:
  static std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  static std::vector<std::string> merged_environment(const std::vector<std::string>& extra) {
    std::vector<std::string> merged;
    const auto overridden = [&](const std::string& entry) {
      const std::string name = entry.substr(0, entry.find('=') + 1);
      for (const std::string& e : extra) {
        if (e.compare(0, name.size(), name) == 0) return true;
      }
      return false;
    };
    for (char** e = environ; *e != nullptr; ++e) {
      if (!overridden(*e)) merged.emplace_back(*e);
    }
    merged.insert(merged.end(), extra.begin(), extra.end());
    return merged;
  }

  ProcessOptions options_;
  std::chrono::milliseconds stop_grace_;
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
  int exit_signal_ = 0;
  std::string start_error_;
};

}  // namespace inferscope::testing
