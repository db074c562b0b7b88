// Tests the collector's behaviour on faults and bad data against a real redis-server: unreachable
// and recovering, a wrong or missing password, malformed RQ job hashes, non-JSON Celery messages,
// binary keys, huge values, a queue that disappears, plain lists, a missing stream, and an RQ
// worker whose hash expired. Data is written with plain Redis commands, as each system lays it out.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>

#include "queue/queue_collector.h"
#include "queue/queue_test_support.h"

namespace inferscope::queue {
namespace {

using testing::series;

double errors(const metrics::Registry& registry, std::string_view kind) {
  return series(registry, "inferscope_queue_collect_errors_total", {{"kind", kind}}).value_or(-1);
}

QueueCollectorOptions options_for(const RedisTarget& target) {
  return {.target_name = "jobs", .target = target, .timeout = std::chrono::milliseconds(500)};
}

// Tests that an unreachable Redis gives up 0, an unreachable count, an error naming the target and
// one event line, and that the running collector recovers once Redis is there.
TEST(QueueCollectorIntegrationTest, UnreachableRedisIsDownThenRecovers) {
  const int port = testing::free_loopback_port();
  metrics::Registry registry;
  std::mutex mutex;
  std::vector<std::string> events;
  auto options = options_for({.host = "127.0.0.1", .port = port, .db = 0, .password = {}});
  options.interval = std::chrono::milliseconds(200);
  options.max_backoff = std::chrono::milliseconds(400);
  options.on_event = [&](const std::string& line) {
    std::lock_guard lock(mutex);
    events.push_back(line);
  };
  QueueCollector collector(options, registry);
  const auto failed = collector.collect_once();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("queue target jobs"), std::string::npos) << failed.error().message;
  EXPECT_NE(failed.error().message.find("127.0.0.1:" + std::to_string(port)), std::string::npos);
  EXPECT_EQ(series(registry, "inferscope_queue_up", {{"target", "jobs"}}), 0.0);
  EXPECT_EQ(errors(registry, "unreachable"), 1.0);
  EXPECT_FALSE(collector.status().up);
  EXPECT_EQ(collector.status().last_error, failed.error().message);
  // Nothing was collected: no queue series at all, not zeros.
  EXPECT_FALSE(series(registry, "inferscope_queue_depth", {}).has_value());

