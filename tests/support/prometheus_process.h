// File: prometheus_process.h
// PrometheusProcess runs the real /usr/bin/prometheus for a test: a private temp dir, the given
// scrape config, 127.0.0.1 port 0 (the bound port is read from its "Listening on" log line), and
// stopped through TestProcess when destroyed, also when the test fails.
// Example: PrometheusProcess p(scrape_config_for({"127.0.0.1:8000"}, "1s")); p.url() -> "http://127.0.0.1:N"
// Not thread-safe; one owner. Start-up is bounded (15 s) and reports failure through ok()/error().
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/temp_dir.h"
#include "support/test_process.h"
#include "support/wait_until.h"

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
  // fresh one inside the private temp dir. extra_args: more flags (--enable-feature=...).
  explicit PrometheusProcess(const std::string& config_yaml, const std::string& data_dir = "",
                             const std::vector<std::string>& extra_args = {})
      : dir_("prom") {
    if (dir_.path().empty()) {
      error_ = "cannot create temp dir";
      return;
    }
    const std::filesystem::path config = dir_.path() / "prometheus.yml";
    std::ofstream(config) << config_yaml;
    const std::filesystem::path log = dir_.path() / "prometheus.log";
    std::vector<std::string> args = {"--config.file=" + config.string(),
                                     "--storage.tsdb.path=" + (data_dir.empty() ? (dir_.path() / "data").string() : data_dir),
                                     "--web.listen-address=127.0.0.1:0", "--web.enable-lifecycle", "--log.level=info"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    process_ = std::make_unique<TestProcess>(
        ProcessOptions{.binary = "/usr/bin/prometheus", .args = std::move(args), .stdout_file = log, .stderr_file = log});
    if (!process_->started()) {
      error_ = process_->start_error();
      return;
    }
    // The web listener logs its real port; nothing announces it otherwise.
    const std::regex listening(R"(msg="Listening on" address=127\.0\.0\.1:(\d+))");
    wait_until(
        [&] {
          const std::string text = process_->stdout_text();
          std::smatch m;
          if (std::regex_search(text, m, listening)) port_ = std::stoi(m[1]);
          return port_ != 0;
        },
        std::chrono::seconds(15), std::chrono::milliseconds(20));
    if (port_ == 0) error_ = "prometheus did not log its port within 15 s";
  }

  // stop ends Prometheus (SIGTERM, SIGKILL after 10 s) and reaps it. Idempotent.
  void stop() {
    if (process_) process_->stop();
  }

  bool ok() const { return port_ != 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string dir() const { return dir_.path().string(); }

 private:
  TempDir dir_;  // declared first: removed after the process has stopped
  std::unique_ptr<TestProcess> process_;
  int port_ = 0;
  std::string error_;
};

}  // namespace inferscope::testing
