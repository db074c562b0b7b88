// File: report_derive.h
// The report's pure derivations, apart from the gathering so that they are unit-tested on
// hand-built inputs: the hour-of-day profile (peak, trough and over-limit hours with the stated
// thresholds) and the choice of the worst hour.
// Example: HourProfile p = derive_hour_profile(hourly_rate, hourly_p95, /*slo=*/0);
// Pure functions on values; thread-safe; never throw.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/report.h"

namespace inferscope::report {

// derive_hour_profile folds hourly samples (Point.t = the END of the hour, UTC) into 24 rows:
// mean request rate and mean p95 e2e per hour of day. Peak hour = highest mean rate; trough hours
// = mean rate < trough_threshold (30 %) of the peak; over-limit hours = p95 above `slo_p95_s`, or,
// when slo_p95_s <= 0, above 1.5 x the median of the hourly p95 values. Hours without samples
// stay nullopt ("no data") and are never peak, trough or over the limit.
HourProfile derive_hour_profile(const std::vector<Point>& hourly_rate, const std::vector<Point>& hourly_p95,
                                double slo_p95_s);

// choose_worst_hour picks the hour (Point.t = its end) with the highest p99 e2e; when there are no
// p99 samples, the highest p95. found = false when both are empty. The diagnosis is not filled.
WorstHour choose_worst_hour(const std::vector<Point>& hourly_p99, const std::vector<Point>& hourly_p95);

// hour_range_text formats hours of day [first, last] as "02:00-06:00" (the end is last + 1) or "14:00".
std::string hour_range_text(int first, int last);

}  // namespace inferscope::report
