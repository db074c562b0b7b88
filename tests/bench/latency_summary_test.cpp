#include "bench/latency_summary.h"

#include <gtest/gtest.h>

namespace inferscope::bench {
namespace {

// Tests that quantiles interpolate linearly between ranks, as numpy.percentile does.
TEST(LatencySummaryTest, QuantilesMatchNumpy) {
  Summary s = summarize({4, 1, 3, 2, 5, 6, 7, 8, 9, 10});
  EXPECT_EQ(s.count, 10u);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_DOUBLE_EQ(s.median(), 5.5);            // np.percentile(range(1,11), 50)
  EXPECT_DOUBLE_EQ(s.quantile(90), 9.1);        // np.percentile(..., 90)
  EXPECT_DOUBLE_EQ(s.quantile(99), 9.91);
  EXPECT_NEAR(s.quantile(99.9), 9.991, 1e-12);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_NEAR(s.stddev, 2.8722813232690143, 1e-12);  // np.std
}

// Tests that empty and single-sample summaries are well defined.
TEST(LatencySummaryTest, EmptyAndSingle) {
  Summary e = summarize({});
  EXPECT_EQ(e.count, 0u);
  EXPECT_EQ(e.quantile(99), 0);
  Summary one = summarize({3.5});
  EXPECT_EQ(one.quantile(0), 3.5);
  EXPECT_EQ(one.quantile(99.9), 3.5);
  EXPECT_EQ(one.stddev, 0);
}

}  // namespace
}  // namespace inferscope::bench
