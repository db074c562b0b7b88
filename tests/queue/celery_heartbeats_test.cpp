// Tests how CeleryHeartbeats classifies workers from their events, with a hand-moved clock.
#include "queue/celery_heartbeats.h"

#include <gtest/gtest.h>

#include "queue/queue_payload.h"

namespace inferscope::queue {
namespace {

using Clock = CeleryHeartbeats::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

CeleryWorkerEvent beat(std::string host, long long active, std::string type = "worker-heartbeat") {
  return {.type = std::move(type), .hostname = std::move(host), .timestamp = 1, .freq = 2.0, .active = active,
          .processed = 0};
}

// Tests that nothing is claimed before the subscription has listened for the warm-up.
TEST(CeleryHeartbeatsTest, UnknownUntilListenedLongEnough) {
  CeleryHeartbeats heartbeats({}, milliseconds(100), {});
  const auto t0 = Clock::now();
  EXPECT_FALSE(heartbeats.snapshot_at(t0).has_value());
  heartbeats.mark_listening_since_for_test(t0);
  EXPECT_FALSE(heartbeats.snapshot_at(t0 + seconds(4)).has_value());
  const auto later = heartbeats.snapshot_at(t0 + seconds(5));
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(later->workers.busy + later->workers.idle + later->workers.stale, 0);
}

// Tests busy/idle by active tasks, stale after 2 x freq of silence, and removal on worker-offline.
TEST(CeleryHeartbeatsTest, BusyIdleStaleAndOffline) {
  CeleryHeartbeats heartbeats({}, milliseconds(100), {});
  const auto t0 = Clock::now();
  heartbeats.mark_listening_since_for_test(t0 - seconds(10));
  heartbeats.record(beat("a", 2), t0);
  heartbeats.record(beat("b", 0), t0);
  heartbeats.record(beat("c", 1), t0 - seconds(5));  // silent for 5 s > 2 x 2 s
  auto s = heartbeats.snapshot_at(t0 + seconds(1));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->workers.busy, 1);
  EXPECT_EQ(s->workers.idle, 1);
  EXPECT_EQ(s->workers.stale, 1);
  EXPECT_EQ(s->active, 2);
  heartbeats.record(beat("b", 0, "worker-offline"), t0 + seconds(1));
  s = heartbeats.snapshot_at(t0 + seconds(1));
  EXPECT_EQ(s->workers.idle, 0);
  // A worker silent for over an hour is forgotten, not stale forever.
  s = heartbeats.snapshot_at(t0 + std::chrono::hours(2));
  EXPECT_EQ(s->workers.stale, 0);
}

}  // namespace
}  // namespace inferscope::queue
