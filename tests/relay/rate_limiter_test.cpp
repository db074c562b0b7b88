#include "relay/rate_limiter.h"

#include <gtest/gtest.h>

namespace inferscope::relay {
namespace {

using namespace std::chrono_literals;
using TimePoint = RollingRateLimiter::TimePoint;

// Tests that 20 sends fill a rolling minute and the 21st waits until the oldest leaves it.
TEST(RateLimiterTest, TwentyPerRollingMinute) {
  RollingRateLimiter limiter(20, 60s);
  const TimePoint t0 = TimePoint(1'000'000s);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(limiter.allowed(t0 + i * 1s)) << i;
    limiter.record(t0 + i * 1s);
  }
  EXPECT_FALSE(limiter.allowed(t0 + 20s));
  EXPECT_EQ(limiter.next_allowed(t0 + 20s), t0 + 60s);
  EXPECT_FALSE(limiter.allowed(t0 + 59s));
  EXPECT_TRUE(limiter.allowed(t0 + 60s));
  limiter.record(t0 + 60s);
  EXPECT_FALSE(limiter.allowed(t0 + 60s));
  EXPECT_EQ(limiter.next_allowed(t0 + 60s), t0 + 61s);
}

// Tests that a pause refuses sends until it ends, even on an unlimited channel.
TEST(RateLimiterTest, PauseAfterThrottle) {
  RollingRateLimiter limiter(0, 60s);
  const TimePoint t0 = TimePoint(1'000'000s);
  EXPECT_TRUE(limiter.allowed(t0));
  limiter.pause_until(t0 + 600s);
  EXPECT_FALSE(limiter.allowed(t0 + 599s));
  EXPECT_EQ(limiter.next_allowed(t0), t0 + 600s);
  EXPECT_TRUE(limiter.allowed(t0 + 600s));
}

}  // namespace
}  // namespace inferscope::relay
