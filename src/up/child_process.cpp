// File: child_process.cpp
#include "up/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace inferscope::up {

std::string ChildExit::describe() const {
  if (signal != 0) return "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit code " + std::to_string(exit_code);
}

namespace {

ChildExit from_status(int status) {
  ChildExit e;
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  if (WIFEXITED(status)) e.exit_code = WEXITSTATUS(status);
  return e;
}

}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::spawn(const ChildOptions& options, LineHandler on_line) {
  if (::access(options.binary.c_str(), X_OK) != 0) {
    return make_error("cannot start " + options.binary + ": " + std::strerror(errno));
  }
  // argv is built before fork: only async-signal-safe calls may run in the child.
  std::vector<std::string> storage;
  storage.push_back(std::filesystem::path(options.binary).filename().string());
  storage.insert(storage.end(), options.args.begin(), options.args.end());
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage = options.env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const std::string& mine : options.env) overridden = overridden || std::string_view(mine).substr(0, mine.find('=')) == name;
    if (!overridden) env_storage.emplace_back(entry);
  }
  std::vector<char*> envp;
  for (std::string& s : env_storage) envp.push_back(s.data());
  envp.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return make_error("cannot start " + options.binary + ": pipe: " + std::strerror(errno));
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    if (devnull >= 0) ::close(devnull);
    return make_error("cannot start " + options.binary + ": fork: " + std::strerror(errno));
  }
  if (pid == 0) {
    // Own process group: signals to the terminal's group do not reach it, and up can signal the
    // whole group. PDEATHSIG: the kernel kills it when up's spawning thread dies, SIGKILL included.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // up died between fork and prctl
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close_range(3, ~0U, 0);  // no listening socket or database of up's leaks into the child
    ::execve(options.binary.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  if (devnull >= 0) ::close(devnull);
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->pid_ = pid;
  child->reader_ = std::thread(&ChildProcess::read_output, child.get(), fds[0], options.log_file, std::move(on_line));
  return child;
}

void ChildProcess::read_output(int fd, std::filesystem::path log_file, LineHandler on_line) {
  std::ofstream log;
  if (!log_file.empty()) log.open(log_file, std::ios::app);
  std::string pending;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buffer, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      const std::string_view line(pending.data() + start, nl - start);
      if (log.is_open()) log << line << '\n';
      if (on_line) on_line(line);
    }
    pending.erase(0, start);
    if (log.is_open()) log.flush();
  }
  if (!pending.empty()) {
    if (log.is_open()) log << pending << '\n';
    if (on_line) on_line(pending);
  }
  ::close(fd);
}

std::optional<ChildExit> ChildProcess::try_wait() {
  std::lock_guard lock(mutex_);
  if (exit_) return exit_;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) exit_ = from_status(status);
  return exit_;
}

std::optional<ChildExit> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto e = try_wait()) return e;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

ChildExit ChildProcess::terminate(std::chrono::milliseconds grace) {
  if (auto e = try_wait()) return *e;
  ::kill(-pid_, SIGTERM);
  ::kill(pid_, SIGTERM);  // in case setpgid had not run yet
  if (auto e = wait_for(grace)) return *e;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  for (;;) {
    if (auto e = wait_for(std::chrono::seconds(5))) return *e;
  }
}

void ChildProcess::wait_output_closed() {
  if (reader_.joinable()) reader_.join();
}

ChildProcess::~ChildProcess() {
  terminate(std::chrono::seconds(2));
  // Whatever else inherited the pipe is in the child's group and was killed with it.
  wait_output_closed();
}

Result<CommandResult> run_command(const std::string& binary, const std::vector<std::string>& args,
                                  std::chrono::milliseconds timeout) {
  auto output = std::make_shared<std::string>();
  auto mutex = std::make_shared<std::mutex>();
  auto child = ChildProcess::spawn({.binary = binary, .args = args, .log_file = {}}, [output, mutex](std::string_view line) {
    std::lock_guard lock(*mutex);
    output->append(line);
    output->push_back('\n');
  });
  if (!child) return child.error();
  CommandResult result;
  if (auto e = (*child)->wait_for(timeout)) {
    result.exit = *e;
  } else {
    result.exit = (*child)->terminate(std::chrono::milliseconds(200));
    output->append("(killed after " + std::to_string(timeout.count()) + " ms)\n");
  }
  (*child)->wait_output_closed();
  std::lock_guard lock(*mutex);
  result.output = *output;
  return result;
}

namespace {

// socket_inodes returns the inodes of the sockets among `pid`'s open files.
std::vector<std::string> socket_inodes(pid_t pid) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (!ec && target.starts_with("socket:[") && target.ends_with("]")) out.push_back(target.substr(8, target.size() - 9));
  }
  return out;
}

}  // namespace

std::uint16_t listening_port(pid_t pid) {
  const std::vector<std::string> inodes = socket_inodes(pid);
  if (inodes.empty()) return 0;
  for (const char* table : {"/net/tcp", "/net/tcp6"}) {
    std::ifstream in("/proc/" + std::to_string(pid) + table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode)) continue;
      if (state != "0A") continue;  // TCP_LISTEN
      if (std::find(inodes.begin(), inodes.end(), inode) == inodes.end()) continue;
      const std::size_t colon = local.rfind(':');
      if (colon == std::string::npos) continue;
      return static_cast<std::uint16_t>(std::strtoul(local.c_str() + colon + 1, nullptr, 16));
    }
  }
  return 0;
}

std::uint16_t parse_listening_port(std::string_view line) {
  if (line.find("msg=\"Listening on\"") == std::string_view::npos) return 0;
  const std::size_t at = line.find("address=");
  if (at == std::string_view::npos) return 0;
  std::string_view address = line.substr(at + 8);
  address = address.substr(0, address.find_first_of(" \t"));
  const std::size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return 0;
  unsigned port = 0;
  for (char c : address.substr(colon + 1)) {
    if (c < '0' || c > '9') return 0;
    port = port * 10 + static_cast<unsigned>(c - '0');
    if (port > 65535) return 0;
  }
  return static_cast<std::uint16_t>(port);
}

}  // namespace inferscope::up
