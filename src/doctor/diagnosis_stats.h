// File: diagnosis_stats.h
// Small statistics the reasoning uses: a window's standard error from its own sub-interval
// spread (the noise floor), ratios that tolerate missing data, and the ramp that turns a ratio
// into an evidence strength. Internal to the doctor. Pure functions; thread-safe.
#pragma once

#include <algorithm>
#include <cmath>

#include "doctor/snapshot.h"

namespace inferscope::doctor::detail {

// ramp maps x linearly from [lo, hi] onto [0, 1], clamped; NaN -> 0.
inline double ramp(double x, double lo, double hi) {
  if (std::isnan(x)) return 0;
  return std::clamp((x - lo) / (hi - lo), 0.0, 1.0);
}

// log_ramp is ramp on the natural log of a ratio, with thresholds given as ratios.
inline double log_ramp(double ratio, double lo, double hi) {
  if (!(ratio > 0)) return 0;
  return ramp(std::log(ratio), std::log(lo), std::log(hi));
}

// ratio returns incident/baseline, NaN unless both exist; a zero baseline with a positive
// incident gives +Inf.
inline double ratio(double baseline, double incident) {
  if (std::isnan(baseline) || std::isnan(incident)) return kNaN;
  if (baseline <= 0) return incident > 0 ? INFINITY : 1.0;
  return incident / baseline;
}

// standard_error estimates the standard error of a window's mean from the spread of its
// sub-interval means, grouped into up to 8 chunks (weighted by observations when weights exist).
// NaN when fewer than 3 chunks have data.
double standard_error(const WindowStat& w);

// Change compares one quantity across the two windows.
struct Change {
  double baseline = kNaN, incident = kNaN;
  double delta = kNaN;       // incident - baseline
  double ratio = kNaN;       // incident / baseline
  double threshold = kNaN;   // smallest delta called real
  bool up = false;           // delta > threshold
  bool down = false;         // delta < -threshold
};

// compare builds a Change on the windows' means: the threshold is the larger of min_relative x
// |baseline| and sigmas x the combined standard error (min_absolute as a floor).
Change compare(const Quantity* q, double min_relative, double sigmas, double min_absolute = 0);

}  // namespace inferscope::doctor::detail
