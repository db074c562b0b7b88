#include "loadgen/duration_text.h"

#include <gtest/gtest.h>

namespace inferscope::loadgen {
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

}  // namespace
}  // namespace inferscope::loadgen
