// Tests of AlertEventTracker (up_routes.h): one event line per alert status change.
#include <gtest/gtest.h>

#include "up/up_routes.h"

namespace inferscope::up {
namespace {

std::string body(const char* status, const char* fingerprint, const char* name = "InferscopeErrorRatioHigh") {
  return std::string(R"({"version":"4","status":")") + status + R"(","alerts":[{"status":")" + status +
         R"(","labels":{"alertname":")" + name + R"(","job":"sim","model":"m","severity":"critical"},"fingerprint":")" +
         fingerprint + R"("}]})";
}

// Tests that repeats print nothing, each change prints one line, and the watchdog never prints.
TEST(AlertEventTrackerTest, PrintsStatusChangesOnly) {
  AlertEventTracker tracker;
  auto lines = tracker.lines(body("firing", "f1"));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "inferscope up: alert firing InferscopeErrorRatioHigh job=sim model=m severity=critical");
  EXPECT_TRUE(tracker.lines(body("firing", "f1")).empty());
  EXPECT_EQ(tracker.lines(body("resolved", "f1")).size(), 1u);
  EXPECT_EQ(tracker.lines(body("firing", "f1")).size(), 1u);  // fires again after a resolve
  EXPECT_EQ(tracker.lines(body("firing", "f2")).size(), 1u);  // another series of the same alert
  EXPECT_TRUE(tracker.lines(body("firing", "w", "InferscopeWatchdog")).empty());
  EXPECT_TRUE(tracker.lines("not json").empty());
  EXPECT_TRUE(tracker.lines(R"({"alerts":[1,{"labels":2}]})").empty());
}

}  // namespace
}  // namespace inferscope::up
