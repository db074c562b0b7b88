// Tests QueueMetrics: absent stays distinct from 0, each system declares only what it can measure,
// error kinds start at 0, and the exposition is valid.
#include "queue/queue_metrics.h"

#include <gtest/gtest.h>

#include "support/registry_scrape.h"

namespace inferscope::queue {
namespace {

std::optional<double> value(const metrics::Registry& registry, std::string_view name, metrics::LabelSubset labels) {
  const auto exposition = inferscope::testing::scrape(registry);
  const auto* sample = metrics::find_sample(exposition, name, labels);
  if (sample == nullptr) return std::nullopt;
  return sample->value;
}

// Tests that a gauge set to nullopt disappears instead of reading 0.
TEST(QueueMetricsTest, UnknownRemovesTheSeries) {
  metrics::Registry registry;
  QueueMetrics m(registry, "jobs");
  m.set(QueueSystem::kRq, "default", Quantity::kOldestAge, 12.5);
  EXPECT_EQ(value(registry, "inferscope_queue_oldest_age_seconds", {{"queue", "default"}, {"system", "rq"}}), 12.5);
  m.set(QueueSystem::kRq, "default", Quantity::kOldestAge, std::nullopt);
  EXPECT_FALSE(value(registry, "inferscope_queue_oldest_age_seconds", {{"queue", "default"}}).has_value());
  m.set_workers(QueueSystem::kCelery, WorkerCounts{.busy = 1, .idle = 2, .stale = 0});
  EXPECT_EQ(value(registry, "inferscope_queue_workers", {{"system", "celery"}, {"state", "stale"}}), 0.0);
  m.set_workers(QueueSystem::kCelery, std::nullopt);
  EXPECT_FALSE(value(registry, "inferscope_queue_workers", {{"system", "celery"}}).has_value());
}

// Tests that declare() creates wait/run/jobs series only where the system can measure them.
TEST(QueueMetricsTest, DeclareFollowsTheKnowledgeTable) {
  metrics::Registry registry;
  QueueMetrics m(registry, "jobs");
  m.declare(QueueSystem::kRq, "a");
  m.declare(QueueSystem::kCelery, "b");
  m.declare(QueueSystem::kStreams, "c");
  m.declare(QueueSystem::kList, "d");
  EXPECT_EQ(value(registry, "inferscope_queue_wait_seconds_count", {{"queue", "a"}}), 0.0);
  EXPECT_EQ(value(registry, "inferscope_queue_run_seconds_count", {{"queue", "a"}}), 0.0);
  EXPECT_EQ(value(registry, "inferscope_queue_jobs_total", {{"queue", "a"}, {"outcome", "failed"}}), 0.0);
  EXPECT_FALSE(value(registry, "inferscope_queue_wait_seconds_count", {{"queue", "b"}}).has_value());
  EXPECT_FALSE(value(registry, "inferscope_queue_jobs_total", {{"queue", "b"}}).has_value());
  EXPECT_EQ(value(registry, "inferscope_queue_wait_seconds_count", {{"queue", "c"}}), 0.0);
  EXPECT_FALSE(value(registry, "inferscope_queue_run_seconds_count", {{"queue", "c"}}).has_value());
  EXPECT_EQ(value(registry, "inferscope_queue_jobs_total", {{"queue", "c"}, {"outcome", "finished"}}), 0.0);
  EXPECT_FALSE(value(registry, "inferscope_queue_jobs_total", {{"queue", "c"}, {"outcome", "failed"}}).has_value());
  for (const std::string_view name : {"inferscope_queue_wait_seconds_count", "inferscope_queue_jobs_total"}) {
    EXPECT_FALSE(value(registry, name, {{"queue", "d"}}).has_value()) << name;
  }
}

// Tests the collection's own series: up starts at 0, every error kind is exported at 0, a clock
// skew never makes a negative wait.
TEST(QueueMetricsTest, OwnSeriesStartAtZero) {
  metrics::Registry registry;
  QueueMetrics m(registry, "jobs");
  EXPECT_EQ(value(registry, "inferscope_queue_up", {{"target", "jobs"}}), 0.0);
  for (const CollectErrorKind kind : kAllErrorKinds) {
    EXPECT_EQ(value(registry, "inferscope_queue_collect_errors_total", {{"kind", error_kind_name(kind)}}), 0.0)
        << error_kind_name(kind);
  }
  m.observe_wait(QueueSystem::kRq, "a", -0.5);
  EXPECT_EQ(value(registry, "inferscope_queue_wait_seconds_sum", {{"queue", "a"}}), 0.0);
  m.set_up(true);
  EXPECT_EQ(value(registry, "inferscope_queue_up", {{"target", "jobs"}}), 1.0);
}

// Tests that every system × quantity has an entry and that what is absent says why.
TEST(QueueMetricsTest, KnowledgeTableIsComplete) {
  for (const QueueSystem system : kAllSystems) {
    EXPECT_EQ(parse_queue_system(system_name(system)), system);
    for (const Quantity quantity : kAllQuantities) {
      const auto why = absent_reason(system, quantity);
      if (why) {
        EXPECT_NE(*why, "not measured") << system_name(system) << " " << quantity_name(quantity);
      }
    }
  }
  EXPECT_FALSE(absent_reason(QueueSystem::kRq, Quantity::kWait).has_value());
  EXPECT_TRUE(absent_reason(QueueSystem::kCelery, Quantity::kWait).has_value());
  EXPECT_TRUE(absent_reason(QueueSystem::kList, Quantity::kOldestAge).has_value());
}

}  // namespace
}  // namespace inferscope::queue
