// The daily report through `inferscope up` (INFERSCOPE_BINARY) with a real, empty Prometheus:
// POST /api/report/send builds the report (it says "no data") and queues it durably; the relay
// delivers it to a fake DingTalk robot, which checks the signature with the `openssl dgst` command
// line (independently of the relay's code), and to a fake generic webhook, which gets the HTML
// too; up prints "report sent to CHANNEL". Bad requests get OpenAI error JSON.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <stdlib.h>

#include <cstdio>
#include <fstream>

#include "fake_report_robots.h"
#include "net/blocking_client.h"
#include "up/child_process.h"
#include "up/stack_test_support.h"
#include "up_process.h"

namespace inferscope::up {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TempDir;
using testing::UpProcess;
using testing::wait_until;
using testing::FakeRobots;
using testing::kSecret;

// Tests POST /api/report/send end to end: queued, delivered to both robots (DingTalk signed and
// cut to its limit, the webhook with the HTML), event lines, and the error answers.
TEST(UpReportIntegrationTest, ReportQueuedAndDeliveredToRobots) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  TempDir dir;
  FakeRobots robots;
  ASSERT_TRUE(robots.server);
  ::setenv("INFERSCOPE_REPORT_DT_URL", robots.url("/dingtalk?access_token=tok").c_str(), 1);
  ::setenv("INFERSCOPE_REPORT_DT_SECRET", kSecret, 1);
  ::setenv("INFERSCOPE_REPORT_HOOK_URL", robots.url("/webhook").c_str(), 1);
  // The schedule is 12 hours away: only the route sends during the test.
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char daily_at[8];
  std::snprintf(daily_at, sizeof daily_at, "%02d:00", (tm.tm_hour + 12) % 24);
  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "targets:\n  - name: gone\n    url: http://127.0.0.1:1/metrics\n    kind: inferscope\n"
                        << "scrape_interval: 1s\n"
                           "notifications:\n  channels:\n"
                           "    - {name: ding, kind: dingtalk, url: {env: INFERSCOPE_REPORT_DT_URL}, "
                           "secret: {env: INFERSCOPE_REPORT_DT_SECRET}, max_message_bytes: 250}\n"
                           "    - {name: hook, kind: webhook, url: {env: INFERSCOPE_REPORT_HOOK_URL}}\n"
                        << "report: {daily_at: \"" << daily_at << "\", channels: [ding, hook]}\n";
  UpProcess up({"up", "--config", config.string(), "--port", "0", "--prometheus-port", "0", "--alertmanager-port", "0",
                "--state-dir", (dir.path() / "state").string()});
  const auto ready = up.wait_ready(60s);
  ASSERT_TRUE(ready) << up.output();
  const std::string send = ready->api + "/api/report/send";

  auto reply = net::blocking_http_request("POST", send, "{}", "application/json", 60s);
  ASSERT_TRUE(reply) << reply.error().message;
  ASSERT_EQ(reply->status, 200) << reply->body;
  const json queued = json::parse(reply->body);
  EXPECT_EQ(queued["status"], "queued");
  EXPECT_EQ(queued["channels"], json::array({"ding", "hook"}));
  EXPECT_EQ(queued["has_data"], false);
  EXPECT_TRUE(queued["title"].get<std::string>().starts_with("inferscope report ")) << reply->body;

  ASSERT_TRUE(wait_until([&] { return robots.body("dingtalk") && robots.body("webhook"); }, 30s)) << up.output();
  EXPECT_EQ(robots.bad_signatures.load(), 0);
  const json ding = *robots.body("dingtalk");
  EXPECT_EQ(ding["msgtype"], "markdown");
  EXPECT_EQ(ding["markdown"]["title"], queued["title"]);
  const std::string text = ding["markdown"]["text"];
  EXPECT_LE(text.size(), 250u);
  EXPECT_EQ(text.find('|'), std::string::npos) << "robots get the chat text, without tables\n" << text;
  EXPECT_NE(text.find("[truncated]"), std::string::npos) << text;
  EXPECT_NE(text.find("the full report is in the HTML version"), std::string::npos) << text;
  const json hook = *robots.body("webhook");
  EXPECT_EQ(hook["kind"], "report");
  EXPECT_EQ(hook["markdown"].get<std::string>().size(), queued["markdown_bytes"].get<std::size_t>());
  EXPECT_NE(hook["markdown"].get<std::string>().find("no data"), std::string::npos);
  EXPECT_NE(hook["html"].get<std::string>().find("<svg"), std::string::npos);
  EXPECT_TRUE(up.wait_line("inferscope up: report sent to ding (", 10s)) << up.output();
  EXPECT_TRUE(up.wait_line("inferscope up: report sent to hook (", 10s)) << up.output();

