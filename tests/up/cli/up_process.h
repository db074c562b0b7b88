// File: up_process.h
// UpProcess runs `inferscope up` (or any inferscope subcommand) as a child process for tests and
// collects its output lines; the ready line's URLs are parsed out. Example:
//   UpProcess up({"up", "--target", url, "--port", "0"}); auto ready = up.wait_ready(60s);
// The child is killed (its process group) when the UpProcess is destroyed, even on test failure.
// Thread-safe: output arrives on the reader thread, waits happen on the test thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/blocking_client.h"
#include "support/temp_dir.h"
#include "up/child_process.h"

namespace inferscope::up::testing {

// ReadyUrls are the three URLs of the ready line.
struct ReadyUrls {
  std::string prometheus;
  std::string alertmanager;
  std::string api;
  std::uint16_t api_port() const { return static_cast<std::uint16_t>(std::stoi(api.substr(api.rfind(':') + 1))); }
};

class UpProcess {
 public:
  explicit UpProcess(const std::vector<std::string>& args) {
    auto child = ChildProcess::spawn({.binary = INFERSCOPE_BINARY, .args = args, .log_file = {}},
                                     [this](std::string_view line) {
                                       std::lock_guard lock(mutex_);
                                       lines_.emplace_back(line);
                                       changed_.notify_all();
                                     });
    if (child) child_ = std::move(*child);
    else start_error_ = child.error().message;
  }

  bool started() const { return child_ != nullptr; }
  const std::string& start_error() const { return start_error_; }
  ChildProcess& process() { return *child_; }

  // wait_line waits for a line containing `part`; nullopt after `timeout` or once the child ended.
  std::optional<std::string> wait_line(const std::string& part, std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::size_t seen = 0;
    const auto scan = [&]() -> std::optional<std::string> {
      for (; seen < lines_.size(); ++seen) {
        if (lines_[seen].find(part) != std::string::npos) return lines_[seen];
      }
      return std::nullopt;
    };
    std::unique_lock lock(mutex_);
    for (;;) {
      if (auto found = scan()) return found;
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      lock.unlock();
      const bool ended = child_->try_wait().has_value();
      if (ended) child_->wait_output_closed();  // every line it wrote has arrived
      lock.lock();
      if (ended) return scan();
      changed_.wait_for(lock, std::chrono::milliseconds(200));
    }
  }

  // wait_ready waits for the ready line and parses its URLs.
  std::optional<ReadyUrls> wait_ready(std::chrono::seconds timeout) {
    const auto line = wait_line("inferscope up: ready ", timeout);
    if (!line) return std::nullopt;
    static const std::regex kReady(R"(ready prometheus=(\S+) alertmanager=(\S+) api=(\S+)$)");
    std::smatch m;
    if (!std::regex_search(*line, m, kReady)) return std::nullopt;
    return ReadyUrls{m[1], m[2], m[3]};
  }

  // output returns every line so far, for failure messages.
  std::string output() {
    std::lock_guard lock(mutex_);
    std::string out;
    for (const std::string& l : lines_) out += l + "\n";
    return out;
  }

 private:
  std::string start_error_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> lines_;
  // Last: destroyed first, so the reader thread is joined before the lines it appends to go.
  std::unique_ptr<ChildProcess> child_;
};

// run_cli runs one inferscope subcommand to its end (at most a minute); a spawn failure reads as
// exit code -1 with the reason as its output.
inline CommandResult run_cli(const std::vector<std::string>& args) {
  auto run = run_command(INFERSCOPE_BINARY, args, std::chrono::seconds(60));
  return run ? *run : CommandResult{{.exit_code = -1}, run.error().message};
}

// get_status returns up's GET /api/status (null when it does not answer 200).
inline nlohmann::json get_status(const ReadyUrls& urls) {
  auto reply = net::blocking_http_request("GET", urls.api + "/api/status", {}, {}, std::chrono::seconds(20));
  if (!reply || reply->status != 200) return nullptr;
  return nlohmann::json::parse(reply->body, nullptr, false);
}

// child_of returns the named child's entry of a status JSON, or null.
inline nlohmann::json child_of(const nlohmann::json& status, const std::string& name) {
  if (!status.is_object() || !status.contains("children")) return nullptr;
  for (const auto& c : status["children"]) {
    if (c.value("name", "") == name) return c;
  }
  return nullptr;
}

// ephemeral_args: the flags that leave every port of `up` to the kernel and keep its state in DIR.
inline std::vector<std::string> ephemeral_args(const inferscope::testing::TempDir& dir) {
  return {"--port", "0", "--prometheus-port", "0", "--alertmanager-port", "0", "--scrape-interval", "1s",
          "--state-dir", (dir.path() / "state").string()};
}

}  // namespace inferscope::up::testing
