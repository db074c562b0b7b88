// Tests the collector against real RQ 1.13 (python3-rq): one `rq worker` whose jobs call an
// in-process `serve`, jobs enqueued by RQ's own API. Depth, in-progress, oldest age, wait and run
// times and the finished count must agree with what the test enqueued and timed.
#include <gtest/gtest.h>

#include "queue/queue_test_support.h"

namespace inferscope::queue {
namespace {

using testing::eventually;
using testing::kHold;
using std::chrono::seconds;

constexpr int kJobs = 3;

// Tests that one worker busy with the first of three jobs shows as depth 2, in progress 1 and the
// second job's age, and that, once all ran, three waits and runs match the times the tasks wrote.
TEST(RqIntegrationTest, WorkerAndJobsAgreeWithWhatTheTestTimed) {
  testing::WorkerRig rig({.systems = {QueueSystem::kRq}});
  ASSERT_TRUE(rig.ok()) << rig.error();
  const metrics::LabelSubset queue = {{"queue", "default"}, {"system", "rq"}};
  testing::Worker worker("/usr/bin/rq", {"worker", "--url", rig.redis().url(), "--path", testing::kPythonDir, "default"},
                         "Listening on default");
  ASSERT_TRUE(eventually([&] { return rig.get("inferscope_queue_workers", {{"system", "rq"}, {"state", "idle"}}) == 1.0; },
                         seconds(15)));

  const auto jobs = testing::enqueue({"rq", rig.redis().url(), "default", std::to_string(kJobs), rig.serve_url(),
                                      std::to_string(kHold), rig.started_dir().string()});
  ASSERT_EQ(jobs.size(), static_cast<std::size_t>(kJobs));

  // While job 0 runs: two wait, one is in progress, the oldest waiting is job 1.
  ASSERT_TRUE(eventually([&] {
    return rig.get("inferscope_queue_depth", queue) == 2.0 && rig.get("inferscope_queue_in_progress", queue) == 1.0;
  }, seconds(15))) << worker.output();
  testing::expect_oldest_age(rig.get("inferscope_queue_oldest_age_seconds", queue), jobs[1].at, testing::kWorkerInterval);
  EXPECT_EQ(rig.get("inferscope_queue_workers", {{"system", "rq"}, {"state", "busy"}}), 1.0);

  ASSERT_TRUE(eventually([&] {
    return rig.get("inferscope_queue_jobs_total", {{"queue", "default"}, {"outcome", "finished"}}) == kJobs &&
           rig.get("inferscope_queue_run_seconds_count", queue) == kJobs;
  }, seconds(30))) << worker.output();
  EXPECT_EQ(rig.get("inferscope_queue_depth", queue), 0.0);
  EXPECT_EQ(rig.get("inferscope_queue_oldest_age_seconds", queue), 0.0);
  EXPECT_EQ(rig.get("inferscope_queue_in_progress", queue), 0.0);
  EXPECT_EQ(rig.get("inferscope_queue_wait_seconds_count", queue), kJobs);
  EXPECT_EQ(rig.get("inferscope_queue_jobs_total", {{"queue", "default"}, {"outcome", "failed"}}), 0.0);

  // Each wait is RQ's started_at - enqueued_at; the task starts a fork after started_at and the
  // producer reads its clock just after enqueued_at, so per job they differ by well under 0.5 s.
  double expected_wait = 0;
  for (const auto& job : jobs) {
    const auto start = testing::started_at(rig.started_dir(), job.index);
    ASSERT_TRUE(start.has_value()) << "job " << job.index << " never started";
    expected_wait += *start - job.at;
  }
  const auto wait_sum = rig.get("inferscope_queue_wait_seconds_sum", queue);
  ASSERT_TRUE(wait_sum.has_value());
  EXPECT_NEAR(*wait_sum, expected_wait, 0.5 * kJobs);
  EXPECT_GE(*wait_sum, 3 * kHold);  // job 1 waited one hold, job 2 two
  const auto run_sum = rig.get("inferscope_queue_run_seconds_sum", queue);
  ASSERT_TRUE(run_sum.has_value());
  EXPECT_GE(*run_sum, kHold * kJobs);
  EXPECT_LE(*run_sum, kHold * kJobs + 0.5 * kJobs);

  EXPECT_EQ(rig.served(), kJobs);  // every job reached serve through its OpenAI API
  const auto status = rig.collector().status();
  EXPECT_TRUE(status.up);
  ASSERT_EQ(status.queues.size(), 1u);
  EXPECT_TRUE(status.queues[0].absent.empty());  // RQ tells every quantity
}

}  // namespace
}  // namespace inferscope::queue