  // The schedule, the last report and each channel's delivery in GET /api/status and `up --status`.
  auto status_reply = net::blocking_http_request("GET", ready->api + "/api/status", "", "", 30s);
  ASSERT_TRUE(status_reply) << status_reply.error().message;
  ASSERT_EQ(status_reply->status, 200) << status_reply->body;
  const json report_status = json::parse(status_reply->body, nullptr, false).value("report", json());
  ASSERT_TRUE(report_status.is_object()) << status_reply->body;
  EXPECT_EQ(report_status["schedule"]["daily_at"], daily_at) << report_status;
  EXPECT_EQ(report_status["schedule"]["timezone"], "UTC") << report_status;
  EXPECT_EQ(report_status["schedule"]["channels"], json::array({"ding", "hook"})) << report_status;
  char next_hour[16];
  std::snprintf(next_hour, sizeof next_hour, "T%s:00Z", daily_at);
  EXPECT_TRUE(report_status["schedule"]["next_run"].get<std::string>().ends_with(next_hour)) << report_status;
  EXPECT_EQ(report_status["last"]["result"], "queued") << report_status;
  EXPECT_EQ(report_status["last"]["trigger"], "api") << report_status;
  EXPECT_EQ(report_status["last"]["title"], queued["title"]) << report_status;
  EXPECT_EQ(report_status["last"]["has_data"], false) << report_status;
  ASSERT_EQ(report_status["deliveries"].size(), 2u) << report_status;
  EXPECT_EQ(report_status["deliveries"][0]["channel"], "ding") << report_status;
  EXPECT_EQ(report_status["deliveries"][0]["result"], "sent") << report_status;
  EXPECT_EQ(report_status["deliveries"][1]["channel"], "hook") << report_status;
  const std::string api_port = ready->api.substr(ready->api.rfind(':') + 1);
  auto status_cmd = run_command(INFERSCOPE_BINARY, {"up", "--status", "--port", api_port}, 30s);
  ASSERT_TRUE(status_cmd.ok()) << status_cmd.error().message;
  const std::string status_text = status_cmd->output;
  EXPECT_NE(status_text.find(std::string("daily report:\n  daily at ") + daily_at + " UTC to ding, hook; next run "),
            std::string::npos) << status_text;
  EXPECT_NE(status_text.find("(api) queued to ding, hook: " + queued["title"].get<std::string>() + " (no data)"),
            std::string::npos) << status_text;
  EXPECT_NE(status_text.find("  ding             sent      at "), std::string::npos) << status_text;

  auto unknown = net::blocking_http_request("POST", send, R"({"channels":["pager"]})", "application/json", 10s);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 400);
  const json error = json::parse(unknown->body, nullptr, false);
  EXPECT_EQ(error["error"]["message"], "unknown channel \"pager\" (configured: ding, hook)") << unknown->body;
  EXPECT_EQ(error["error"]["param"], "channels");
  auto malformed = net::blocking_http_request("POST", send, "[", "application/json", 10s);
  ASSERT_TRUE(malformed);
  EXPECT_EQ(malformed->status, 400);
  EXPECT_TRUE(json::parse(malformed->body, nullptr, false).contains("error")) << malformed->body;

  ASSERT_EQ(::kill(up.process().pid(), SIGTERM), 0);
  EXPECT_TRUE(up.wait_line("inferscope up: stopped", 30s)) << up.output();
}

}  // namespace
}  // namespace inferscope::up
