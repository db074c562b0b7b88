#include <inferscope/metrics/sliding_window.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace inferscope::metrics {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// exact_quantile is the R-7 definition computed by sorting: the reference the window must match.
double exact_quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  double rank = q * static_cast<double>(values.size() - 1);
  auto lower = static_cast<std::size_t>(std::floor(rank));
  if (lower + 1 >= values.size()) return values[lower];
  return values[lower] + (values[lower + 1] - values[lower]) * (rank - static_cast<double>(lower));
}

// Tests that an empty window reports no statistics at all rather than zeros.
TEST(SlidingWindowTest, EmptyWindowIsNulloptNotZero) {
  ManualClock clock;
  SlidingWindow window({.max_samples = 8, .max_age = seconds(1)}, clock);
  EXPECT_EQ(window.size(), 0u);
  EXPECT_FALSE(window.quantile(0.5).has_value());
  EXPECT_FALSE(window.median().has_value());
  EXPECT_FALSE(window.mean().has_value());
  EXPECT_FALSE(window.min().has_value());
  EXPECT_FALSE(window.max().has_value());
}

// Tests textbook median and mean on small odd and even windows.
TEST(SlidingWindowTest, MedianAndMeanOfSmallWindows) {
  ManualClock clock;
  SlidingWindow window({.max_samples = 8, .max_age = seconds(10)}, clock);
  for (double v : {5.0, 1.0, 3.0}) window.add(v);
  EXPECT_EQ(window.median(), 3.0);
  EXPECT_EQ(window.mean(), 3.0);
  window.add(10.0);
  EXPECT_EQ(window.median(), 4.0);  // (3 + 5) / 2
  EXPECT_EQ(window.mean(), 4.75);
  EXPECT_EQ(window.min(), 1.0);
  EXPECT_EQ(window.max(), 10.0);
  EXPECT_EQ(window.quantile(0.25), 2.5);  // rank 0.75 between 1 and 3
}

// Tests that the count bound evicts the oldest sample, not the smallest or largest.
TEST(SlidingWindowTest, CountBoundEvictsOldest) {
  ManualClock clock;
  SlidingWindow window({.max_samples = 3, .max_age = Clock::Duration::max()}, clock);
  for (double v : {100.0, 1.0, 2.0, 3.0}) window.add(v);
  EXPECT_EQ(window.size(), 3u);
  EXPECT_EQ(window.max(), 3.0);  // 100 was oldest and is gone
  EXPECT_EQ(window.mean(), 2.0);
}

// Tests that samples expire by age on read, with the boundary at exactly max_age excluded.
TEST(SlidingWindowTest, AgeBoundExpiresOnRead) {
  ManualClock clock;
  SlidingWindow window({.max_samples = 100, .max_age = seconds(10)}, clock);
  window.add(1.0);
  clock.advance(seconds(5));
  window.add(2.0);
  clock.advance(milliseconds(4999));
  EXPECT_EQ(window.size(), 2u);
  clock.advance(milliseconds(1));  // first sample is now exactly 10 s old
  EXPECT_EQ(window.size(), 1u);
  EXPECT_EQ(window.median(), 2.0);
  clock.advance(seconds(5));
  EXPECT_EQ(window.size(), 0u);
  EXPECT_FALSE(window.mean().has_value());
}

// Tests that non-finite values are dropped and counted, and out-of-range q is rejected.
TEST(SlidingWindowTest, RejectsNonFiniteValuesAndBadQuantiles) {
  ManualClock clock;
  SlidingWindow window({.max_samples = 4, .max_age = seconds(1)}, clock);
  window.add(std::numeric_limits<double>::quiet_NaN());
  window.add(std::numeric_limits<double>::infinity());
  window.add(-std::numeric_limits<double>::infinity());
  window.add(7.0);
  EXPECT_EQ(window.rejected(), 3u);
  EXPECT_EQ(window.size(), 1u);
  EXPECT_EQ(window.mean(), 7.0);
  EXPECT_FALSE(window.quantile(-0.1).has_value());
  EXPECT_FALSE(window.quantile(1.1).has_value());
  EXPECT_FALSE(window.quantile(std::numeric_limits<double>::quiet_NaN()).has_value());
}

// Tests that construction with a zero bound is refused as setup misuse.
TEST(SlidingWindowTest, InvalidOptionsThrow) {
  ManualClock clock;
  EXPECT_THROW(SlidingWindow({.max_samples = 0, .max_age = seconds(1)}, clock), std::invalid_argument);
  EXPECT_THROW(SlidingWindow({.max_samples = 1, .max_age = seconds(0)}, clock), std::invalid_argument);
}

// Tests, against a brute-force model over many seeds, that every quantile and the mean are exact
// while samples with duplicates arrive, age out and are evicted by count.
TEST(SlidingWindowTest, MatchesBruteForceModel) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> small(0, 20);  // many duplicates
    std::lognormal_distribution<double> latency(0.0, 1.5);
    ManualClock clock;
    const SlidingWindowOptions options{.max_samples = 50, .max_age = milliseconds(400)};
    SlidingWindow window(options, clock);
    std::deque<std::pair<double, Clock::TimePoint>> model;
    for (int step = 0; step < 600; ++step) {
      double v = seed % 2 == 0 ? static_cast<double>(small(rng)) : latency(rng);
      clock.advance(milliseconds(small(rng)));
      window.add(v);
      model.emplace_back(v, clock.now());
      while (model.size() > options.max_samples) model.pop_front();
      while (!model.empty() && clock.now() - model.front().second >= options.max_age) model.pop_front();
      if (step % 7 != 0) continue;
      std::vector<double> values;
      for (auto& [value, at] : model) values.push_back(value);
      ASSERT_EQ(window.size(), values.size()) << "seed " << seed << " step " << step;
      for (double q : {0.0, 0.1, 0.5, 0.9, 0.99, 1.0}) {
        ASSERT_DOUBLE_EQ(*window.quantile(q), exact_quantile(values, q)) << "seed " << seed << " q " << q;
      }
      double mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
      ASSERT_NEAR(*window.mean(), mean, 1e-9 * std::max(1.0, std::fabs(mean)));
    }
  }
}

// Tests that the running mean does not drift after millions of add/evict cycles of mixed magnitude.
TEST(SlidingWindowTest, MeanDoesNotDriftOverLongRuns) {
  ManualClock clock;
  SlidingWindow window({.max_samples = 16, .max_age = Clock::Duration::max()}, clock);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> magnitude(-8, 8);
  for (int i = 0; i < 200000; ++i) window.add(std::pow(10.0, magnitude(rng)));
  for (int i = 0; i < 16; ++i) window.add(1.0);
  EXPECT_NEAR(*window.mean(), 1.0, 1e-12);
}

// Tests that clear() empties the window and that the window is usable from several threads at once.
TEST(SlidingWindowTest, ConcurrentWritersAndReaders) {
  SlidingWindow window({.max_samples = 256, .max_age = seconds(3600)});
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&window, t] {
      for (int i = 0; i < kPerThread; ++i) window.add(static_cast<double>(t * kPerThread + i));
    });
  }
  threads.emplace_back([&window] {
    for (int i = 0; i < 2000; ++i) {
      // Each call sees one consistent window, so the value must be one that some writer added.
      if (auto p = window.quantile(0.9)) {
        EXPECT_GE(*p, 0.0);
        EXPECT_LT(*p, 3.0 * kPerThread);
      }
    }
  });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(window.size(), 256u);
  window.clear();
  EXPECT_EQ(window.size(), 0u);
  EXPECT_FALSE(window.median().has_value());
}

}  // namespace
}  // namespace inferscope::metrics
