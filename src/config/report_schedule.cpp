#include "config/report_schedule.h"

#include <cctype>

namespace inferscope::config {
namespace {

bool two_digits(std::string_view s, int& value) {
  if (s.size() != 2 || !std::isdigit(static_cast<unsigned char>(s[0])) || !std::isdigit(static_cast<unsigned char>(s[1]))) {
    return false;
  }
  value = (s[0] - '0') * 10 + (s[1] - '0');
  return true;
}

}  // namespace

Result<std::pair<int, int>> parse_daily_at(std::string_view text) {
  int hour = 0, minute = 0;
  if (text.size() != 5 || text[2] != ':' || !two_digits(text.substr(0, 2), hour) || !two_digits(text.substr(3, 2), minute) ||
      hour > 23 || minute > 59) {
    return make_error("expected HH:MM between 00:00 and 23:59 (quote it in YAML: \"09:00\"), got \"" + std::string(text) +
                      "\"");
  }
  return std::pair{hour, minute};
}

Result<int> parse_utc_offset(std::string_view text) {
  std::string_view rest = text;
  if (rest == "UTC" || rest == "Z" || rest == "GMT") return 0;
  if (rest.starts_with("UTC")) rest.remove_prefix(3);
  const auto bad = [&] {
    return make_error("timezone \"" + std::string(text) +
                      "\": use UTC or a fixed offset such as +08:00 or UTC-05:30 (zone names are not supported)");
  };
  if (rest.empty() || (rest[0] != '+' && rest[0] != '-')) return bad();
  const int sign = rest[0] == '-' ? -1 : 1;
  rest.remove_prefix(1);
  int hours = 0, minutes = 0;
  if (rest.size() == 5 && rest[2] == ':') {
    if (!two_digits(rest.substr(0, 2), hours) || !two_digits(rest.substr(3, 2), minutes)) return bad();
  } else if (rest.size() == 4) {
    if (!two_digits(rest.substr(0, 2), hours) || !two_digits(rest.substr(2, 2), minutes)) return bad();
  } else if (rest.size() == 2) {
    if (!two_digits(rest, hours)) return bad();
  } else {
    return bad();
  }
  if (minutes > 59 || hours * 60 + minutes > 14 * 60) return bad();
  return sign * (hours * 60 + minutes);
}

std::chrono::system_clock::time_point next_report_time(const ReportSchedule& schedule,
                                                       std::chrono::system_clock::time_point now) {
  using namespace std::chrono;
  const auto offset = minutes(schedule.utc_offset_minutes);
  // Local wall time as if it were UTC; its day start, then the run time that day.
  const auto local = now + offset;
  const auto day = floor<days>(local);
  auto run = day + hours(schedule.hour) + minutes(schedule.minute);
  if (run <= local) run += days(1);
  return time_point_cast<system_clock::duration>(run - offset);
}

}  // namespace inferscope::config
