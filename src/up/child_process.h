// File: child_process.h
// ChildProcess runs one external program (Prometheus, Alertmanager, node-exporter, promtool) in
// its own process group with PR_SET_PDEATHSIG, so it dies with `up` even when `up` is SIGKILLed;
// its stdout+stderr go line by line to a log file and to a callback. Example:
//   auto c = ChildProcess::spawn({.binary = "/usr/bin/prometheus", .args = {...}, .log_file = p}, on_line);
// Thread-safe: wait/terminate from any thread. PR_SET_PDEATHSIG fires when the *thread* that
// called spawn exits, so spawn only from a thread that outlives the child (the supervisor's).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <inferscope/common/result.h>

namespace inferscope::up {

// ChildOptions describes one program to run. args excludes argv[0].
struct ChildOptions {
  std::string binary;
  std::vector<std::string> args;
  std::filesystem::path log_file = {};  // appended to; empty = output only goes to on_line
  // env is set in the child's environment on top of up's (NAME=value each): how a secret reaches
  // a program without appearing in its command line (/proc/PID/environ is readable by its owner only).
  std::vector<std::string> env = {};
};

// ChildExit is how a child ended: an exit code or a signal.
struct ChildExit {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal killed it
  std::string describe() const;  // "exit code 1" / "signal 9 (Killed)"
};

class ChildProcess {
 public:
  // LineHandler receives each output line (without the newline) on the child's reader thread.
  using LineHandler = std::function<void(std::string_view line)>;

  // spawn forks and execs options.binary. Fails with "cannot start <binary>: <cause>" when the
  // binary is missing or not executable (checked before forking) or fork/pipe fails.
  static Result<std::unique_ptr<ChildProcess>> spawn(const ChildOptions& options, LineHandler on_line = {});

  // ~ChildProcess terminates the child (terminate(2s)) if it still runs and joins the reader.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }

  // try_wait reaps the child without blocking; returns its exit once it has ended.
  std::optional<ChildExit> try_wait();

  // wait_for blocks up to `timeout` for the child to end.
  std::optional<ChildExit> wait_for(std::chrono::milliseconds timeout);

  // terminate sends SIGTERM to the child's process group, waits up to `grace`, then SIGKILLs the
  // group and reaps the child. Idempotent; returns how it ended.
  ChildExit terminate(std::chrono::milliseconds grace);

  // wait_output_closed joins the reader thread once the child's output pipe has closed, so that
  // every line has been delivered (call after the child has ended).
  void wait_output_closed();

 private:
  ChildProcess() = default;
  void read_output(int fd, std::filesystem::path log_file, LineHandler on_line);

  pid_t pid_ = -1;
  std::mutex mutex_;
  std::optional<ChildExit> exit_;
  std::thread reader_;
};

// CommandResult is what run_command returns: exit status and combined output.
struct CommandResult {
  ChildExit exit;
  std::string output;
  bool ok() const { return exit.signal == 0 && exit.exit_code == 0; }
};

// run_command runs a short tool (promtool, amtool) to completion, killing it after `timeout`.
// Fails only when it cannot start.
Result<CommandResult> run_command(const std::string& binary, const std::vector<std::string>& args,
                                  std::chrono::milliseconds timeout);

// listening_port returns the TCP port process `pid` listens on (its first listening socket, from
// /proc/PID/fd and /proc/PID/net/tcp{,6}); 0 while it listens on none. For programs that do not log
// the port they bound (prometheus-redis-exporter with :0).
std::uint16_t listening_port(pid_t pid);

// parse_listening_port finds the port in an exporter-toolkit log line
// (`msg="Listening on" address=127.0.0.1:46553`); 0 when the line is not that line.
std::uint16_t parse_listening_port(std::string_view line);

}  // namespace inferscope::up
