// Tests the collector against a Redis Streams consumer group: a python consumer (XREADGROUP, a
// call to an in-process `serve`, XACK) and entries the test XADDs with server-assigned IDs. Depth
// is the group's lag, in progress its pending count, oldest age and wait come from entry IDs.
#include <gtest/gtest.h>

#include <chrono>

#include "queue/queue_collector.h"
#include "queue/queue_test_support.h"
#include "serve/serve_test_support.h"

namespace inferscope::queue {
namespace {

using testing::series;
using std::chrono::duration;
using std::chrono::system_clock;

constexpr auto kInterval = std::chrono::seconds(1);
constexpr double kHold = 2.0;
constexpr int kEntries = 3;

double unix_now() { return duration<double>(system_clock::now().time_since_epoch()).count(); }

// Tests lag, pending, oldest age, the wait of each entry at its first delivery, finished count
// and consumers by state.
TEST(StreamIntegrationTest, ConsumerGroupAgreesWithWhatTheTestTimed) {
  testing::RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  serve::testing::TestServer server(serve::testing::fast_options());
  ASSERT_TRUE(server.ok());
  testing::TempDir started;
  ASSERT_TRUE(redis.run({"XGROUP", "CREATE", "jobs", "workers", "$", "MKSTREAM"}).is_string());

  metrics::Registry registry;
  QueueCollector collector({.target_name = "jobs", .target = redis.target(), .systems = {QueueSystem::kStreams},
                            .streams = {{.key = "jobs", .group = "workers"}}, .interval = kInterval},
                           registry);
  collector.start();
  testing::Worker consumer(testing::kPython,
                           {testing::kPythonDir + "/stream_consumer.py", redis.url(), "jobs", "workers", "c1"},
                           "consuming");

  const std::string serve_url = "http://127.0.0.1:" + std::to_string(server.port());
  std::vector<double> added;
  for (int i = 0; i < kEntries; ++i) {
    const auto id = redis.run({"XADD", "jobs", "*", "url", serve_url, "hold", std::to_string(kHold), "started",
                               (started.path() / std::to_string(i)).string()});
    ASSERT_TRUE(id.is_string());
    added.push_back(unix_now());
  }

  ASSERT_TRUE(inferscope::testing::wait_until(
      [&] {
        return series(registry, "inferscope_queue_depth", {{"queue", "jobs"}, {"system", "streams"}}) == 2.0 &&
               series(registry, "inferscope_queue_in_progress", {{"queue", "jobs"}, {"system", "streams"}}) == 1.0;
      },
      std::chrono::seconds(15)))
      << consumer.output();
  const auto age = series(registry, "inferscope_queue_oldest_age_seconds", {{"queue", "jobs"}, {"system", "streams"}});
  ASSERT_TRUE(age.has_value());
  const double expected_age = unix_now() - added[1];
  EXPECT_LE(*age, expected_age + 0.2);
  EXPECT_GE(*age, expected_age - duration<double>(kInterval).count() - 0.2);
  EXPECT_EQ(series(registry, "inferscope_queue_workers", {{"system", "streams"}, {"state", "busy"}}), 1.0);

  ASSERT_TRUE(inferscope::testing::wait_until(
      [&] {
        return series(registry, "inferscope_queue_jobs_total",
                      {{"queue", "jobs"}, {"system", "streams"}, {"outcome", "finished"}}) == kEntries;
      },
      std::chrono::seconds(30)))
      << consumer.output();
  EXPECT_EQ(series(registry, "inferscope_queue_depth", {{"queue", "jobs"}, {"system", "streams"}}), 0.0);
  EXPECT_EQ(series(registry, "inferscope_queue_oldest_age_seconds", {{"queue", "jobs"}, {"system", "streams"}}), 0.0);
  EXPECT_EQ(series(registry, "inferscope_queue_workers", {{"system", "streams"}, {"state", "idle"}}), 1.0);
  // Every entry stayed pending for a whole hold, longer than an interval: each wait was observed.
  EXPECT_EQ(series(registry, "inferscope_queue_wait_seconds_count", {{"queue", "jobs"}, {"system", "streams"}}),
            kEntries);
  double expected_wait = 0;
  for (int i = 0; i < kEntries; ++i) {
    const auto start = testing::started_at(started.path(), i);
    ASSERT_TRUE(start.has_value());
    expected_wait += *start - added[i];
  }
  const auto wait_sum = series(registry, "inferscope_queue_wait_seconds_sum", {{"queue", "jobs"}, {"system", "streams"}});
  ASSERT_TRUE(wait_sum.has_value());
  EXPECT_NEAR(*wait_sum, expected_wait, 0.3 * kEntries);
  EXPECT_FALSE(series(registry, "inferscope_queue_run_seconds_count", {{"system", "streams"}}).has_value());
  EXPECT_EQ(serve::testing::metric(server.scrape(), "inferscope_request_duration_seconds_count"), kEntries);
  collector.stop();
}

}  // namespace
}  // namespace inferscope::queue
