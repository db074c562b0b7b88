// Tests the sharded hot path under concurrency: exact totals, consistent snapshots during writes,
// thread-id recycling. Run under ASan/UBSan too (INFERSCOPE_SANITIZE=ON).
#include <inferscope/metrics/detail/thread_slot.h>
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/registry.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace inferscope::metrics {
namespace {

constexpr int kWriters = 4;
constexpr int kIterations = 100000;

HistogramFamily& latency_family(Registry& registry) {
  return registry.histogram({{.name = "lat_seconds", .help = "h", .label_names = {"worker"}},
                             default_latency_buckets()});
}

// Tests that writers on one shared series and on separate series lose no increment, while a
// concurrent scraper always sees count == +Inf bucket and never-decreasing counts.
TEST(MetricsConcurrencyTest, ExactTotalsAndConsistentScrapes) {
  Registry registry;
  auto& counters = registry.counter({.name = "ops_total", .help = "h", .label_names = {"worker"}});
  auto& histograms = latency_family(registry);
  Counter shared_counter = counters.with({"shared"});
  Histogram shared_histogram = histograms.with({"shared"});

  std::atomic<bool> stop{false};
  std::atomic<int> scrapes{0};
  std::atomic<int> violations{0};
  // The writers start once the scraper runs, and the scraper scrapes at least once, so scrapes
  // meet the writers however late a loaded machine schedules the scraper thread (it once began
  // only after the writers had finished, and none ran).
  std::atomic<bool> scraper_running{false};
  std::thread scraper([&] {
    scraper_running = true;
    std::uint64_t last_count = 0;
    double last_counter = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    do {
      const auto snap = shared_histogram.snapshot();
      if (snap.count != snap.cumulative_counts.back() || snap.count < last_count) ++violations;
      for (std::size_t i = 1; i < snap.cumulative_counts.size(); ++i) {
        if (snap.cumulative_counts[i] < snap.cumulative_counts[i - 1]) ++violations;
      }
      // Every observation is 0.002, so a consistent shard read gives sum == 0.002 * count.
      if (std::abs(snap.sum - 0.002 * static_cast<double>(snap.count)) > 1e-6 * static_cast<double>(snap.count) + 1e-9) {
        ++violations;
      }
      last_count = snap.count;
      const double c = shared_counter.value();
      if (c < last_counter) ++violations;
      last_counter = c;
      std::string text;
      render(registry, ExpositionFormat::kOpenMetrics100, text);
      ++scrapes;
    } while (!stop.load() && std::chrono::steady_clock::now() < deadline);
  });

  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      while (!scraper_running.load()) std::this_thread::yield();
      Counter own_counter = counters.with({std::to_string(t)});
      Histogram own_histogram = histograms.with({std::to_string(t)});
      for (int i = 0; i < kIterations; ++i) {
        shared_counter.inc();
        shared_histogram.observe(0.002);
        own_counter.add(0.5);
        own_histogram.observe(i % 2 == 0 ? 0.0001 : 100.0);
      }
    });
  }
  for (auto& writer : writers) writer.join();
  stop = true;
  scraper.join();

  EXPECT_EQ(violations.load(), 0);
  EXPECT_GT(scrapes.load(), 0);
  EXPECT_EQ(shared_counter.value(), static_cast<double>(kWriters) * kIterations);
  const auto snap = shared_histogram.snapshot();
  EXPECT_EQ(snap.count, static_cast<std::uint64_t>(kWriters) * kIterations);
  EXPECT_EQ(snap.cumulative_counts[0], 0u);  // 0.002 falls in the (0.001, 0.0025] bucket
  EXPECT_EQ(snap.cumulative_counts[1], snap.count);
  for (int t = 0; t < kWriters; ++t) {
    EXPECT_EQ(counters.with({std::to_string(t)}).value(), kIterations * 0.5);
    const auto own = histograms.with({std::to_string(t)}).snapshot();
    EXPECT_EQ(own.cumulative_counts.front(), static_cast<std::uint64_t>(kIterations / 2));
    EXPECT_EQ(own.count, static_cast<std::uint64_t>(kIterations));
  }
}

// Tests that more writer threads than shards (shared-shard fallback) still count exactly.
TEST(MetricsConcurrencyTest, MoreThreadsThanShardsCountExactly) {
  Registry registry;
  Counter counter = registry.counter({.name = "ops_total", .help = "h"}).with({});
  Histogram histogram = latency_family(registry).with({"x"});
  const int threads_count = static_cast<int>(detail::shard_count()) + 8;
  constexpr int kPerThread = 2000;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < threads_count; ++t) {
    threads.emplace_back([&] {
      ++ready;
      // All threads alive at once so ids exceed the shard count; bounded wait.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!go.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      for (int i = 0; i < kPerThread; ++i) {
        counter.inc();
        histogram.observe(1.5);
      }
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ready.load() < threads_count && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  go = true;
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(counter.value(), static_cast<double>(threads_count) * kPerThread);
  const auto snap = histogram.snapshot();
  EXPECT_EQ(snap.count, static_cast<std::uint64_t>(threads_count) * kPerThread);
  EXPECT_DOUBLE_EQ(snap.sum, 1.5 * threads_count * kPerThread);
}

// Tests that thread ids are given back when threads exit, so short-lived threads do not exhaust
// the shards.
TEST(MetricsConcurrencyTest, ThreadIdsAreRecycled) {
  Registry registry;
  Counter counter = registry.counter({.name = "ops_total", .help = "h"}).with({});
  counter.inc();  // this thread holds an id
  const std::uint32_t before = detail::live_thread_slots_for_test();
  for (int i = 0; i < 200; ++i) {
    std::thread([&] { counter.inc(); }).join();
  }
  EXPECT_EQ(detail::live_thread_slots_for_test(), before);
  EXPECT_EQ(counter.value(), 201);
}

}  // namespace
}  // namespace inferscope::metrics