  collector.start();
  ASSERT_TRUE(inferscope::testing::wait_until([&] { return collector.status().consecutive_failures >= 3; },
                                              std::chrono::seconds(10)));
  testing::RedisServer redis({}, port);
  ASSERT_TRUE(redis.ok()) << redis.error();
  ASSERT_TRUE(inferscope::testing::wait_until([&] { return collector.status().up; }, std::chrono::seconds(10)));
  EXPECT_EQ(series(registry, "inferscope_queue_up", {{"target", "jobs"}}), 1.0);
  collector.stop();
  std::lock_guard lock(mutex);
  ASSERT_EQ(events.size(), 2u);  // one line when it went down (repeats of the same error are quiet), one on recovery
  EXPECT_NE(events[1].find("collecting again"), std::string::npos);
}

// Tests that a wrong password and a missing one each fail with one line naming the target,
// never containing the password, counted as auth errors.
TEST(QueueCollectorIntegrationTest, WrongPasswordIsOneClearLineWithoutTheSecret) {
  testing::RedisServer redis("s3cret-right");
  ASSERT_TRUE(redis.ok()) << redis.error();
  metrics::Registry registry;
  auto target = redis.target();
  target.password = "s3cret-wrong";
  QueueCollector collector(options_for(target), registry);
  const auto failed = collector.collect_once();
  ASSERT_FALSE(failed.ok());
  const std::string& message = failed.error().message;
  EXPECT_NE(message.find("queue target jobs"), std::string::npos) << message;
  EXPECT_NE(message.find("cannot authenticate"), std::string::npos) << message;
  EXPECT_EQ(message.find("s3cret"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(errors(registry, "auth"), 1.0);

  metrics::Registry registry_without;
  target.password.clear();
  QueueCollector without(options_for(target), registry_without);
  const auto refused = without.collect_once();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("NOAUTH"), std::string::npos) << refused.error().message;
  EXPECT_EQ(errors(registry_without, "auth"), 1.0);

  metrics::Registry registry_right;
  QueueCollector right(options_for(redis.target()), registry_right);
  EXPECT_TRUE(right.collect_once().ok());
}

// Tests that bad data is skipped and counted by kind while the rest is still collected.
TEST(QueueCollectorIntegrationTest, BadDataIsSkippedAndCountedByKind) {
  testing::RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  // RQ: a queue whose oldest job has a malformed enqueued_at, one with a huge one, a binary name.
  redis.run({"SADD", "rq:queues", "rq:queue:broken", "rq:queue:huge", std::string("rq:queue:\xff\xfe", 11)});
  redis.run({"RPUSH", "rq:queue:broken", "j1"});
  redis.run({"HSET", "rq:job:j1", "enqueued_at", "yesterday", "status", "queued"});
  redis.run({"RPUSH", "rq:queue:huge", "j2"});
  redis.run({"HSET", "rq:job:j2", "enqueued_at", std::string(2 << 20, '7')});
  // An RQ worker killed with SIGKILL: its set member stays, its hash expired.
  redis.run({"SADD", "rq:workers", "rq:worker:ghost"});
  // Celery: a message that is not JSON at the pop end of the default queue.
  redis.run({"SADD", "_kombu.binding.celery", std::string("celery\x06\x16\x06\x16") + "celery"});
  redis.run({"RPUSH", "celery", "this is not json"});

  metrics::Registry registry;
  QueueCollector collector(options_for(redis.target()), registry);
  ASSERT_TRUE(collector.collect_once().ok()) << collector.status().last_error;
  ASSERT_TRUE(collector.collect_once().ok()) << collector.status().last_error;

  EXPECT_EQ(errors(registry, "malformed_timestamp"), 2.0);  // once per collection
  EXPECT_EQ(errors(registry, "huge_value"), 2.0);
  EXPECT_EQ(errors(registry, "binary_key"), 2.0);
  EXPECT_EQ(errors(registry, "malformed_message"), 2.0);
  EXPECT_EQ(series(registry, "inferscope_queue_up", {{"target", "jobs"}}), 1.0);
  // Depth is still known; the age is absent, not 0.
  EXPECT_EQ(series(registry, "inferscope_queue_depth", {{"queue", "broken"}, {"system", "rq"}}), 1.0);
  EXPECT_FALSE(series(registry, "inferscope_queue_oldest_age_seconds", {{"queue", "broken"}}).has_value());
  EXPECT_FALSE(series(registry, "inferscope_queue_oldest_age_seconds", {{"queue", "huge"}}).has_value());
  EXPECT_EQ(series(registry, "inferscope_queue_depth", {{"queue", "celery"}, {"system", "celery"}}), 1.0);
  EXPECT_FALSE(series(registry, "inferscope_queue_oldest_age_seconds", {{"queue", "celery"}}).has_value());
  EXPECT_EQ(series(registry, "inferscope_queue_workers", {{"system", "rq"}, {"state", "stale"}}), 1.0);
  // Celery workers are unknown until the heartbeat listener (started by start()) has listened.
  EXPECT_FALSE(series(registry, "inferscope_queue_workers", {{"system", "celery"}}).has_value());

  const auto status = collector.status();
  bool broken_reason = false;
  for (const auto& queue : status.queues) {
    for (const auto& [quantity, why] : queue.absent) {
      if (queue.queue == "broken" && quantity == Quantity::kOldestAge) {
        broken_reason = why.find("enqueued_at") != std::string::npos;
      }
    }
  }
  EXPECT_TRUE(broken_reason);
}

// Tests that a queue Redis deleted when it emptied reads depth 0 (not an error), that plain lists
// by name and by pattern report depth only, and that a configured stream that does not exist is
// depth 0.
TEST(QueueCollectorIntegrationTest, DisappearedQueuesAreZeroAndPlainListsHaveDepthOnly) {
  testing::RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  redis.run({"SADD", "rq:queues", "rq:queue:gone"});
  redis.run({"RPUSH", "rq:queue:gone", "j1"});
  redis.run({"HSET", "rq:job:j1", "enqueued_at", "2026-12-01T16:07:04.146997Z"});
  redis.run({"RPUSH", "plain:jobs", "a", "b", "c"});
  redis.run({"RPUSH", "batch:1", "a"});
  redis.run({"RPUSH", "batch:2", "a", "b"});
  redis.run({"SET", "batch:not-a-list", "x"});

  metrics::Registry registry;
  auto options = options_for(redis.target());
  options.systems = {QueueSystem::kRq, QueueSystem::kList, QueueSystem::kStreams};
  options.lists = {"plain:jobs", "batch:*"};
  options.streams = {{.key = "nothing", .group = "g"}};
  QueueCollector collector(options, registry);
  ASSERT_TRUE(collector.collect_once().ok()) << collector.status().last_error;
  EXPECT_EQ(series(registry, "inferscope_queue_depth", {{"queue", "gone"}, {"system", "rq"}}), 1.0);
  EXPECT_GT(series(registry, "inferscope_queue_oldest_age_seconds", {{"queue", "gone"}}).value_or(0), 0.0);

  redis.run({"LPOP", "rq:queue:gone"});  // Redis deletes the emptied list
  ASSERT_TRUE(collector.collect_once().ok());
  EXPECT_EQ(series(registry, "inferscope_queue_depth", {{"queue", "gone"}, {"system", "rq"}}), 0.0);
  EXPECT_EQ(series(registry, "inferscope_queue_oldest_age_seconds", {{"queue", "gone"}}), 0.0);
  EXPECT_EQ(errors(registry, "redis_error"), 0.0);

  EXPECT_EQ(series(registry, "inferscope_queue_depth", {{"queue", "plain:jobs"}, {"system", "list"}}), 3.0);
  EXPECT_EQ(series(registry, "inferscope_queue_depth", {{"queue", "batch:1"}, {"system", "list"}}), 1.0);
  EXPECT_EQ(series(registry, "inferscope_queue_depth", {{"queue", "batch:2"}, {"system", "list"}}), 2.0);
  EXPECT_FALSE(series(registry, "inferscope_queue_depth", {{"queue", "batch:not-a-list"}}).has_value());
  EXPECT_FALSE(series(registry, "inferscope_queue_oldest_age_seconds", {{"system", "list"}}).has_value());
  EXPECT_FALSE(series(registry, "inferscope_queue_workers", {{"system", "list"}}).has_value());
  EXPECT_EQ(series(registry, "inferscope_queue_depth", {{"queue", "nothing"}, {"system", "streams"}}), 0.0);

  const auto status = collector.status();
  bool list_reason = false;
  for (const auto& queue : status.queues) {
    for (const auto& [quantity, why] : queue.absent) {
      if (queue.queue == "plain:jobs" && quantity == Quantity::kOldestAge) list_reason = why == "a plain list holds no timestamps";
    }
  }
  EXPECT_TRUE(list_reason);
}

}  // namespace
}  // namespace inferscope::queue
