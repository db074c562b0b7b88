#include "bench/latency_summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace inferscope::bench {

double Summary::quantile(double p) const {
  if (sorted.empty()) return 0;
  double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(rank));
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Summary summarize(std::vector<double> values) {
  Summary s;
  s.count = values.size();
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  double sum = std::accumulate(values.begin(), values.end(), 0.0);
  s.mean = sum / static_cast<double>(values.size());
  double sq = 0;
  for (double v : values) sq += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(sq / static_cast<double>(values.size()));  // population std, like np.std
  s.min = values.front();
  s.max = values.back();
  s.sorted = std::move(values);
  return s;
}

}  // namespace inferscope::bench
