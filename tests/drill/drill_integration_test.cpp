// Tests `inferscope drill` end to end: a real `inferscope up` (Prometheus, Alertmanager, relay)
// scraping `inferscope serve --enable-admin` every second, alert `for` shortened by up's config.
// The drill injects faults through serve's admin API, sees the firing and resolved notifications
// reach the relay through up's GET /api/notifications, and exits 0; a drill whose alert cannot
// fire in time exits 1; bad input exits 2 with one line. Only the short cases run here (the full
// drill takes minutes; docs/drill.md has its figures).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "stack/blocking_http.h"

namespace inferscope::drill {
namespace {

using namespace std::chrono_literals;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Process runs the inferscope binary with stdout/stderr to files; SIGTERM (then SIGKILL) at the end.
class Process {
 public:
  Process(std::vector<std::string> args, std::filesystem::path out, std::filesystem::path err)
      : out_(std::move(out)), err_(std::move(err)) {
    pid_ = fork();
    if (pid_ == 0) {
      const int out_fd = open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err_fd = open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out_fd, 1);
      dup2(err_fd, 2);
      std::vector<char*> argv{const_cast<char*>(INFERSCOPE_BINARY)};
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(INFERSCOPE_BINARY, argv.data());
      _exit(127);
    }
  }
  void signal(int sig) const { kill(pid_, sig); }
  ~Process() {
    if (pid_ <= 0 || exited_) return;
    kill(pid_, SIGTERM);
    if (wait_exit(10s) < 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  // wait_exit returns the exit status, or -1 when `limit` passes first.
  int wait_exit(std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(50ms);
    }
    return -1;
  }
  std::string out() const { return read_file(out_); }
  std::string err() const { return read_file(err_); }
  // wait_for_match polls stdout for `pattern` (bounded) and returns its first group.
  std::string wait_for_match(const std::string& pattern, std::chrono::seconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    const std::regex re(pattern);
    while (std::chrono::steady_clock::now() < deadline) {
      std::smatch m;
      const std::string text = out();
      if (std::regex_search(text, m, re)) return m[1];
      std::this_thread::sleep_for(50ms);
    }
    return {};
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  std::filesystem::path out_, err_;
};

class DrillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* binary : {"/usr/bin/prometheus", "/usr/bin/prometheus-alertmanager", "/usr/bin/promtool"}) {
      if (access(binary, X_OK) != 0) GTEST_SKIP() << binary << " not installed";
    }
    char pattern[] = "/tmp/inferscope-drill-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    up_.reset();
    serve_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  // start serves a target and runs up over it with `error_ratio_for` as that alert's `for`.
  void start(const std::string& error_ratio_for) {
    serve_ = std::make_unique<Process>(
        std::vector<std::string>{"serve", "--port", "0", "--enable-admin", "--model", "m"}, dir_ / "serve.out",
        dir_ / "serve.err");
    const std::string port = serve_->wait_for_match(R"(listening on http://127\.0\.0\.1:(\d+))", 15s);
    ASSERT_FALSE(port.empty()) << serve_->err();
    serve_url_ = "http://127.0.0.1:" + port;
    std::ofstream(dir_ / "up.yaml") << "targets:\n  - name: serve\n    url: http://127.0.0.1:" << port
                                    << "/metrics\n    kind: inferscope\n"
                                    << "scrape_interval: 1s\nport: 0\nprometheus_port: 0\nalertmanager_port: 0\n"
                                    << "state_dir: " << (dir_ / "state").string() << "\n"
                                    << "alerts:\n  for:\n    InferscopeErrorRatioHigh: " << error_ratio_for
                                    << "\n    InferscopeRequestsWaiting: 2s\n"
                                    << "alertmanager:\n  group_wait: 1s\n  group_interval: 1s\n";
    up_ = std::make_unique<Process>(std::vector<std::string>{"up", "--config", (dir_ / "up.yaml").string()},
                                    dir_ / "up.out", dir_ / "up.err");
    api_ = up_->wait_for_match(R"(inferscope up: ready .* api=(http://127\.0\.0\.1:\d+))", 40s);
    ASSERT_FALSE(api_.empty()) << up_->out() << up_->err();
  }
  // drill runs `inferscope drill --api ... args` and returns its exit status (-1: hung).
  int drill(std::vector<std::string> args, std::string* out, std::string* err = nullptr) {
    args.insert(args.begin(), {"drill", "--api", api_});
    Process p(args, dir_ / "drill.out", dir_ / "drill.err");
    const int status = p.wait_exit(150s);
    *out = p.out();
    if (err != nullptr) *err = p.err();
    return status;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Process> serve_, up_;
  std::string api_, serve_url_;
};

// Tests that two drill cases fire, reach the relay and resolve, with times in the JSON.
TEST_F(DrillTest, ErrorRateAndQueueAlertsFireAndResolve) {
  ASSERT_NO_FATAL_FAILURE(start("2s"));
  for (const char* only : {"error_rate", "InferscopeRequestsWaiting"}) {
    std::string out, err;
    ASSERT_EQ(drill({"--only", only, "--json", "--fire-timeout", "60s", "--resolve-timeout", "60s"}, &out, &err), 0)
        << out << err << up_->out();
    const auto json = nlohmann::json::parse(out, nullptr, false);
    ASSERT_FALSE(json.is_discarded()) << out;
    ASSERT_EQ(json["rows"].size(), 1u) << out;
    const auto& row = json["rows"][0];
    EXPECT_TRUE(row["fired"].get<bool>()) << out;
    EXPECT_TRUE(row["resolved"].get<bool>()) << out;
    EXPECT_GT(row["seconds_to_notification"].get<double>(), 0) << out;
    EXPECT_GT(row["seconds_to_resolve"].get<double>(), 0) << out;
    EXPECT_EQ(row["job"], "serve");
    EXPECT_TRUE(json["all_fired"].get<bool>());
  }
  // up printed the notifications the relay stored.
  EXPECT_NE(up_->out().find("alert firing InferscopeErrorRatioHigh job=serve"), std::string::npos) << up_->out();
  EXPECT_NE(up_->out().find("alert resolved InferscopeRequestsWaiting job=serve"), std::string::npos) << up_->out();
}

// Tests that an alert that cannot fire within the timeout makes the drill exit 1 and say NO.
TEST_F(DrillTest, AlertThatNeverFiresExitsOne) {
  ASSERT_NO_FATAL_FAILURE(start("10m"));
  std::string out;
  EXPECT_EQ(drill({"--only", "InferscopeErrorRatioHigh", "--fire-timeout", "8s", "--resolve-timeout", "5s"}, &out), 1)
      << out;
  EXPECT_NE(out.find("InferscopeErrorRatioHigh           error_rate       NO"), std::string::npos) << out;
}

// Tests that Ctrl-C during a drill clears the fault it injected and exits 2 with one line.
TEST_F(DrillTest, InterruptClearsTheFault) {
  ASSERT_NO_FATAL_FAILURE(start("10m"));
  Process p({"drill", "--api", api_, "--only", "error_rate", "--fire-timeout", "60s"}, dir_ / "drill.out",
            dir_ / "drill.err");
  ASSERT_FALSE(p.wait_for_match("(drill: error_rate:)", 40s).empty()) << p.out() << p.err();
  auto faults = stack::blocking_http_request("GET", serve_url_ + "/admin/faults");
  ASSERT_TRUE(faults);
  EXPECT_NE(faults->body.find("error_rate"), std::string::npos) << faults->body;  // injected
  p.signal(SIGINT);
  EXPECT_EQ(p.wait_exit(20s), 2) << p.out() << p.err();
  EXPECT_NE(p.err().find("inferscope drill: interrupted; the faults set on serve"), std::string::npos) << p.err();
  faults = stack::blocking_http_request("GET", serve_url_ + "/admin/faults");
  ASSERT_TRUE(faults);
  EXPECT_EQ(faults->body.find("error_rate"), std::string::npos) << faults->body;  // cleared
}

// Tests one-line errors and exit status 2 for an unknown --only and an unreachable --api.
TEST_F(DrillTest, BadInputExitsTwo) {
  ASSERT_NO_FATAL_FAILURE(start("2s"));
  std::string out, err;
  EXPECT_EQ(drill({"--only", "NoSuchAlert"}, &out, &err), 2);
  EXPECT_EQ(err, "inferscope drill: cannot drill --only NoSuchAlert: no such alert or fault in the drill catalog\n");
  api_ = "http://127.0.0.1:1";
  EXPECT_EQ(drill({}, &out, &err), 2);
  EXPECT_EQ(err.rfind("inferscope drill: cannot read the status of inferscope up at --api http://127.0.0.1:1", 0), 0u)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace
}  // namespace inferscope::drill
