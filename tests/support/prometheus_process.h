// File: prometheus_process.h
// PrometheusProcess runs the real /usr/bin/prometheus for a test: a private temp dir, the given
// scrape config, 127.0.0.1 port 0 (the bound port is read from its "Listening on" log line), and
// SIGTERM + waitpid when destroyed, also when the test fails.
// Example: PrometheusProcess p(scrape_config_for({"127.0.0.1:8000"}, "1s")); p.url() -> "http://127.0.0.1:N"
// Not thread-safe; one owner. Start-up is bounded (15 s) and reports failure through ok()/error().
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace inferscope::testing {

// scrape_config_for writes a prometheus.yml scraping `targets` (host:port) as job "serve".
inline std::string scrape_config_for(const std::vector<std::string>& targets, const std::string& interval = "1s",
                                     const std::string& job = "serve") {
  std::ostringstream out;
  out << "global:\n  scrape_interval: " << interval << "\n  evaluation_interval: " << interval << "\n"
      << "scrape_configs:\n  - job_name: " << job << "\n    static_configs:\n      - targets: [";
  for (std::size_t i = 0; i < targets.size(); ++i) out << (i ? ", " : "") << "'" << targets[i] << "'";
  out << "]\n";
  return out.str();
}

class PrometheusProcess {
 public:
  // data_dir: an existing TSDB directory to serve (e.g. blocks backfilled with promtool); "" = a
  // fresh one inside the private temp dir.
  explicit PrometheusProcess(const std::string& config_yaml, const std::string& data_dir = "") {
    char pattern[] = "/tmp/inferscope-prom-XXXXXX";
    if (!::mkdtemp(pattern)) {
      error_ = "cannot create temp dir";
      return;
    }
    dir_ = pattern;
    std::ofstream(dir_ + "/prometheus.yml") << config_yaml;
    std::string log = dir_ + "/prometheus.log";
    std::vector<std::string> args = {"/usr/bin/prometheus",
                                     "--config.file=" + dir_ + "/prometheus.yml",
                                     "--storage.tsdb.path=" + (data_dir.empty() ? dir_ + "/data" : data_dir),
                                     "--web.listen-address=127.0.0.1:0",
                                     "--web.enable-lifecycle",
                                     "--log.level=info"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      pid_ = -1;
      error_ = "cannot start /usr/bin/prometheus";
      return;
    }
    // The web listener logs its real port; poll the log (bounded) for it.
    std::regex listening(R"(msg="Listening on" address=127\.0\.0\.1:(\d+))");
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline && port_ == 0) {
      std::ifstream in(log);
      std::stringstream text;
      text << in.rdbuf();
      std::smatch m;
      std::string s = text.str();
      if (std::regex_search(s, m, listening)) port_ = std::stoi(m[1]);
      else std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (port_ == 0) error_ = "prometheus did not log its port within 15 s";
  }

  ~PrometheusProcess() {
    stop();
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  // stop sends SIGTERM and waits (bounded 10 s, then SIGKILL). Idempotent.
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 500; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  bool ok() const { return port_ != 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& dir() const { return dir_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_;
  std::string error_;
};

}  // namespace inferscope::testing
