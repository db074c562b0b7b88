// File: serve/metrics_filter.h
// drop_metric_families removes whole metric families from a text exposition (Prometheus 0.0.4 or
// OpenMetrics): their # HELP/# TYPE/# UNIT lines and every sample of the family (name, name_bucket,
// _sum, _count, _created, _total, _info). Used by serve's `hide_metrics` fault, which imitates a
// server upgrade that renamed metrics. Example: drop_metric_families(text, {"x_seconds"}).
// Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace inferscope::serve {

// drop_metric_families returns `exposition` without the lines of the named families.
std::string drop_metric_families(std::string_view exposition, const std::vector<std::string>& families);

}  // namespace inferscope::serve
