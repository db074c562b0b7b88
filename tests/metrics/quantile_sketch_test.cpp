#include <inferscope/metrics/quantile_sketch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace inferscope::metrics {
namespace {

constexpr double kQuantiles[] = {0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0};

// exact_rank_value is the DDSketch reference: the 0-based order statistic floor(q * (n - 1)).
double exact_rank_value(const std::vector<double>& sorted, double q) {
  return sorted[static_cast<std::size_t>(std::floor(q * static_cast<double>(sorted.size() - 1)))];
}

// expect_within_alpha checks every quantile of `sketch` against the exact order statistics of
// `values`. The tiny slack covers the last-bit rounding of ln() at a bin boundary.
void expect_within_alpha(const QuantileSketch& sketch, std::vector<double> values, const std::string& what) {
  std::sort(values.begin(), values.end());
  const double alpha = sketch.relative_accuracy();
  for (double q : kQuantiles) {
    const double want = exact_rank_value(values, q);
    const double got = sketch.quantile(q).value();
    ASSERT_LE(std::fabs(got - want), alpha * std::fabs(want) * (1 + 1e-9) + 1e-300)
        << what << " q=" << q << ": got " << got << "; want " << want << " +-" << alpha * 100 << "%";
  }
}

using Generator = std::function<double(std::mt19937_64&)>;

struct Distribution {
  const char* name;
  Generator draw;
};

std::vector<Distribution> skewed_distributions() {
  return {
      {"lognormal", [](std::mt19937_64& rng) { return std::lognormal_distribution<double>(-3.0, 1.2)(rng); }},
      {"pareto",
       [](std::mt19937_64& rng) {
         // Pareto(x_m = 1 ms, shape 1.2): heavy tail reaching seconds.
         double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
         return 0.001 / std::pow(1.0 - u, 1.0 / 1.2);
       }},
      {"bimodal",
       [](std::mt19937_64& rng) {
         // 90 % fast cache hits around 5 ms, 10 % slow path around 2 s.
         bool slow = std::bernoulli_distribution(0.1)(rng);
         return std::lognormal_distribution<double>(slow ? std::log(2.0) : std::log(0.005), 0.3)(rng);
       }},
      {"signed",
       [](std::mt19937_64& rng) {
         // Deltas around zero, some exactly zero: exercises both stores and the zero count.
         int kind = std::uniform_int_distribution<int>(0, 9)(rng);
         if (kind == 0) return 0.0;
         double m = std::lognormal_distribution<double>(0.0, 2.0)(rng);
         return kind % 2 == 0 ? -m : m;
       }},
  };
}

// Tests the relative-error guarantee against exact order statistics on skewed data, many seeds.
TEST(QuantileSketchTest, QuantilesWithinRelativeAccuracyOnSkewedData) {
  for (double alpha : {0.01, 0.05}) {
    for (const auto& dist : skewed_distributions()) {
      for (unsigned seed = 1; seed <= 25; ++seed) {
        std::mt19937_64 rng(seed);
        QuantileSketch sketch({.relative_accuracy = alpha});
        std::vector<double> values;
        const int n = 200 + static_cast<int>(seed) * 397;
        for (int i = 0; i < n; ++i) {
          double v = dist.draw(rng);
          values.push_back(v);
          sketch.add(v);
        }
        ASSERT_FALSE(sketch.collapsed());
        ASSERT_EQ(sketch.count(), values.size());
        expect_within_alpha(sketch, values, std::string(dist.name) + " seed " + std::to_string(seed));
      }
    }
  }
}

// Tests that merging sketches of parts gives exactly the sketch of the union (same quantiles).
TEST(QuantileSketchTest, MergeEqualsSketchOfUnion) {
  for (std::size_t max_bins : {std::size_t{2048}, std::size_t{40}}) {  // 40 forces collapsing
    for (unsigned seed = 1; seed <= 20; ++seed) {
      std::mt19937_64 rng(seed);
      auto dists = skewed_distributions();
      QuantileSketch whole({.max_bins = max_bins});
      QuantileSketch merged({.max_bins = max_bins});
      std::vector<double> all;
      for (int part = 0; part < 4; ++part) {
        QuantileSketch piece({.max_bins = max_bins});
        const auto& dist = dists[(seed + static_cast<unsigned>(part)) % dists.size()];
        for (int i = 0; i < 500; ++i) {
          double v = dist.draw(rng) * std::pow(10.0, part - 2);  // parts at different scales
          piece.add(v);
          whole.add(v);
          all.push_back(v);
        }
        ASSERT_TRUE(merged.merge(piece).ok());
      }
      ASSERT_EQ(merged.count(), whole.count());
      ASSERT_EQ(merged.min(), whole.min());
      ASSERT_EQ(merged.max(), whole.max());
      ASSERT_EQ(merged.bin_count(), whole.bin_count());
      ASSERT_EQ(merged.collapsed(), whole.collapsed());
      ASSERT_NEAR(merged.sum(), whole.sum(), 1e-9 * std::fabs(whole.sum()) + 1e-12);
      for (double q : kQuantiles) {
        ASSERT_EQ(merged.quantile(q), whole.quantile(q)) << "seed " << seed << " max_bins " << max_bins << " q " << q;
      }
      if (max_bins == 2048) expect_within_alpha(merged, all, "merged seed " + std::to_string(seed));
    }
  }
}

// Tests that sketches with different accuracy refuse to merge and stay unchanged.
TEST(QuantileSketchTest, MergeWithDifferentAccuracyIsAnError) {
  QuantileSketch a({.relative_accuracy = 0.01});
  QuantileSketch b({.relative_accuracy = 0.02});
  a.add(1.0);
  b.add(100.0);
  Result<void> result = a.merge(b);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("cannot merge quantile sketch"), std::string::npos) << result.error().message;
  EXPECT_EQ(a.count(), 1u);
  EXPECT_EQ(a.max(), 1.0);
}

