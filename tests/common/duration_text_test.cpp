#include "common/duration_text.h"

#include <gtest/gtest.h>

#include <cmath>

namespace inferscope::common {
namespace {

// Tests that every unit parses to the right number of nanoseconds.
TEST(DurationTextTest, ParsesUnits) {
  auto check = [](const char* text, std::int64_t want_ns) {
    auto r = parse_duration(text, "--x");
    ASSERT_TRUE(r) << text << ": " << r.error().message;
    EXPECT_EQ(r->count(), want_ns) << text;
  };
  check("5ns", 5);
  check("7us", 7000);
  check("250ms", 250000000);
  check("1.5s", 1500000000);
  check("2m", 120000000000);
  check("1h", 3600000000000);
}

// Tests that unit-less, negative and non-numeric texts are refused with the flag named.
TEST(DurationTextTest, RefusesBadInput) {
  for (const char* bad : {"", "10", "s", "-1s", "abcs", "1.2.3ms", "5x"}) {
    auto r = parse_duration(bad, "--warmup");
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("--warmup"), std::string::npos);
  }
  EXPECT_TRUE(has_duration_unit("3ms"));
  EXPECT_FALSE(has_duration_unit("300"));
}

// Tests that seconds print with the unit their size calls for, the forms reports and the
// doctor show ("900 ms", "1.20 s").
TEST(DurationTextTest, FormatsSecondsReadably) {
  auto check = [](double seconds, const char* want) { EXPECT_EQ(format_seconds_readable(seconds), want) << seconds; };
  check(0.000012, "12 us");
  check(0.005, "5.00 ms");
  check(0.012, "12 ms");
  check(0.9, "900 ms");
  check(1.2, "1.20 s");
  check(2.1, "2.10 s");
  check(-0.25, "-250 ms");
  check(std::nan(""), "n/a");
}

// Tests that plain numbers keep about three significant digits and name what is not a number.
TEST(DurationTextTest, FormatsNumbersReadably) {
  auto check = [](double value, const char* want) { EXPECT_EQ(format_number_readable(value), want) << value; };
  check(1234.4, "1234");
  check(12.34, "12.3");
  check(1.234, "1.23");
  check(5, "5");
  check(0.0123, "0.0123");
  check(std::nan(""), "n/a");
  check(HUGE_VAL, "inf");
}

}  // namespace
}  // namespace inferscope::common
