// Tests `inferscope drill` end to end: a real `inferscope up` (Prometheus, Alertmanager, relay,
// drill robot) scraping two `inferscope serve --enable-admin` every second, alert `for` and the
// throughput baseline shortened by up's config. The FULL drill causes every generated alert (faults
// through serve's admin API, its own load, up's robot refusing messages), sees each firing and
// resolved notification reach the relay through up's GET /api/notifications, and exits 0; a drill
// whose alert cannot fire in time exits 1; Ctrl-C clears the fault; bad input exits 2 with one line.
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
#include <set>
#include <sstream>
#include <thread>

#include "alerts/rules_generator.h"
#include "net/blocking_client.h"
#include "support/peers.h"
#include "support/test_process.h"
#include "support/wait_until.h"

namespace inferscope::drill {
namespace {

using inferscope::testing::ProcessOptions;
using inferscope::testing::TestProcess;
using namespace std::chrono_literals;

// inferscope_process describes the inferscope binary run with `args`, stdout and stderr to files.
ProcessOptions inferscope_process(std::vector<std::string> args, std::filesystem::path out,
                                  std::filesystem::path err) {
  return {.binary = INFERSCOPE_BINARY, .args = std::move(args), .stdout_file = std::move(out),
          .stderr_file = std::move(err)};
}

// wait_for_match waits (bounded) for `pattern` in the process's stdout and returns its first group.
std::string wait_for_match(const TestProcess& process, const std::string& pattern, std::chrono::seconds limit) {
  const std::regex re(pattern);
  std::string found;
  inferscope::testing::wait_until(
      [&] {
        std::smatch m;
        const std::string text = process.stdout_text();
        if (!std::regex_search(text, m, re)) return false;
        found = m[1];
        return true;
      },
      limit, 50ms);
  return found;
}

class DrillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    using namespace inferscope::testing;
    ASSERT_TRUE(peers_installed({kPrometheus, kAlertmanager, kPromtool}));
    char pattern[] = "/tmp/inferscope-drill-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    up_.reset();
    serves_.clear();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  // start_serve runs one `inferscope serve --enable-admin` and returns its base URL.
  std::string start_serve(const std::string& name) {
    serves_.push_back(std::make_unique<TestProcess>(
        inferscope_process({"serve", "--port", "0", "--enable-admin", "--model", "m"}, dir_ / (name + ".out"),
                           dir_ / (name + ".err"))));
    const std::string port = wait_for_match(*serves_.back(), R"(listening on http://127\.0\.0\.1:(\d+))", 15s);
    EXPECT_FALSE(port.empty()) << serves_.back()->stderr_text();
    return port.empty() ? std::string() : "http://127.0.0.1:" + port;
  }
  // start runs `targets` serves and up over them; `alerts_yaml` is up's `alerts:` block and
  // `drill` turns up's drill robot on.
  void start(int targets, const std::string& alerts_yaml, bool drill) {
    std::ofstream config(dir_ / "up.yaml");
    config << "targets:\n";
    for (int i = 0; i < targets; ++i) {
      const std::string name = "serve" + std::string(i == 0 ? "" : "-" + std::to_string(i + 1));
      const std::string url = start_serve(name);
      ASSERT_FALSE(url.empty());
      if (i == 0) serve_url_ = url;
      config << "  - name: " << name << "\n    url: " << url << "/metrics\n    kind: inferscope\n";
    }
    config << "scrape_interval: 1s\nport: 0\nprometheus_port: 0\nalertmanager_port: 0\n"
           << "state_dir: " << (dir_ / "state").string() << "\n"
           << alerts_yaml << "alertmanager:\n  group_wait: 1s\n  group_interval: 1s\n"
           << "notifications:\n  max_attempts: 1\n"
           << (drill ? "drill:\n  enabled: true\n" : "");
    config.close();
    up_ = std::make_unique<TestProcess>(
        inferscope_process({"up", "--config", (dir_ / "up.yaml").string()}, dir_ / "up.out", dir_ / "up.err"));
    api_ = wait_for_match(*up_, R"(inferscope up: ready .* api=(http://127\.0\.0\.1:\d+))", 40s);
    ASSERT_FALSE(api_.empty()) << up_->stdout_text() << up_->stderr_text();
  }
  // drill runs `inferscope drill --api ... args` and returns its exit status (-1: hung).
  int drill(std::vector<std::string> args, std::string* out, std::string* err, std::chrono::seconds limit) {
    args.insert(args.begin(), {"drill", "--api", api_});
    TestProcess p(inferscope_process(args, dir_ / "drill.out", dir_ / "drill.err"));
    const int status = p.wait_exit(limit).value_or(-1);
    *out = p.stdout_text();
    if (err != nullptr) *err = p.stderr_text();
    return status;
  }

