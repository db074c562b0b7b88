// File: latency_summary.h
// Summary holds the exact statistics of one metric over a bounded run (every sample is kept, so
// quantiles are exact, computed like numpy.percentile's default linear interpolation, which is
// what vllm bench serve prints). Example: Summary s = summarize(ttft_ms); s.quantile(99.9);
// Pure value type, thread-compatible. Never drops or bins a sample.
#pragma once

#include <cstddef>
#include <vector>

namespace inferscope::bench {

// kReportedPercentiles are the percentiles every summary prints and saves, in this order.
inline constexpr double kReportedPercentiles[] = {50, 90, 95, 99, 99.9};

// Summary is count/mean/std/min/max plus the sorted samples for exact quantiles.
struct Summary {
  std::size_t count = 0;
  double mean = 0, stddev = 0, min = 0, max = 0;
  std::vector<double> sorted;

  // quantile returns the p-th percentile (0..100) by linear interpolation between closest ranks;
  // 0 when there are no samples. Cost: O(1).
  double quantile(double p) const;
  double median() const { return quantile(50); }
};

// summarize sorts `values` (taken by value, moved in) and fills a Summary. Cost: O(n log n).
Summary summarize(std::vector<double> values);

}  // namespace inferscope::bench
