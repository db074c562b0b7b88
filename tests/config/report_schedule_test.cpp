// Tests of report_schedule.h and the `report:` section of up's config: daily_at, fixed-offset
// timezones, the next run time, and validation errors naming file:line:col and the key.
#include "config/report_schedule.h"

#include <gtest/gtest.h>

#include "config/stack_config.h"

namespace inferscope::config {
namespace {

using namespace std::chrono;

system_clock::time_point utc(int y, unsigned mo, unsigned d, int h, int mi, int s = 0) {
  return sys_days(year(y) / month(mo) / day(d)) + hours(h) + minutes(mi) + seconds(s);
}

TEST(ReportScheduleTest, ParsesDailyAtAndOffsets) {
  EXPECT_EQ(*parse_daily_at("09:00"), std::make_pair(9, 0));
  EXPECT_EQ(*parse_daily_at("23:59"), std::make_pair(23, 59));
  for (const char* bad : {"9:00", "24:00", "12:60", "0900", "09:00:00", "", "ab:cd"}) {
    EXPECT_FALSE(parse_daily_at(bad)) << bad;
  }
  EXPECT_EQ(*parse_utc_offset("UTC"), 0);
  EXPECT_EQ(*parse_utc_offset("+08:00"), 480);
  EXPECT_EQ(*parse_utc_offset("UTC+08:00"), 480);
  EXPECT_EQ(*parse_utc_offset("-05:30"), -330);
  EXPECT_EQ(*parse_utc_offset("+0545"), 345);
  EXPECT_EQ(*parse_utc_offset("UTC-03"), -180);
  for (const char* bad : {"Asia/Shanghai", "+15:00", "+8", "UTC+", "08:00", "+08:60"}) {
    EXPECT_FALSE(parse_utc_offset(bad)) << bad;
  }
  EXPECT_NE(parse_utc_offset("Asia/Shanghai").error().message.find("fixed offset such as +08:00"), std::string::npos);
}

// Tests the next run: later today, tomorrow when the time passed or is now, and across the date
// line of a positive and a negative offset.
TEST(ReportScheduleTest, NextRunTime) {
  ReportSchedule s;  // 09:00 UTC
  EXPECT_EQ(next_report_time(s, utc(2026, 11, 30, 8, 59, 59)), utc(2026, 11, 30, 9, 0));
  EXPECT_EQ(next_report_time(s, utc(2026, 11, 30, 9, 0)), utc(2026, 12, 1, 9, 0));
  EXPECT_EQ(next_report_time(s, utc(2026, 12, 31, 23, 0)), utc(2027, 1, 1, 9, 0));
  s.utc_offset_minutes = 480;  // 09:00 at +08:00 is 01:00 UTC
  EXPECT_EQ(next_report_time(s, utc(2026, 11, 30, 0, 30)), utc(2026, 11, 30, 1, 0));
  EXPECT_EQ(next_report_time(s, utc(2026, 11, 30, 20, 0)), utc(2026, 12, 1, 1, 0));  // 04:00 local next day
  s.utc_offset_minutes = -300;  // 09:00 at -05:00 is 14:00 UTC
  s.hour = 23;                  // 23:30 local is 04:30 UTC the next day
  s.minute = 30;
  EXPECT_EQ(next_report_time(s, utc(2026, 11, 30, 3, 0)), utc(2026, 11, 30, 4, 30));
  EXPECT_EQ(next_report_time(s, utc(2026, 11, 30, 5, 0)), utc(2026, 12, 1, 4, 30));
}

constexpr const char* kChannels =
    "notifications:\n"
    "  channels:\n"
    "    - {kind: dingtalk, name: oncall, url: {env: DT_URL}}\n"
    "    - {kind: email, name: mail, url: {env: SMTP_URL}, email_from: a@b.c, email_to: [d@e.f]}\n";

TEST(ReportScheduleTest, ConfigSection) {
  auto c = parse_stack_config(std::string(kChannels) + "report: {daily_at: \"07:30\", timezone: \"+08:00\", channels: [mail]}\n",
                              "up.yaml");
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_TRUE(c->report);
  EXPECT_EQ(c->report->hour, 7);
  EXPECT_EQ(c->report->minute, 30);
  EXPECT_EQ(c->report->utc_offset_minutes, 480);
  EXPECT_EQ(c->report->channels, std::vector<std::string>{"mail"});
  auto all = parse_stack_config(std::string(kChannels) + "report:\n  daily_at: 09:00\n", "up.yaml");
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(all->report->channels, (std::vector<std::string>{"oncall", "mail"}));
  EXPECT_EQ(all->report->timezone, "UTC");
  auto none = parse_stack_config(kChannels, "up.yaml");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->report);
}

TEST(ReportScheduleTest, ConfigErrorsNameTheKey) {
  const auto check = [](const std::string& yaml, const char* want) {
    auto c = parse_stack_config(yaml, "up.yaml");
    ASSERT_FALSE(c.ok()) << yaml;
    EXPECT_NE(c.error().message.find(want), std::string::npos) << "got: " << c.error().message << "\nwant: " << want;
  };
  const std::string ch = kChannels;
  check(ch + "report: {daily_at: \"9am\"}\n", "up.yaml:5:20: key 'report.daily_at': expected HH:MM");
  check(ch + "report:\n  daily_at: \"25:00\"\n", "up.yaml:6:13: key 'report.daily_at': expected HH:MM");
  check(ch + "report:\n  channels: [mail]\n", "up.yaml:6:3: key 'report.daily_at': missing");
  check(ch + "report:\n  daily_at: \"09:00\"\n  channels: [mail, pager]\n",
        "up.yaml:7:20: key 'report.channels[1]': unknown channel \"pager\" (notifications.channels has: oncall, mail)");
  check(ch + "report:\n  daily_at: \"09:00\"\n  timezone: Europe/Paris\n", "up.yaml:7:13: key 'report.timezone': timezone");
  check(ch + "report:\n  daily_at: \"09:00\"\n  every: 1d\n", "up.yaml:7:3: key 'report.every': unknown key");
  check("report: {daily_at: \"09:00\"}\n", "key 'report': no channel to send it to");
}

}  // namespace
}  // namespace inferscope::config