  std::filesystem::path dir_;
  std::vector<std::unique_ptr<TestProcess>> serves_;
  std::unique_ptr<TestProcess> up_;
  std::string api_, serve_url_;
};

// Every generated alert a target of kind inferscope gets, with `for: 1s`, a 30 s throughput
// baseline and a 20 s look-back for relay failures: what a drill needs to be short.
const char* kDrillAlerts =
    "alerts:\n  throughput_baseline_offset: 30s\n  notification_window: 20s\n  for:\n"
    "    InferscopeTargetDown: 1s\n    InferscopeLatencyMetricsAbsent: 1s\n    InferscopeE2eP99OverSlo: 1s\n"
    "    InferscopeE2eP95OverSlo: 1s\n    InferscopeTtftP95OverSlo: 1s\n    InferscopeTpotP95OverSlo: 1s\n"
    "    InferscopeRequestsWaiting: 1s\n    InferscopeErrorRatioHigh: 1s\n    InferscopeKvCacheFull: 1s\n"
    "    InferscopePreemptionsRising: 1s\n    InferscopeGpuMemoryHigh: 1s\n    InferscopeOutputThroughputHalved: 1s\n";

// Tests the full drill: every alert fires and resolves through the real scrape, rules,
// Alertmanager and relay, on two targets at once; the robot switch refuses bad bodies.
TEST_F(DrillTest, FullDrillFiresAndResolvesEveryAlert) {
  ASSERT_NO_FATAL_FAILURE(start(2, kDrillAlerts, true));
  auto bad = net::blocking_http_request("POST", api_ + "/api/drill", "{\"refuse\": 1}", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400) << bad->body;
  EXPECT_NE(bad->body.find("\"param\":\"refuse\""), std::string::npos) << bad->body;
  std::string out, err;
  const auto started = std::chrono::steady_clock::now();
  const int status = drill({"--json", "--fire-timeout", "90s", "--resolve-timeout", "90s"}, &out, &err, 200s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(status, 0) << out << err << up_->stdout_text();
  const auto json = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out;
  std::set<std::string> alerts;
  std::printf("full drill: %.0f s\n", seconds);
  const auto seconds_of = [](const nlohmann::json& v) { return v.is_number() ? v.get<double>() : -1.0; };
  bool every_row_ok = true;
  for (const auto& row : json["rows"]) {
    alerts.insert(row["alert"].get<std::string>());
    EXPECT_TRUE(row["fired"].get<bool>()) << row.dump();
    EXPECT_TRUE(row["resolved"].get<bool>()) << row.dump();
    every_row_ok = every_row_ok && row["fired"].get<bool>() && row["resolved"].get<bool>();
    std::printf("%-34s %-18s %-16s %-8s fired %5.1f s  resolved %5.1f s\n", row["alert"].get<std::string>().c_str(),
                row["fault"].get<std::string>().c_str(), row["how"].get<std::string>().c_str(),
                row["job"].get<std::string>().c_str(), seconds_of(row["seconds_to_notification"]),
                seconds_of(row["seconds_to_resolve"]));
  }
  if (!every_row_ok) {  // what the relay received, and up's event lines, to tell why
    auto history = net::blocking_http_request("GET", api_ + "/api/notifications");
    ADD_FAILURE() << (history ? history->body : history.error().message) << "\n" << up_->stdout_text() << err;
  }
  std::set<std::string> not_drilled;
  for (const auto& skip : json["skipped"]) not_drilled.insert(skip["alert"].get<std::string>());
  std::set<std::string> expected_not_drilled(std::begin(alerts::kEngineFeatureAlerts),
                                             std::end(alerts::kEngineFeatureAlerts));
  expected_not_drilled.insert(std::begin(alerts::kDisaggregationAlerts), std::end(alerts::kDisaggregationAlerts));
  EXPECT_EQ(not_drilled, expected_not_drilled) << out;
  std::set<std::string> expected(std::begin(alerts::kTargetAlerts), std::end(alerts::kTargetAlerts));
  for (const std::string& alert : expected_not_drilled) expected.erase(alert);
  expected.insert(alerts::kNotificationsFailing);
  EXPECT_EQ(alerts, expected) << out;
  EXPECT_TRUE(json["all_fired"].get<bool>());
  // The relay really failed to deliver to the refusing robot, and the drill turned the refusal off.
  EXPECT_NE(up_->stdout_text().find("notification failed channel=drill"), std::string::npos) << up_->stdout_text();
  auto robot = net::blocking_http_request("GET", api_ + "/api/drill");
  ASSERT_TRUE(robot);
  EXPECT_NE(robot->body.find("\"refusing\":false"), std::string::npos) << robot->body;
  auto faults = net::blocking_http_request("GET", serve_url_ + "/admin/faults");
  ASSERT_TRUE(faults);
  EXPECT_EQ(faults->body, "{}");
}

// Tests, on an up without the drill robot: an alert that cannot fire in time makes the drill exit
// 1 and say NO; /api/drill answers 404 with the OpenAI error JSON; Ctrl-C clears the injected
// fault and exits 2 with one line; an unknown --only and an unreachable --api exit 2.
TEST_F(DrillTest, NeverFiresInterruptAndBadInput) {
  ASSERT_NO_FATAL_FAILURE(start(1, "alerts:\n  for:\n    InferscopeErrorRatioHigh: 10m\n", false));
  std::string out, err;
  EXPECT_EQ(drill({"--only", "InferscopeErrorRatioHigh", "--fire-timeout", "8s", "--resolve-timeout", "5s"}, &out,
                  nullptr, 150s),
            1)
      << out;
  EXPECT_NE(out.find("InferscopeErrorRatioHigh           error_rate         fault            NO"), std::string::npos)
      << out;

  auto robot = net::blocking_http_request("GET", api_ + "/api/drill");
  ASSERT_TRUE(robot);
  EXPECT_EQ(robot->status, 404);
  EXPECT_NE(robot->body.find("set `drill: {enabled: true}`"), std::string::npos) << robot->body;
  EXPECT_EQ(drill({"--only", "notifications", "--fire-timeout", "5s"}, &out, &err, 60s), 1) << out << err;
  EXPECT_NE(out.find("InferscopeNotificationsFailing     not drilled: up runs without `drill: {enabled: true}`"),
            std::string::npos)
      << out;

  {
    TestProcess p(inferscope_process({"drill", "--api", api_, "--only", "error_rate", "--fire-timeout", "60s"},
                                     dir_ / "drill2.out", dir_ / "drill2.err"));
    ASSERT_FALSE(wait_for_match(p, "(drill: error_rate:)", 40s).empty()) << p.stdout_text() << p.stderr_text();
    std::string injected;
    EXPECT_TRUE(inferscope::testing::wait_until(
        [&] {
          auto faults = net::blocking_http_request("GET", serve_url_ + "/admin/faults");
          injected = faults ? faults->body : "GET /admin/faults failed";
          return injected.find("error_rate") != std::string::npos;
        },
        5s, 100ms))
        << injected;
    p.signal(SIGINT);
    EXPECT_EQ(p.wait_exit(20s).value_or(-1), 2) << p.stdout_text() << p.stderr_text();
    EXPECT_NE(p.stderr_text().find("inferscope drill: interrupted; the faults set on serve"), std::string::npos)
        << p.stderr_text();
    auto faults = net::blocking_http_request("GET", serve_url_ + "/admin/faults");
    ASSERT_TRUE(faults);
    EXPECT_EQ(faults->body.find("error_rate"), std::string::npos) << faults->body;  // cleared
  }

  EXPECT_EQ(drill({"--only", "NoSuchAlert"}, &out, &err, 60s), 2);
  EXPECT_EQ(err, "inferscope drill: cannot drill --only NoSuchAlert: no such alert or fault in the drill catalog\n");
  api_ = "http://127.0.0.1:1";
  EXPECT_EQ(drill({}, &out, &err, 60s), 2);
  EXPECT_EQ(err.rfind("inferscope drill: cannot read the status of inferscope up at --api http://127.0.0.1:1", 0), 0u)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace
}  // namespace inferscope::drill
