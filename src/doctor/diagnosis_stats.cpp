#include "doctor/diagnosis_stats.h"

#include <vector>

namespace inferscope::doctor::detail {

double standard_error(const WindowStat& w) {
  const std::size_t n = w.intervals.size();
  if (n < 3) return kNaN;
  const std::size_t chunks = std::min<std::size_t>(8, n);
  const std::size_t size = (n + chunks - 1) / chunks;
  const bool weighted = w.interval_weights.size() == n;
  std::vector<double> means;
  for (std::size_t start = 0; start < n; start += size) {
    double total = 0, weight = 0;
    for (std::size_t i = start; i < std::min(n, start + size); ++i) {
      double v = w.intervals[i];
      if (std::isnan(v)) continue;
      double wt = weighted ? w.interval_weights[i] : 1.0;
      total += v * wt;
      weight += wt;
    }
    if (weight > 0) means.push_back(total / weight);
  }
  if (means.size() < 3) return kNaN;
  double mean = 0;
  for (double m : means) mean += m;
  mean /= static_cast<double>(means.size());
  double var = 0;
  for (double m : means) var += (m - mean) * (m - mean);
  var /= static_cast<double>(means.size() - 1);
  return std::sqrt(var / static_cast<double>(means.size()));
}

Change compare(const Quantity* q, double min_relative, double sigmas, double min_absolute) {
  Change c;
  if (!q) return c;
  c.baseline = q->baseline.mean;
  c.incident = q->incident.mean;
  if (std::isnan(c.baseline) || std::isnan(c.incident)) return c;
  c.delta = c.incident - c.baseline;
  c.ratio = ratio(c.baseline, c.incident);
  // The noise is the baseline's own: under "nothing changed" the incident mean would scatter like
  // the baseline's chunk means do. The incident's own spread is not noise (a fault ramps up).
  double se_b = standard_error(q->baseline);
  double se = 0;
  if (!std::isnan(se_b)) {
    double chunks_b = std::min<double>(8, static_cast<double>(q->baseline.intervals.size()));
    double chunks_i = std::max<double>(1, std::min<double>(8, static_cast<double>(q->incident.intervals.size())));
    double sigma = se_b * std::sqrt(chunks_b);
    se = sigma * std::sqrt(1 / chunks_b + 1 / chunks_i);
  }
  c.threshold = std::max({min_relative * std::fabs(c.baseline), sigmas * se, min_absolute});
  c.up = c.delta > c.threshold;
  c.down = c.delta < -c.threshold;
  return c;
}

}  // namespace inferscope::doctor::detail
