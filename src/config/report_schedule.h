// File: report_schedule.h
// ReportSchedule: the `report:` section of up's config — build the periodic report (the last
// 24 h) every day at daily_at in a fixed-offset timezone and queue it, durably, to the relay's
// channels. Example:
//   auto t = parse_daily_at("09:00");  auto tz = parse_utc_offset("+08:00");
//   auto next = next_report_time(schedule, std::chrono::system_clock::now());
// Pure value types and functions, thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/common/result.h>

namespace inferscope::config {

struct ReportSchedule {
  int hour = 9;                       // daily_at "HH:MM", local to the timezone below
  int minute = 0;
  std::vector<std::string> channels;  // names from notifications.channels (all of them when unset)
  std::string timezone = "UTC";       // as written: "UTC", "UTC+08:00", "+08:00", "-05:30"
  int utc_offset_minutes = 0;         // the timezone's fixed offset east of UTC
  std::chrono::hours period{24};      // the report covers [run - period, run)
};

// parse_daily_at reads "HH:MM" (00:00..23:59, two digits each) into {hour, minute}.
Result<std::pair<int, int>> parse_daily_at(std::string_view text);

// parse_utc_offset reads "UTC", "Z", "UTC+08:00", "+08:00", "-05:30", "+0800" into minutes east
// of UTC (|offset| <= 14 h). IANA names ("Asia/Shanghai") are refused: daylight-saving rules are
// not available, so the error asks for the fixed offset.
Result<int> parse_utc_offset(std::string_view text);

// next_report_time returns the first daily_at (in the schedule's offset) strictly after `now`.
std::chrono::system_clock::time_point next_report_time(const ReportSchedule& schedule,
                                                       std::chrono::system_clock::time_point now);

}  // namespace inferscope::config
