// Tests the collector against a Redis Streams consumer group: a python consumer (XREADGROUP, a
// call to an in-process `serve`, XACK) and entries the test XADDs with server-assigned IDs. Depth
// is the group's lag, in progress its pending count, oldest age and wait come from entry IDs.
#include <gtest/gtest.h>

#include "queue/queue_test_support.h"

namespace inferscope::queue {
namespace {

using testing::eventually;
using testing::kHold;
using std::chrono::seconds;

constexpr int kEntries = 3;

// Tests lag, pending, oldest age, the wait of each entry at its first delivery, the finished
// count and consumers by state.
TEST(StreamIntegrationTest, ConsumerGroupAgreesWithWhatTheTestTimed) {
  testing::WorkerRig rig({.systems = {QueueSystem::kStreams}, .streams = {{.key = "jobs", .group = "workers"}}});
  ASSERT_TRUE(rig.ok()) << rig.error();
  const metrics::LabelSubset queue = {{"queue", "jobs"}, {"system", "streams"}};
  ASSERT_TRUE(rig.redis().run({"XGROUP", "CREATE", "jobs", "workers", "$", "MKSTREAM"}).is_string());
  testing::Worker consumer(testing::kPython,
                           {testing::kPythonDir + "/stream_consumer.py", rig.redis().url(), "jobs", "workers", "c1"},
                           "consuming");

  std::vector<double> added;
  for (int i = 0; i < kEntries; ++i) {
    const auto id = rig.redis().run({"XADD", "jobs", "*", "url", rig.serve_url(), "hold", std::to_string(kHold),
                                     "started", (rig.started_dir() / std::to_string(i)).string()});
    ASSERT_TRUE(id.is_string()) << id.str;
    added.push_back(testing::unix_now());
  }
  ASSERT_TRUE(eventually([&] {
    return rig.get("inferscope_queue_depth", queue) == 2.0 && rig.get("inferscope_queue_in_progress", queue) == 1.0;
  }, seconds(15))) << consumer.output();
  testing::expect_oldest_age(rig.get("inferscope_queue_oldest_age_seconds", queue), added[1], testing::kWorkerInterval);
  EXPECT_EQ(rig.get("inferscope_queue_workers", {{"system", "streams"}, {"state", "busy"}}), 1.0);

  ASSERT_TRUE(eventually([&] {
    return rig.get("inferscope_queue_jobs_total", {{"queue", "jobs"}, {"outcome", "finished"}}) == kEntries;
  }, seconds(30))) << consumer.output();
  EXPECT_EQ(rig.get("inferscope_queue_depth", queue), 0.0);
  EXPECT_EQ(rig.get("inferscope_queue_oldest_age_seconds", queue), 0.0);
  EXPECT_EQ(rig.get("inferscope_queue_workers", {{"system", "streams"}, {"state", "idle"}}), 1.0);
  // Every entry stayed pending for a whole hold, longer than an interval: each wait was observed.
  EXPECT_EQ(rig.get("inferscope_queue_wait_seconds_count", queue), kEntries);
  double expected_wait = 0;
  for (int i = 0; i < kEntries; ++i) {
    const auto start = testing::started_at(rig.started_dir(), i);
    ASSERT_TRUE(start.has_value());
    expected_wait += *start - added[i];
  }
  const auto wait_sum = rig.get("inferscope_queue_wait_seconds_sum", queue);
  ASSERT_TRUE(wait_sum.has_value());
  EXPECT_NEAR(*wait_sum, expected_wait, 0.3 * kEntries);
  EXPECT_FALSE(rig.get("inferscope_queue_run_seconds_count", {{"system", "streams"}}).has_value());
  EXPECT_EQ(rig.served(), kEntries);
}

}  // namespace
}  // namespace inferscope::queue