// Tests that merging a sketch into itself doubles every count.
TEST(QuantileSketchTest, SelfMergeDoubles) {
  QuantileSketch sketch;
  for (double v : {1.0, 2.0, 3.0, 4.0}) sketch.add(v);
  ASSERT_TRUE(sketch.merge(sketch).ok());
  EXPECT_EQ(sketch.count(), 8u);
  EXPECT_EQ(sketch.sum(), 20.0);
  EXPECT_NEAR(*sketch.quantile(0.5), 2.0, 0.02 * 2.0);  // rank floor(0.5*7)=3 -> second value 2
}

// Tests that an empty sketch reports nothing rather than zeros, and bad q is rejected.
TEST(QuantileSketchTest, EmptyIsNulloptAndBadQuantileRejected) {
  QuantileSketch sketch;
  EXPECT_FALSE(sketch.quantile(0.5).has_value());
  EXPECT_FALSE(sketch.min().has_value());
  EXPECT_FALSE(sketch.max().has_value());
  EXPECT_EQ(sketch.count(), 0u);
  sketch.add(3.0);
  EXPECT_FALSE(sketch.quantile(-0.01).has_value());
  EXPECT_FALSE(sketch.quantile(1.01).has_value());
  EXPECT_FALSE(sketch.quantile(std::numeric_limits<double>::quiet_NaN()).has_value());
  EXPECT_EQ(sketch.quantile(0.5), 3.0);  // single value: clamped to exact min == max
}

// Tests zero, tiny and negative values, non-finite rejection, and count/sum/min/max bookkeeping.
TEST(QuantileSketchTest, ZeroNegativeAndNonFinite) {
  QuantileSketch sketch;
  for (double v : {-5.0, 0.0, 1e-320, 2.0, 7.0}) sketch.add(v);
  sketch.add(std::numeric_limits<double>::quiet_NaN());
  sketch.add(std::numeric_limits<double>::infinity());
  EXPECT_EQ(sketch.count(), 5u);
  EXPECT_EQ(sketch.rejected(), 2u);
  EXPECT_DOUBLE_EQ(sketch.sum(), 4.0);
  EXPECT_EQ(sketch.min(), -5.0);
  EXPECT_EQ(sketch.max(), 7.0);
  EXPECT_EQ(sketch.quantile(0.0), -5.0);
  EXPECT_EQ(sketch.quantile(0.25), 0.0);  // rank 1: exact zero
  EXPECT_EQ(sketch.quantile(0.5), 0.0);   // rank 2: 1e-320 is below min_indexable, counted as zero
  EXPECT_NEAR(*sketch.quantile(0.75), 2.0, 0.01 * 2.0);
  EXPECT_EQ(sketch.bin_count(), 4u);  // -5, zero, 2, 7
}

// Tests that the bin limit holds on a huge range, the top quantiles keep the guarantee and the
// collapse is reported.
TEST(QuantileSketchTest, CollapsesLowestBinsAtTheLimit) {
  QuantileSketch sketch({.relative_accuracy = 0.01, .max_bins = 100});
  std::vector<double> values;
  for (int e = -300; e <= 300; ++e) {
    values.push_back(std::pow(10.0, e / 10.0));
    sketch.add(values.back());
  }
  EXPECT_TRUE(sketch.collapsed());
  EXPECT_LE(sketch.bin_count(), 100u);
  std::sort(values.begin(), values.end());
  for (double q : {0.99, 0.995, 1.0}) {  // ranks inside the top 100 bins (a factor e^2 below max)
    double want = exact_rank_value(values, q);
    EXPECT_LE(std::fabs(*sketch.quantile(q) - want), 0.01 * want * (1 + 1e-9)) << "q " << q;
  }
  EXPECT_EQ(sketch.quantile(0.0), values.front());  // the extreme ranks are exact even when collapsed
  EXPECT_GT(*sketch.quantile(0.1), 10 * exact_rank_value(values, 0.1));  // low quantiles lost accuracy
}

// Tests that clear() resets the sketch to empty and that it is reusable afterwards.
TEST(QuantileSketchTest, ClearResets) {
  QuantileSketch sketch;
  for (int i = 1; i <= 100; ++i) sketch.add(i);
  sketch.clear();
  EXPECT_EQ(sketch.count(), 0u);
  EXPECT_FALSE(sketch.quantile(0.5).has_value());
  sketch.add(42.0);
  EXPECT_EQ(sketch.quantile(0.99), 42.0);
  EXPECT_EQ(sketch.bin_count(), 1u);
}

// Tests that invalid options are refused as setup misuse.
TEST(QuantileSketchTest, InvalidOptionsThrow) {
  EXPECT_THROW(QuantileSketch({.relative_accuracy = 0.0}), std::invalid_argument);
  EXPECT_THROW(QuantileSketch({.relative_accuracy = 0.9}), std::invalid_argument);
  EXPECT_THROW(QuantileSketch({.relative_accuracy = std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
  EXPECT_THROW(QuantileSketch({.relative_accuracy = 0.01, .max_bins = 0}), std::invalid_argument);
}

}  // namespace
}  // namespace inferscope::metrics
