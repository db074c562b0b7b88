#include "report/report_derive.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/duration_text.h"

namespace inferscope::report {
namespace {

int hour_of_day_for_end(double end) {
  // The hour that ends at `end` starts one hour earlier.
  double start = end - 3600;
  long long h = static_cast<long long>(std::floor(start / 3600.0));
  int hod = static_cast<int>(h % 24);
  return hod < 0 ? hod + 24 : hod;
}

// Runs of consecutive hours (wrapping past midnight) where flag[h] holds.
std::vector<std::pair<int, int>> runs(const std::array<bool, 24>& flag) {
  std::vector<std::pair<int, int>> out;
  if (std::all_of(flag.begin(), flag.end(), [](bool b) { return b; })) return {{0, 23}};
  // Start scanning just after an hour that is not flagged, so a run over midnight stays whole.
  int origin = 0;
  while (flag[origin]) ++origin;
  for (int k = 1; k <= 24; ++k) {
    int h = (origin + k) % 24;
    if (!flag[h]) continue;
    int first = h, last = h;
    while (k + 1 <= 24 && flag[(origin + k + 1) % 24]) {
      ++k;
      last = (origin + k) % 24;
    }
    out.emplace_back(first, last);
  }
  return out;
}

}  // namespace

std::string hour_range_text(int first, int last) {
  char buf[32];
  if (first == last) std::snprintf(buf, sizeof buf, "%02d:00", first);
  else std::snprintf(buf, sizeof buf, "%02d:00-%02d:00", first, (last + 1) % 24);
  return buf;
}

HourProfile derive_hour_profile(const std::vector<Point>& hourly_rate, const std::vector<Point>& hourly_p95,
                                double slo_p95_s) {
  HourProfile p;
  std::array<double, 24> rate_sum{}, p95_sum{};
  std::array<int, 24> rate_n{}, p95_n{};
  for (const Point& pt : hourly_rate) {
    if (!std::isfinite(pt.v)) continue;
    int h = hour_of_day_for_end(pt.t);
    rate_sum[h] += pt.v;
    ++rate_n[h];
  }
  std::vector<double> p95_values;
  for (const Point& pt : hourly_p95) {
    if (!std::isfinite(pt.v)) continue;
    int h = hour_of_day_for_end(pt.t);
    p95_sum[h] += pt.v;
    ++p95_n[h];
    p95_values.push_back(pt.v);
  }
  for (int h = 0; h < 24; ++h) {
    p.hours[h].hour = h;
    if (rate_n[h] > 0) p.hours[h].mean_rate = rate_sum[h] / rate_n[h];
    if (p95_n[h] > 0) p.hours[h].p95_e2e = p95_sum[h] / p95_n[h];
  }

  // Peak and trough hours by load.
  int peak = -1;
  for (int h = 0; h < 24; ++h)
    if (p.hours[h].mean_rate && (peak < 0 || *p.hours[h].mean_rate > *p.hours[peak].mean_rate)) peak = h;
  if (peak < 0) {
    p.conclusions.push_back("no hour-of-day profile: no request rate in the period");
  } else {
    double peak_rate = *p.hours[peak].mean_rate;
    p.hours[peak].peak = true;
    p.conclusions.push_back("peak load at " + hour_range_text(peak, peak) + " UTC (" + common::format_printf("%.3g", peak_rate) +
                            " req/s on average)");
    std::array<bool, 24> trough{};
    for (int h = 0; h < 24; ++h) {
      const auto& r = p.hours[h].mean_rate;
      trough[h] = peak_rate > 0 && r && *r < p.trough_threshold * peak_rate;
      p.hours[h].trough = trough[h];
    }
    auto trough_runs = runs(trough);
    for (auto [first, last] : trough_runs)
      p.conclusions.push_back("capacity can shrink " + hour_range_text(first, last) + " UTC (load < " +
                              common::format_printf("%.0f", p.trough_threshold * 100) + " % of peak)");
    if (trough_runs.empty())
      p.conclusions.push_back("no hour below " + common::format_printf("%.0f", p.trough_threshold * 100) +
                              " % of the peak load: no room to shrink capacity by hour");
  }

  // Latency limit: the SLO, else 1.5 x the median hourly p95.
  if (slo_p95_s > 0) {
    p.latency_limit_s = slo_p95_s;
    p.latency_limit_source = "SLO (--slo-p95 " + common::format_printf("%g", slo_p95_s) + " s)";
  } else if (!p95_values.empty()) {
    std::sort(p95_values.begin(), p95_values.end());
    std::size_t n = p95_values.size();
    double median = n % 2 ? p95_values[n / 2] : (p95_values[n / 2 - 1] + p95_values[n / 2]) / 2;
    p.latency_limit_s = 1.5 * median;
    p.latency_limit_source = "1.5 x the median hourly p95 (" + common::format_printf("%.3g", median) + " s); no SLO given";
  }
  if (p.latency_limit_s) {
    std::array<bool, 24> over{};
    for (int h = 0; h < 24; ++h) {
      const auto& v = p.hours[h].p95_e2e;
      over[h] = v && *v > *p.latency_limit_s;
      p.hours[h].over_slo = over[h];
    }
    auto over_runs = runs(over);
    for (auto [first, last] : over_runs) {
      double worst = 0;
      for (int h = first;; h = (h + 1) % 24) {
        worst = std::max(worst, *p.hours[h].p95_e2e);
        if (h == last) break;
      }
      p.conclusions.push_back("capacity must grow at " + hour_range_text(first, last) + " UTC (p95 e2e up to " +
                              common::format_printf("%.3g", worst) + " s, over the limit " + common::format_printf("%.3g", *p.latency_limit_s) +
                              " s = " + p.latency_limit_source + ")");
    }
    if (over_runs.empty())
      p.conclusions.push_back("no hour with p95 e2e over " + common::format_printf("%.3g", *p.latency_limit_s) + " s (" +
                              p.latency_limit_source + ")");
  } else {
    p.conclusions.push_back("no hourly p95 e2e (no e2e histogram): cannot say when capacity must grow");
  }
  return p;
}

WorstHour choose_worst_hour(const std::vector<Point>& hourly_p99, const std::vector<Point>& hourly_p95) {
  WorstHour w;
  auto pick = [&](const std::vector<Point>& pts, const char* q) {
    const Point* best = nullptr;
    for (const Point& pt : pts)
      if (std::isfinite(pt.v) && (!best || pt.v > best->v)) best = &pt;
    if (!best) return false;
    w.found = true;
    w.end = best->t;
    w.start = best->t - 3600;
    w.quantile = q;
    w.value_s = best->v;
    return true;
  };
  if (!pick(hourly_p99, "p99")) pick(hourly_p95, "p95");
  return w;
}

}  // namespace inferscope::report
