// Tests the collector against real Celery 5.2 (python3-celery, Redis broker): one worker (one
// process, late acks, prefetch 1) whose task calls an in-process `serve`, tasks sent by Celery's
// own API on two priority steps, each carrying the opt-in inferscope_enqueued_at header. Depth (all
// priority lists), in progress (heartbeats), oldest age, and a SIGKILLed worker turning stale.
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

double unix_now() { return duration<double>(system_clock::now().time_since_epoch()).count(); }

// Tests depth over the base and a priority list, in progress from the worker's heartbeats, the
// oldest age of the waiting tasks, wait/run/jobs absent with a reason, and a killed worker stale.
TEST(CeleryIntegrationTest, BrokerListsAndHeartbeatsAgreeWithWhatTheTestTimed) {
  testing::RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  serve::testing::TestServer server(serve::testing::fast_options());
  ASSERT_TRUE(server.ok());
  testing::TempDir started;

  metrics::Registry registry;
  QueueCollector collector({.target_name = "jobs", .target = redis.target(), .systems = {QueueSystem::kCelery},
                            .interval = kInterval},
                           registry);
  collector.start();

  testing::Worker worker(testing::kPython,
                         {"-m", "celery", "--broker", redis.url(), "--workdir", testing::kPythonDir, "-A", "celery_app",
                          "worker", "--concurrency", "1", "--hostname", "w1@%h", "--without-mingle", "--without-gossip",
                          "--loglevel", "INFO", "--queues", "celery"},
                         "ready.");
  ASSERT_TRUE(inferscope::testing::wait_until(
      [&] { return series(registry, "inferscope_queue_workers", {{"system", "celery"}, {"state", "idle"}}) == 1.0; },
      std::chrono::seconds(20)))
      << worker.output();

  // Two tasks at priority 0 (the base list) and two at priority 6 (its own list); step 0 runs first.
  const std::string serve_url = "http://127.0.0.1:" + std::to_string(server.port());
  const auto jobs = testing::enqueue({"celery", redis.url(), "celery", "4", serve_url, "3", started.path().string(),
                                      "0", "0", "6", "6"});
  ASSERT_EQ(jobs.size(), 4u);

  ASSERT_TRUE(inferscope::testing::wait_until(
      [&] {
        return series(registry, "inferscope_queue_depth", {{"queue", "celery"}, {"system", "celery"}}) == 3.0 &&
               series(registry, "inferscope_queue_in_progress", {{"queue", "celery"}, {"system", "celery"}}) == 1.0;
      },
      std::chrono::seconds(20)))
      << worker.output();
  EXPECT_EQ(redis.run({"LLEN", std::string("celery\x06\x16") + "6"}).integer, 2);
  // Task 0 runs; task 1 (priority 0) is the oldest waiting.
  const auto age = series(registry, "inferscope_queue_oldest_age_seconds", {{"queue", "celery"}, {"system", "celery"}});
  ASSERT_TRUE(age.has_value());
  const double expected_age = unix_now() - jobs[1].at;
  EXPECT_LE(*age, expected_age + 0.2);
  EXPECT_GE(*age, expected_age - duration<double>(kInterval).count() - 0.2);
  EXPECT_EQ(series(registry, "inferscope_queue_workers", {{"system", "celery"}, {"state", "busy"}}), 1.0);

  // What Celery does not record is absent, with the reason in the status.
  EXPECT_FALSE(series(registry, "inferscope_queue_wait_seconds_count", {{"system", "celery"}}).has_value());
  EXPECT_FALSE(series(registry, "inferscope_queue_jobs_total", {{"system", "celery"}}).has_value());
  const auto status = collector.status();
  ASSERT_EQ(status.queues.size(), 1u);
  EXPECT_EQ(status.queues[0].queue, "celery");
  std::string wait_reason;
  for (const auto& [quantity, why] : status.queues[0].absent) {
    if (quantity == Quantity::kWait) wait_reason = why;
  }
  EXPECT_NE(wait_reason.find("task events"), std::string::npos) << wait_reason;

  // A crashed worker sends no worker-offline: after 2 x freq (2 s) without heartbeat it is stale.
  worker.kill();
  ASSERT_TRUE(inferscope::testing::wait_until(
      [&] { return series(registry, "inferscope_queue_workers", {{"system", "celery"}, {"state", "stale"}}) == 1.0; },
      std::chrono::seconds(10)));
  EXPECT_EQ(series(registry, "inferscope_queue_workers", {{"system", "celery"}, {"state", "busy"}}), 0.0);
  EXPECT_GE(serve::testing::metric(server.scrape(), "inferscope_request_duration_seconds_count"), 1.0);
  collector.stop();
}

}  // namespace
}  // namespace inferscope::queue
