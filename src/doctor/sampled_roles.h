// File: sampled_roles.h
// SampledRoles is the raw material of a Snapshot: each role's aggregated values (cumulative for
// histograms and counters, instantaneous for gauges) on one time grid, from Prometheus range
// queries or from direct scrapes. build_snapshot turns it into per-window statistics the same way
// for both sources. Example: Snapshot s = build_snapshot(sampled, {t0, t1}, {t1, t2});
// Pure functions on values; thread-safe.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "doctor/role_spec.h"
#include "doctor/snapshot.h"

namespace inferscope::doctor {

// RoleSamples holds one role's values on the grid (NaN where the series had no value).
struct RoleSamples {
  RoleSpec spec;
  std::string metric;    // the metric name actually found
  std::string key;       // kDependency, kPool, kEndpoint: the by_label value (dependency, pool, endpoint); else empty
  std::string group;     // kEndpoint: its pool (group_label value; "" without one)
  std::vector<double> primary;    // histogram _sum, counter, gauge, ratio numerator
  std::vector<double> secondary;  // histogram _count, ratio denominator
  std::map<double, std::vector<double>> buckets;  // histogram: le -> cumulative count
};

// SampledRoles is every role on one grid.
struct SampledRoles {
  std::vector<double> times;  // Unix seconds, increasing
  std::vector<RoleSamples> roles;
};

// TimeRange is [start, end] in Unix seconds.
struct TimeRange {
  double start = 0;
  double end = 0;
};

// build_snapshot computes each role's statistics over the baseline and the incident windows.
// Counter resets (a value going down) count from zero; a series that appears mid-grid counts
// from zero. Derived signals: error_ratio, prefix_hit_rate; stages get per_request contributions
// (stage seconds per finished request, so stages add up to e2e).
Snapshot build_snapshot(const SampledRoles& sampled, TimeRange baseline, TimeRange incident);

// window_stat computes one role's statistics over one window (exposed for baseline files and tests).
WindowStat window_stat(const SampledRoles& sampled, const RoleSamples& role, TimeRange window);

// histogram_quantile interpolates quantile q (0..1) from non-cumulative-by-time, cumulative-by-le
// bucket counts, the way Prometheus' histogram_quantile() does. NaN when the total is 0.
double histogram_quantile(double q, const std::map<double, double>& cumulative_by_le);

// add_derived_quantities adds error_ratio, prefix_hit_rate, per-request stage contributions and,
// when a dialect has no preprocess stage but has ttft, queue and prefill, a derived "preprocess"
// stage (ttft - queue - prefill: front-end time). Called by build_snapshot; idempotent.
void add_derived_quantities(Snapshot& snapshot);

}  // namespace inferscope::doctor
