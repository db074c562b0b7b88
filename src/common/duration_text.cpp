#include "common/duration_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace inferscope::common {
namespace {

struct Unit {
  std::string_view suffix;
  double to_ns;
};
// Longest suffixes first so "ms" is not read as "m" + junk.
constexpr Unit kUnits[] = {{"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};

const Unit* find_unit(std::string_view text) {
  for (const Unit& unit : kUnits) {
    if (text.size() > unit.suffix.size() && text.ends_with(unit.suffix)) {
      char before = text[text.size() - unit.suffix.size() - 1];
      if (unit.suffix == "s" && (before == 'm' || before == 'u' || before == 'n')) continue;
      return &unit;
    }
  }
  return nullptr;
}

}  // namespace

bool has_duration_unit(std::string_view text) { return find_unit(text) != nullptr; }

Result<std::chrono::nanoseconds> parse_duration(std::string_view text, std::string_view what) {
  const Unit* unit = find_unit(text);
  auto fail = [&](std::string_view cause) {
    return make_error(fmt::format("cannot parse duration from {}: {} ('{}')", what, cause, text));
  };
  if (unit == nullptr) return fail("expected a number with a unit ns, us, ms, s, m or h");
  std::string number(text.substr(0, text.size() - unit->suffix.size()));
  char* end = nullptr;
  double value = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(value)) {
    return fail("not a number");
  }
  if (value < 0) return fail("negative");
  double ns = value * unit->to_ns;
  if (ns > 1e18) return fail("too large");
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(ns)));
}

std::string format_seconds_readable(double seconds) {
  if (std::isnan(seconds)) return "n/a";
  const double magnitude = std::fabs(seconds);
  if (magnitude < 1e-3) return fmt::format("{:.0f} us", seconds * 1e6);
  if (magnitude < 1e-2) return fmt::format("{:.2f} ms", seconds * 1e3);
  if (magnitude < 1) return fmt::format("{:.0f} ms", seconds * 1e3);
  return fmt::format("{:.2f} s", seconds);
}

std::string format_number_readable(double value) {
  if (std::isnan(value)) return "n/a";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  const double magnitude = std::fabs(value);
  if (magnitude >= 100) return fmt::format("{:.0f}", value);
  if (magnitude >= 10) return fmt::format("{:.1f}", value);
  return fmt::format("{:.3g}", value);
}

std::string format_printf(const char* printf_format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, printf_format, value);
  return text;
}

}  // namespace inferscope::common
