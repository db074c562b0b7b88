// Tests of PauseSchedule: periodic stall windows on the model clock.
#include "serve/engine/pause_schedule.h"

#include <gtest/gtest.h>

namespace inferscope::serve {
namespace {

// Tests that with no pause set work is never stretched or held.
TEST(PauseScheduleTest, InactiveChangesNothing) {
  PauseSchedule s;
  EXPECT_DOUBLE_EQ(s.stretched_end(5, 2), 7);
  EXPECT_DOUBLE_EQ(s.release_time(5), 5);
}

// Tests windows [10 + 5k, 10 + 5k + 1): the first opens when set.
TEST(PauseScheduleTest, WindowsOpenWhenSetAndRepeat) {
  PauseSchedule s;
  s.set(PeriodicPause{1000, 5}, 10);
  EXPECT_DOUBLE_EQ(s.release_time(10), 11);
  EXPECT_DOUBLE_EQ(s.release_time(10.5), 11);
  EXPECT_DOUBLE_EQ(s.release_time(11), 11);
  EXPECT_DOUBLE_EQ(s.release_time(14.9), 14.9);
  EXPECT_DOUBLE_EQ(s.release_time(15.25), 16);
  EXPECT_DOUBLE_EQ(s.release_time(9), 9);  // before the fault was set
}

// Tests that a step is stretched by every window it meets, including one it starts inside.
TEST(PauseScheduleTest, StretchesStepsOverWindows) {
  PauseSchedule s;
  s.set(PeriodicPause{1000, 5}, 0);
  EXPECT_NEAR(s.stretched_end(2, 1), 3, 1e-12);        // between windows
  EXPECT_NEAR(s.stretched_end(4.5, 1), 6.5, 1e-12);    // meets the window at 5
  EXPECT_NEAR(s.stretched_end(0.5, 0.1), 1.1, 1e-12);  // starts inside the first window
  EXPECT_NEAR(s.stretched_end(1, 12), 15, 1e-12);      // crosses windows at 5, 10; ends as 15 opens
  EXPECT_NEAR(s.stretched_end(1, 12.5), 16.5, 1e-12);  // ... and crosses the one at 15
  EXPECT_NEAR(s.stretched_end(0.5, 0), 1, 1e-12);      // a free step waits out the pause
  // Setting the same pause keeps the phase; a new one restarts it.
  s.set(PeriodicPause{1000, 5}, 3);
  EXPECT_DOUBLE_EQ(s.release_time(3), 3);
  s.set(PeriodicPause{2000, 5}, 3);
  EXPECT_DOUBLE_EQ(s.release_time(3), 5);
  s.set(PeriodicPause{}, 3);
  EXPECT_FALSE(s.active());
}

}  // namespace
}  // namespace inferscope::serve
