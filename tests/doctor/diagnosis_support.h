// File: diagnosis_support.h
// Snapshots the doctor's unit tests diagnose, built by hand: window statistics and quantities,
// a steady inferscope-like server (e2e 300 ms = queue 5 + prefill 50 + decode 245) to change one
// thing of, a healthy job queue in front of it, and run() (derived quantities, then diagnose()).
// Example: Snapshot s = steady(); s.stages["decode"] = quantity(0.245, 0.490); Diagnosis d = run(s);
// Plain functions on values; thread-safe.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "doctor/diagnosis.h"
#include "doctor/diagnosis_format.h"
#include "doctor/sampled_roles.h"

namespace inferscope::doctor::testing {

// window builds a WindowStat with `n` equal sub-intervals around `mean` (+/- jitter alternating).
inline WindowStat window(double mean, double count, double jitter = 0, int n = 10) {
  WindowStat w;
  w.mean = mean;
  w.count = count;
  w.p50 = mean;
  w.p95 = mean * 1.2;
  w.p99 = mean * 1.4;
  w.max = mean * 2;
  for (int i = 0; i < n; ++i) {
    w.intervals.push_back(mean + ((i / 2) % 2 ? jitter : -jitter));  // varies from chunk to chunk
    w.interval_weights.push_back(count / n);
  }
  return w;
}

inline Quantity quantity(double base, double inc, double count = 100, std::string unit = "s", double jitter = 0) {
  // Built whole: assigning "m" to a default-constructed metric trips g++ 12's -Wrestrict false
  // positive (GCC bug 105329) once inlined.
  return Quantity{.baseline = window(base, count, jitter * base), .incident = window(inc, count, jitter * base),
                  .metric = "m", .unit = std::move(unit)};
}

// steady builds a healthy inferscope-like snapshot: e2e 300 ms = queue 5 + prefill 50 + decode 245.
inline Snapshot steady() {
  Snapshot s;
  s.source = "test";
  s.dialect = "inferscope";
  s.baseline_start = 0;
  s.baseline_end = 1800;
  s.incident_start = 1800;
  s.incident_end = 2100;
  s.latency["e2e"] = quantity(0.300, 0.300, 100, "s", 0.02);
  s.latency["ttft"] = quantity(0.055, 0.055);
  s.latency["tpot"] = quantity(0.008, 0.008);
  s.latency["itl"] = quantity(0.008, 0.008);
  s.stages["queue"] = quantity(0.005, 0.005);
  s.stages["prefill"] = quantity(0.050, 0.050);
  s.stages["decode"] = quantity(0.245, 0.245);
  s.signals["request_rate"] = quantity(5, 5, 100, "req/s", 0.02);
  s.signals["prompt_tokens"] = quantity(1000, 1000, 100, "tokens");
  s.signals["output_tokens"] = quantity(32, 32, 100, "tokens");
  s.signals["running"] = quantity(2, 2, 100, "requests");
  s.signals["waiting"] = quantity(0, 0, 100, "requests");
  s.signals["kv_usage"] = quantity(0.3, 0.3, 100, "ratio");
  s.signals["kv_usage"].baseline.max = s.signals["kv_usage"].incident.max = 0.35;
  s.signals["preemption_rate"] = quantity(0, 0, 0, "1/s");
  s.signals["error_rate"] = quantity(0, 0, 0, "req/s");
  return s;
}

inline Diagnosis run(Snapshot s) {
  add_derived_quantities(s);
  return diagnose(s);
}

// sampled sets a gauge's per-sample values (and its mean and max) in one window.
inline void sampled(WindowStat& w, const std::vector<double>& values) {
  w.intervals = values;
  w.interval_weights.assign(values.size(), 1);
  double sum = 0, mx = 0;
  for (double v : values) sum += v, mx = std::max(mx, v);
  w.mean = sum / values.size();
  w.max = mx;
  w.count = values.size();
}

// --- the job queue in front (up's queue collector) ---------------------------------------------

// line builds a gauge window whose samples go from `from` to `to`: flat until `start` (a share
// of the window), then linearly.
inline WindowStat line(double from, double to, double start = 0, int n = 12) {
  WindowStat w;
  double total = 0;
  for (int i = 0; i < n; ++i) {
    double t = static_cast<double>(i) / (n - 1);
    double v = t <= start ? from : from + (to - from) * (t - start) / (1 - start);
    w.intervals.push_back(v);
    total += v;
    w.max = std::isnan(w.max) ? v : std::max(w.max, v);
  }
  w.mean = total / n;
  w.count = n;
  return w;
}

// rate builds a counter window: `per_s` in every interval, `stop_at` (a share) onwards 0.
inline WindowStat rate(double per_s, double seconds, double stop_at = 1, int n = 12) {
  WindowStat w;
  double total = 0;
  for (int i = 0; i < n; ++i) {
    double v = static_cast<double>(i) / n < stop_at ? per_s : 0;
    w.intervals.push_back(v);
    total += v * seconds / n;
  }
  w.mean = total / seconds;
  w.count = total;
  return w;
}

// queued adds a healthy queue in front of steady(): 5 jobs/s (one request each), 2 workers about
// 75 % busy, 0.2 s wait, run time = the server's e2e plus a little.
inline Snapshot queued() {
  Snapshot s = steady();
  s.stages["queue_wait"] = quantity(0.2, 0.2, 1500, "s", 0.05);
  s.latency["queue_run"] = quantity(0.31, 0.31, 1500);
  s.signals["queue_depth"].baseline = line(1, 1);
  s.signals["queue_depth"].incident = line(1, 1);
  s.signals["queue_oldest_age"].baseline = line(0.4, 0.4);
  s.signals["queue_oldest_age"].incident = line(0.4, 0.4);
  s.signals["queue_in_progress"] = quantity(1.5, 1.5, 12, "jobs");
  s.signals["queue_jobs_finished"].baseline = rate(5, 1800);
  s.signals["queue_jobs_finished"].incident = rate(5, 300);
  s.signals["queue_jobs_failed"].baseline = rate(0, 1800);
  s.signals["queue_jobs_failed"].incident = rate(0, 300);
  s.signals["queue_workers_busy"] = quantity(1.5, 1.5, 12, "workers");
  s.signals["queue_workers_idle"] = quantity(0.5, 0.5, 12, "workers");
  s.signals["queue_workers_stale"] = quantity(0, 0, 12, "workers");
  for (auto* m : {&s.signals, &s.latency, &s.stages})
    for (auto& [id, q] : *m)
      if (id.rfind("queue", 0) == 0) q.metric = "inferscope_" + id;
  return s;
}

inline bool reports(const Diagnosis& d, const std::string& cause) {
  for (const auto& f : d.findings)
    if (f.cause == cause) return true;
  return false;
}

// decode_slowed is steady() with decode taking `factor` times as long per token.
inline Snapshot decode_slowed(double factor) {
  Snapshot s = steady();
  const double decode = 0.245 * factor;
  s.latency["e2e"] = quantity(0.300, 0.055 + decode, 100, "s", 0.02);
  s.stages["decode"] = quantity(0.245, decode);
  s.latency["tpot"] = quantity(0.008, 0.008 * factor);
  s.latency["itl"] = quantity(0.008, 0.008 * factor);
  return s;
}

}  // namespace inferscope::doctor::testing
