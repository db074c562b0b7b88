// The daily schedule of up's report (UpReport with a `report:` section), against a real, empty
// Prometheus: with the schedule's clock set half a second before daily_at, the report of the 24 h
// before daily_at is built, queued to the relay's outbox and delivered to a fake webhook, and the
// event line is printed. The clock is shifted, not waited for: the test takes about a second.
#include <gtest/gtest.h>

#include <fstream>
#include <mutex>

#include <inferscope/metrics/registry.h>

#include "fake_report_robots.h"
#include "relay/relay.h"
#include "up/stack_test_support.h"
#include "up/up_report.h"
#include "support/prometheus_process.h"

namespace inferscope::up {
namespace {

using namespace std::chrono;
using namespace std::chrono_literals;
using testing::FakeRobots;
using testing::TempDir;
using testing::wait_until;

TEST(UpReportScheduleIntegrationTest, FiresAtDailyAtForThePrevious24Hours) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  inferscope::testing::PrometheusProcess prometheus(inferscope::testing::scrape_config_for({"127.0.0.1:1"}));
  ASSERT_TRUE(prometheus.ok()) << prometheus.error();
  FakeRobots robots;
  ASSERT_TRUE(robots.server);
  TempDir dir;
  const std::string url_file = (dir.path() / "hook.url").string();
  std::ofstream(url_file) << robots.url("/webhook") << "\n";
  relay::RelayConfig config;
  config.database_path = (dir.path() / "relay.db").string();
  relay::ChannelConfig hook;
  hook.kind = relay::ChannelKind::kWebhook;
  hook.name = "hook";
  hook.url.file = url_file;
  config.channels.push_back(hook);
  metrics::Registry registry;
  auto relay = relay::Relay::open(config, registry);
  ASSERT_TRUE(relay) << relay.error().message;

  // Yesterday 09:00 UTC +08:00 is 01:00 UTC: the schedule's clock starts half a second before it.
  const auto run = floor<days>(system_clock::now()) - days(1) + hours(1);
  const auto offset = (run - 500ms) - system_clock::now();
  config::ReportSchedule schedule;
  schedule.hour = 9;
  schedule.minute = 0;
  schedule.utc_offset_minutes = 480;
  schedule.timezone = "+08:00";
  schedule.channels = {"hook"};
  std::mutex mutex;
  std::vector<std::string> lines;
  UpReport report(
      **relay, schedule, {"hook"}, dir.path().string(), [&] { return prometheus.url(); }, {},
      [&](const std::string& line) {
        std::lock_guard lock(mutex);
        lines.push_back(line);
      },
      [offset] { return system_clock::now() + offset; });
  (*relay)->start();
  report.start();
  ASSERT_TRUE(wait_until([&] { return robots.body("webhook").has_value(); }, 30s));
  report.stop();
  (*relay)->stop();

  const auto body = *robots.body("webhook");
  const std::time_t until = system_clock::to_time_t(time_point_cast<seconds>(run));
  const std::time_t since = until - 86400;
  char expected[96];
  std::tm a{}, b{};
  gmtime_r(&since, &a);
  gmtime_r(&until, &b);
  char from[32], to[32];
  std::strftime(from, sizeof from, "%Y-%m-%d %H:%M", &a);
  std::strftime(to, sizeof to, "%Y-%m-%d %H:%M", &b);
  std::snprintf(expected, sizeof expected, "inferscope report %s - %s UTC", from, to);
  EXPECT_EQ(body["title"], expected);
  EXPECT_EQ(body["kind"], "report");
  EXPECT_NE(body["markdown"].get<std::string>().find("no data"), std::string::npos);
  EXPECT_EQ(robots.count("webhook"), 1u);  // once: the next run is a day later
  std::lock_guard lock(mutex);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], std::string("inferscope up: report queued for hook: ") + expected + " (no data)");
}

}  // namespace
}  // namespace inferscope::up
