// Tests the collector against real Celery 5.2 (python3-celery, Redis broker): one worker (one
// process, late acks, prefetch 1) whose task calls an in-process `serve`, tasks sent by Celery's
// own API on two priority steps, each carrying the opt-in inferscope_enqueued_at header. Depth (all
// priority lists), in progress (heartbeats), oldest age, and a SIGKILLed worker turning stale.
#include <gtest/gtest.h>

#include "queue/queue_test_support.h"

namespace inferscope::queue {
namespace {

using testing::eventually;
using std::chrono::seconds;

// Tests depth over the base and a priority list, in progress from the worker's heartbeats, the
// oldest age of the waiting tasks, wait/jobs absent with a reason, and a killed worker stale.
TEST(CeleryIntegrationTest, BrokerListsAndHeartbeatsAgreeWithWhatTheTestTimed) {
  testing::WorkerRig rig({.systems = {QueueSystem::kCelery}});
  ASSERT_TRUE(rig.ok()) << rig.error();
  const metrics::LabelSubset queue = {{"queue", "celery"}, {"system", "celery"}};
  testing::Worker worker(testing::kPython,
                         {"-m", "celery", "--broker", rig.redis().url(), "--workdir", testing::kPythonDir, "-A",
                          "celery_app", "worker", "--concurrency", "1", "--hostname", "w1@%h", "--without-mingle",
                          "--without-gossip", "--loglevel", "INFO", "--queues", "celery"},
                         "ready.");
  ASSERT_TRUE(eventually([&] {
    return rig.get("inferscope_queue_workers", {{"system", "celery"}, {"state", "idle"}}) == 1.0;
  }, seconds(20))) << worker.output();

  // Two tasks at priority 0 (the base list) and two at priority 6 (its own list); step 0 runs first.
  const auto jobs = testing::enqueue({"celery", rig.redis().url(), "celery", "4", rig.serve_url(), "3",
                                      rig.started_dir().string(), "0", "0", "6", "6"});
  ASSERT_EQ(jobs.size(), 4u);
  ASSERT_TRUE(eventually([&] {
    return rig.get("inferscope_queue_depth", queue) == 3.0 && rig.get("inferscope_queue_in_progress", queue) == 1.0;
  }, seconds(20))) << worker.output();
  EXPECT_EQ(rig.redis().run({"LLEN", std::string("celery\x06\x16") + "6"}).integer, 2);
  // Task 0 runs; task 1 (priority 0) is the oldest waiting.
  testing::expect_oldest_age(rig.get("inferscope_queue_oldest_age_seconds", queue), jobs[1].at, testing::kWorkerInterval);
  EXPECT_EQ(rig.get("inferscope_queue_workers", {{"system", "celery"}, {"state", "busy"}}), 1.0);

  // What Celery does not record is absent, with the reason in the status.
  EXPECT_FALSE(rig.get("inferscope_queue_wait_seconds_count", {{"system", "celery"}}).has_value());
  EXPECT_FALSE(rig.get("inferscope_queue_jobs_total", {{"system", "celery"}}).has_value());
  const auto status = rig.collector().status();
  ASSERT_EQ(status.queues.size(), 1u);
  EXPECT_EQ(status.queues[0].queue, "celery");
  std::string wait_reason;
  for (const auto& [quantity, why] : status.queues[0].absent) {
    if (quantity == Quantity::kWait) wait_reason = why;
  }
  EXPECT_NE(wait_reason.find("task events"), std::string::npos) << wait_reason;

  // A crashed worker sends no worker-offline: after 2 x freq (2 s) without heartbeat it is stale.
  worker.kill();
  ASSERT_TRUE(eventually([&] {
    return rig.get("inferscope_queue_workers", {{"system", "celery"}, {"state", "stale"}}) == 1.0;
  }, seconds(10)));
  EXPECT_EQ(rig.get("inferscope_queue_workers", {{"system", "celery"}, {"state", "busy"}}), 0.0);
  EXPECT_GE(rig.served(), 1.0);
}

}  // namespace
}  // namespace inferscope::queue
