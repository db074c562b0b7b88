// Tests of prom_duration.h: Prometheus' duration syntax.
#include "common/prom_duration.h"

#include <gtest/gtest.h>

namespace inferscope::common {
namespace {

using std::chrono::milliseconds;

// Tests that Prometheus durations parse largest unit first and print back the same way.
TEST(PromDurationTest, ParsesAndFormats) {
  const auto check = [](const char* text, long long want_ms) {
    auto d = parse_prom_duration(text);
    ASSERT_TRUE(d.ok()) << text << ": " << d.error().message;
    EXPECT_EQ(d->count(), want_ms) << text;
  };
  check("500ms", 500);
  check("5s", 5000);
  check("1m30s", 90000);
  check("15d", 15LL * 24 * 3600 * 1000);
  check("1h1ms", 3600001);
  for (const char* bad : {"", "0s", "5", "s", "1s1m", "1x", "1.5s", "-1s", "1s1s", "99999999999999999999d"}) {
    EXPECT_FALSE(parse_prom_duration(bad).ok()) << bad;
  }
  EXPECT_EQ(format_prom_duration(milliseconds(90000)), "1m30s");
  EXPECT_EQ(format_prom_duration(milliseconds(1500)), "1s500ms");
  EXPECT_EQ(format_prom_duration(milliseconds(15LL * 24 * 3600 * 1000)), "15d");
}

}  // namespace
}  // namespace inferscope::common
