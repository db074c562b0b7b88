// `inferscope report --send CHANNEL --config FILE` (INFERSCOPE_BINARY) against a real, empty
// Prometheus from Debian: the report (which says "no data") reaches a fake DingTalk robot that
// checks the signature with `openssl dgst`; the one stdout line names the channel and the bytes; a
// robot that is down gives a one-line error naming the channel after 3 attempts, exit != 0; an
// unknown channel lists the configured ones. The fired alerts come from the config's state_dir.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "fake_report_robots.h"
#include "relay/outbox.h"
#include "up/child_process.h"
#include "up/stack_test_support.h"
#include "support/prometheus_process.h"

namespace inferscope::up {
namespace {

using namespace std::chrono_literals;
using testing::FakeRobots;
using testing::kSecret;
using testing::TempDir;

TEST(ReportSendIntegrationTest, SendsThroughConfiguredChannels) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  inferscope::testing::PrometheusProcess prometheus(inferscope::testing::scrape_config_for({"127.0.0.1:1"}));
  ASSERT_TRUE(prometheus.ok()) << prometheus.error();
  FakeRobots robots;
  ASSERT_TRUE(robots.server);
  TempDir dir;
  ::setenv("INFERSCOPE_SEND_DT_URL", robots.url("/dingtalk?access_token=tok").c_str(), 1);
  ::setenv("INFERSCOPE_SEND_DT_SECRET", kSecret, 1);
  ::setenv("INFERSCOPE_SEND_DOWN_URL", robots.url("/down").c_str(), 1);
  // An alert the relay of that up recorded an hour ago: the report reads it from its state_dir.
  std::filesystem::create_directories(dir.path() / "state");
  {
    auto box = relay::Outbox::open((dir.path() / "state" / "relay.db").string(), 2s);
    ASSERT_TRUE(box) << box.error().message;
    const auto now = std::chrono::system_clock::now();
    relay::Notification n;
    n.receiver = "relay";
    n.status = "firing";
    n.group_key = "{}:{alertname=\"ReportSendTestAlert\"}";
    n.alerts.push_back(relay::Alert{.status = "firing",
                                    .labels = {{"alertname", "ReportSendTestAlert"}},
                                    .starts_at = relay::format_rfc3339(now - 1h),
                                    .ends_at = "0001-01-01T00:00:00Z",
                                    .fingerprint = "fp-report-send"});
    const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
    ASSERT_TRUE((*box)->store(n, relay::dedupe_key(n), {}, now_ms, 0));
  }
  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "targets:\n  - url: http://127.0.0.1:1/metrics\n"
                        << "state_dir: " << (dir.path() / "state").string() << "\n"
                           "notifications:\n  channels:\n"
                           "    - {name: ding, kind: dingtalk, url: {env: INFERSCOPE_SEND_DT_URL}, "
                           "secret: {env: INFERSCOPE_SEND_DT_SECRET}}\n"
                           "    - {name: down, kind: slack, url: {env: INFERSCOPE_SEND_DOWN_URL}}\n";
  const auto report = [&](const std::string& channel) {
    auto r = run_command(INFERSCOPE_BINARY,
                         {"report", "--prometheus", prometheus.url(), "--send", channel, "--config", config.string()},
                         60s);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : CommandResult{};
  };

  const CommandResult sent = report("ding");
  // Exit 2: the period has no data (the report says so and is still sent).
  EXPECT_EQ(sent.exit.exit_code, 2) << sent.output;
  ASSERT_EQ(robots.bad_signatures.load(), 0);
  const auto body = robots.body("dingtalk");
  ASSERT_TRUE(body) << sent.output;
  const std::string text = (*body)["markdown"]["text"];
  EXPECT_TRUE((*body)["markdown"]["title"].get<std::string>().starts_with("inferscope report ")) << *body;
  EXPECT_NE(text.find("no data"), std::string::npos) << text;
  EXPECT_NE(text.find("ReportSendTestAlert"), std::string::npos) << "the alert history of --config's state_dir\n" << text;
  EXPECT_EQ(text.find('|'), std::string::npos) << "robots get the chat text, without tables\n" << text;
  const std::string line = "report sent to ding (" + std::to_string(robots.last_body_size("dingtalk")) + " bytes)\n";
  EXPECT_NE(sent.output.find(line), std::string::npos) << sent.output;
  EXPECT_EQ(sent.output.find("## inferscope report"), std::string::npos) << "the report itself is not printed";

  const CommandResult failed = report("down");
  EXPECT_EQ(failed.exit.exit_code, 3) << failed.output;
  EXPECT_NE(failed.output.find("inferscope report: channel down: HTTP 500"), std::string::npos) << failed.output;
  EXPECT_NE(failed.output.find("(after 3 attempts)"), std::string::npos) << failed.output;
  EXPECT_EQ(robots.count("down"), 3u);

  const CommandResult unknown = report("pager");
  EXPECT_EQ(unknown.exit.exit_code, 3) << unknown.output;
  EXPECT_NE(unknown.output.find("inferscope report: unknown channel \"pager\" (configured: ding, down)"),
            std::string::npos)
      << unknown.output;

  auto no_config = run_command(INFERSCOPE_BINARY, {"report", "--prometheus", prometheus.url(), "--send", "ding"}, 30s);
  ASSERT_TRUE(no_config);
  EXPECT_NE(no_config->exit.exit_code, 0);
  EXPECT_NE(no_config->output.find("--config"), std::string::npos) << no_config->output;
}

}  // namespace
}  // namespace inferscope::up
