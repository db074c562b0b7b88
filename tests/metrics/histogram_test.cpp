// Tests for include/inferscope/metrics/histogram.h and buckets.h.
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/histogram.h>
#include <inferscope/metrics/registry.h>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace inferscope::metrics {
namespace {

HistogramFamily& make_family(Registry& registry, std::vector<double> buckets) {
  return registry.histogram({{.name = "h_seconds", .help = "h"}, std::move(buckets)});
}

// Tests that observations land in the first bucket whose bound is >= the value (bounds inclusive).
TEST(HistogramTest, BucketsAreUpperInclusive) {
  Registry registry;
  Histogram h = make_family(registry, {1, 2, 5}).with({});
  for (double v : {0.5, 1.0, 1.5, 2.0, 5.0, 5.5}) h.observe(v);
  const auto snap = h.snapshot();
  EXPECT_EQ(snap.cumulative_counts, (std::vector<std::uint64_t>{2, 4, 5, 6}));
  EXPECT_EQ(snap.count, 6u);
  EXPECT_DOUBLE_EQ(snap.sum, 15.5);
}

// Tests that NaN is dropped (not counted, sum untouched) and counted as rejected.
TEST(HistogramTest, NaNIsDroppedAndCounted) {
  Registry registry;
  Histogram h = make_family(registry, {1}).with({});
  h.observe(std::nan(""));
  h.observe(0.5);
  const auto snap = h.snapshot();
  EXPECT_EQ(snap.count, 1u);
  EXPECT_EQ(snap.sum, 0.5);
  std::string out;
  render(registry, ExpositionFormat::kPrometheusText004, out);
  EXPECT_NE(out.find("inferscope_metrics_values_rejected_total{family=\"h_seconds\",reason=\"nan\"} 1\n"),
            std::string::npos)
      << out;
}

// Tests that a negative observation goes to the lowest bucket and is added to the sum.
TEST(HistogramTest, NegativeGoesToLowestBucket) {
  Registry registry;
  Histogram h = make_family(registry, {0.1, 1}).with({});
  h.observe(-3);
  const auto snap = h.snapshot();
  EXPECT_EQ(snap.cumulative_counts, (std::vector<std::uint64_t>{1, 1, 1}));
  EXPECT_EQ(snap.sum, -3);
}

// Tests that +Inf lands in the +Inf bucket only.
TEST(HistogramTest, InfinityGoesToInfBucket) {
  Registry registry;
  Histogram h = make_family(registry, {1}).with({});
  h.observe(INFINITY);
  const auto snap = h.snapshot();
  EXPECT_EQ(snap.cumulative_counts, (std::vector<std::uint64_t>{0, 1}));
  EXPECT_TRUE(std::isinf(snap.sum));
}

// Tests that the SIMD linear count and binary search agree with a reference on random values,
// including values equal to bounds and odd bound counts (the scalar tail).
TEST(HistogramTest, LinearAndBinarySearchAgree) {
  std::mt19937_64 rng(42);
  for (std::size_t n : {0, 1, 2, 7, 20, 21, 32, 100}) {
    std::vector<double> bounds = n == 0 ? std::vector<double>{} : linear_buckets(-1, 0.37, n);
    std::uniform_real_distribution<double> dist(-3, 40);
    for (int i = 0; i < 2000; ++i) {
      const double v = (i % 5 == 0 && n > 0) ? bounds[static_cast<std::size_t>(i) % n] : dist(rng);
      std::size_t want = 0;
      while (want < n && bounds[want] < v) ++want;
      ASSERT_EQ(detail::bucket_index(bounds.data(), n, v), want) << "n=" << n << " v=" << v;
      ASSERT_EQ(detail::linear_bucket_index(bounds.data(), n, v), want) << "n=" << n << " v=" << v;
      ASSERT_EQ(detail::binary_bucket_index(bounds.data(), n, v), want) << "n=" << n << " v=" << v;
    }
  }
}

// Tests that the bucket generators produce the documented bounds and reject bad arguments.
TEST(HistogramTest, BucketGenerators) {
  EXPECT_EQ(exponential_buckets(1, 2, 4), (std::vector<double>{1, 2, 4, 8}));
  EXPECT_EQ(linear_buckets(0, 0.5, 3), (std::vector<double>{0, 0.5, 1}));
  const auto latency = default_latency_buckets();
  EXPECT_EQ(latency.size(), 20u);
  EXPECT_EQ(latency.front(), 0.001);
  EXPECT_EQ(latency.back(), 60.0);
  EXPECT_THROW(exponential_buckets(0, 2, 3), std::invalid_argument);
  EXPECT_THROW(exponential_buckets(1, 1, 3), std::invalid_argument);
  EXPECT_THROW(linear_buckets(0, 0, 3), std::invalid_argument);
  EXPECT_THROW(linear_buckets(0, 1, 0), std::invalid_argument);
  EXPECT_EQ(one_two_five_buckets(8192),
            (std::vector<double>{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000}));
  EXPECT_EQ(one_two_five_buckets(1), (std::vector<double>{1}));
  EXPECT_THROW(one_two_five_buckets(0.5), std::invalid_argument);
}

// Tests that a histogram with more than 32 bounds (binary search path) counts correctly.
TEST(HistogramTest, ManyBucketsCountCorrectly) {
  Registry registry;
  Histogram h = make_family(registry, exponential_buckets(0.001, 1.25, 60)).with({});
  for (int i = 0; i < 1000; ++i) h.observe(0.001 * std::pow(1.01, i));
  const auto snap = h.snapshot();
  EXPECT_EQ(snap.count, 1000u);
  EXPECT_EQ(snap.cumulative_counts.size(), 61u);
  EXPECT_EQ(snap.cumulative_counts.back(), 1000u);
  EXPECT_EQ(snap.cumulative_counts.front(), 1u);  // only 0.001 itself is <= 0.001
}

// Tests that a default-constructed histogram has only the +Inf bucket and is detached.
TEST(HistogramTest, DefaultHandleIsDetached) {
  Histogram h;
  h.observe(1);
  const auto snap = h.snapshot();
  ASSERT_EQ(snap.cumulative_counts.size(), 1u);
  EXPECT_GE(snap.count, 1u);
}

}  // namespace
}  // namespace inferscope::metrics
