// Tests the collector against real RQ 1.13 (python3-rq): one `rq worker` whose jobs call an
// in-process `serve`, jobs enqueued by RQ's own API. Depth, in-progress, oldest age, wait and run
// times and the finished count must agree with what the test enqueued and timed.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "queue/queue_collector.h"
#include "queue/queue_test_support.h"
#include "serve/serve_test_support.h"

namespace inferscope::queue {
namespace {

using testing::series;
using std::chrono::duration;
using std::chrono::system_clock;

constexpr auto kInterval = std::chrono::seconds(1);
constexpr double kHold = 2.0;  // seconds each job stays in progress after calling serve
constexpr int kJobs = 3;

double unix_now() { return duration<double>(system_clock::now().time_since_epoch()).count(); }

// Tests that one worker busy with the first of three jobs shows as depth 2, in progress 1, an
// oldest age that grows from the second job's enqueue, and, once all ran, three waits and runs
// whose sums match the times the tasks recorded.
TEST(RqIntegrationTest, WorkerAndJobsAgreeWithWhatTheTestTimed) {
  testing::RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  serve::testing::TestServer server(serve::testing::fast_options());
  ASSERT_TRUE(server.ok());
  testing::TempDir started;

  metrics::Registry registry;
  QueueCollector collector({.target_name = "jobs", .target = redis.target(), .systems = {QueueSystem::kRq},
                            .interval = kInterval},
                           registry);
  collector.start();

  testing::Worker worker("/usr/bin/rq", {"worker", "--url", redis.url(), "--path", testing::kPythonDir, "default"},
                         "Listening on default");
  ASSERT_TRUE(inferscope::testing::wait_until(
      [&] { return series(registry, "inferscope_queue_workers", {{"system", "rq"}, {"state", "idle"}}) == 1.0; },
      std::chrono::seconds(15)));

  const std::string serve_url = "http://127.0.0.1:" + std::to_string(server.port());
  const auto jobs = testing::enqueue({"rq", redis.url(), "default", std::to_string(kJobs), serve_url,
                                      std::to_string(kHold), started.path().string()});
  ASSERT_EQ(jobs.size(), static_cast<std::size_t>(kJobs));

  // While job 0 runs: two wait, one is in progress, the oldest waiting is job 1.
  ASSERT_TRUE(inferscope::testing::wait_until(
      [&] {
        return series(registry, "inferscope_queue_depth", {{"queue", "default"}, {"system", "rq"}}) == 2.0 &&
               series(registry, "inferscope_queue_in_progress", {{"queue", "default"}, {"system", "rq"}}) == 1.0;
      },
      std::chrono::seconds(15)))
      << worker.output();
  const auto age = series(registry, "inferscope_queue_oldest_age_seconds", {{"queue", "default"}, {"system", "rq"}});
  ASSERT_TRUE(age.has_value());
  const double expected_age = unix_now() - jobs[1].at;
  // The gauge is at most one interval old, and job 1's enqueued_at is RQ's clock just before ours.
  EXPECT_LE(*age, expected_age + 0.2);
  EXPECT_GE(*age, expected_age - duration<double>(kInterval).count() - 0.2);
  EXPECT_EQ(series(registry, "inferscope_queue_workers", {{"system", "rq"}, {"state", "busy"}}), 1.0);

  ASSERT_TRUE(inferscope::testing::wait_until(
      [&] {
        return series(registry, "inferscope_queue_jobs_total",
                      {{"queue", "default"}, {"system", "rq"}, {"outcome", "finished"}}) == kJobs;
      },
      std::chrono::seconds(30)))
      << worker.output();
  ASSERT_TRUE(inferscope::testing::wait_until(
      [&] {
        return series(registry, "inferscope_queue_run_seconds_count", {{"queue", "default"}, {"system", "rq"}}) == kJobs;
      },
      std::chrono::seconds(5)));
  EXPECT_EQ(series(registry, "inferscope_queue_depth", {{"queue", "default"}, {"system", "rq"}}), 0.0);
  EXPECT_EQ(series(registry, "inferscope_queue_oldest_age_seconds", {{"queue", "default"}, {"system", "rq"}}), 0.0);
  EXPECT_EQ(series(registry, "inferscope_queue_wait_seconds_count", {{"queue", "default"}, {"system", "rq"}}), kJobs);
  EXPECT_EQ(series(registry, "inferscope_queue_jobs_total",
                   {{"queue", "default"}, {"system", "rq"}, {"outcome", "failed"}}),
            0.0);

  // Each wait is RQ's started_at - enqueued_at; the task starts a fork later than started_at and
  // the producer's clock reads just after enqueued_at, so per job the two differ by well under 0.5 s.
  double expected_wait = 0;
  for (const auto& job : jobs) {
    const auto start = testing::started_at(started.path(), job.index);
    ASSERT_TRUE(start.has_value()) << "job " << job.index << " never started";
    expected_wait += *start - job.at;
  }
  const auto wait_sum = series(registry, "inferscope_queue_wait_seconds_sum", {{"queue", "default"}, {"system", "rq"}});
  ASSERT_TRUE(wait_sum.has_value());
  EXPECT_NEAR(*wait_sum, expected_wait, 0.5 * kJobs);
  // Two jobs waited for at least one whole hold.
  EXPECT_GE(*wait_sum, kHold * 2 + kHold * 1 - 0.5);
  const auto run_sum = series(registry, "inferscope_queue_run_seconds_sum", {{"queue", "default"}, {"system", "rq"}});
  ASSERT_TRUE(run_sum.has_value());
  EXPECT_GE(*run_sum, kHold * kJobs);
  EXPECT_LE(*run_sum, kHold * kJobs + 0.5 * kJobs);

  // Every job reached serve through its OpenAI API.
  EXPECT_EQ(serve::testing::metric(server.scrape(), "inferscope_request_duration_seconds_count"), kJobs);

  const auto status = collector.status();
  EXPECT_TRUE(status.up);
  ASSERT_EQ(status.queues.size(), 1u);
  EXPECT_TRUE(status.queues[0].absent.empty());  // RQ tells every quantity
  collector.stop();
}

}  // namespace
}  // namespace inferscope::queue
