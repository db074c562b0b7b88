// File: prometheus_collector.h
// Builds a Snapshot from a Prometheus-compatible query API: finds which dialects' metrics exist
// for the selector (one series lookup), then runs a bounded batch of range queries concurrently
// (one to three per role: raw aggregated cumulative values on a fixed step) and checks targets.
// Example: auto snap = collect_from_prometheus(client, {.at = now, .window_s = 300, .baseline_s = 1800});
// Blocking; thread-safe (the client is). Never throws.
#pragma once

#include <memory>

#include <string>

#include "dialect/custom_dialect.h"
#include "doctor/snapshot.h"
#include "inferscope/common/result.h"
#include "promapi/prometheus_client.h"

namespace inferscope::doctor {

struct PrometheusWindow {
  double at = 0;            // incident window end, Unix seconds
  double window_s = 300;    // incident window length
  double baseline_s = 1800; // baseline length, ending where the window starts
  std::string selector;     // "{job=\"x\"}" or "" (all series)
  std::string model;        // "" = all models
  double step_s = 0;        // 0 = from the targets' scrape interval and the range (<= 720 steps)
  // custom: the selected target's role mapping (up's `kind: custom`); its names replace detection.
  std::shared_ptr<const dialect::CustomDialect> custom = {};
};

// CollectStats says what collection cost (for the benchmark and --format json notes).
struct CollectStats {
  int queries = 0;
  double seconds = 0;
  double step_s = 0;
};

// selector_matchers returns the matchers inside "{...}" ("" for an empty selector). Errors name
// --selector when the text is not a brace-enclosed matcher list.
Result<std::string> selector_matchers(const std::string& selector);

// collect_from_prometheus queries the API and builds the Snapshot. Errors only when Prometheus
// cannot be reached or refuses the queries; missing metrics or down targets land in the Snapshot.
Result<Snapshot> collect_from_prometheus(const promapi::PrometheusClient& client, const PrometheusWindow& window,
                                         CollectStats* stats = nullptr);

}  // namespace inferscope::doctor
