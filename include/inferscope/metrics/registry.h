// File: registry.h
// Registry: owns metric families, enforces the cardinality limits and renders them (exposition.h).
// Example: Registry registry; auto& f = registry.counter({.name = "app_requests_total", .help = "Requests."});
//          f.with({}).inc();  std::string text; render(registry, ExpositionFormat::kPrometheusText004, text);
// Thread-safe. Registration and rendering take locks; handle writes never do. Families live as long
// as the registry; handles outlive both.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <inferscope/metrics/counter.h>
#include <inferscope/metrics/family.h>
#include <inferscope/metrics/gauge.h>
#include <inferscope/metrics/histogram.h>
#include <inferscope/metrics/metric_options.h>

namespace inferscope::metrics {

namespace detail {
class RegistryAccess;
}

// Registry holds families in registration order, which is the exposition order. It always exposes
// two self-metrics: inferscope_metrics_series_dropped_total{family,reason} (with() calls refused:
// reason family_limit|registry_limit|invalid_label_value) and
// inferscope_metrics_values_rejected_total{family,reason} (values ignored: negative|nan; exemplars
// dropped for invalid labels: exemplar).
class Registry {
 public:
  // Registry creates an empty registry (plus its self-metrics). Throws std::invalid_argument if a
  // limit is 0.
  explicit Registry(RegistryOptions options = {});
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // counter, gauge and histogram register a family and return it (reference valid for the
  // registry's life). An unlabelled family gets its single series now, so it is always exported.
  // Throws std::invalid_argument on: a bad metric or label name; a counter name without "_total";
  // a gauge/histogram name ending in "_total"; a name ending in _bucket/_count/_sum/_created; a
  // name whose exposition lines would clash with an existing family (same name, or e.g. gauge
  // "x" next to counter "x_total"); a unit that is not the name's suffix; help or label names not
  // valid UTF-8; bad buckets (not finite, not strictly increasing). Takes the registry mutex.
  CounterFamily& counter(const MetricOptions& options);
  GaugeFamily& gauge(const MetricOptions& options);
  HistogramFamily& histogram(const HistogramOptions& options);

  // add_collect_hook runs `hook` before every render, outside any registry lock (to refresh
  // gauges computed at scrape time). Hooks run on the rendering thread, concurrently if two
  // renders overlap, so they must be thread-safe; they must not render this registry. A hook that
  // throws propagates out of render(). The hook is kept for the registry's life.
  void add_collect_hook(std::function<void()> hook);

  // options returns the limits this registry was built with.
  const RegistryOptions& options() const noexcept { return options_; }

 private:
  friend class detail::RegistryAccess;
  detail::FamilyCore& add_family(detail::FamilyConfig config, const std::vector<std::string>& claims);
  detail::FamilyConfig validated(const MetricOptions& options, detail::MetricKind kind) const;

  RegistryOptions options_;
  std::unique_ptr<detail::RegistryShared> shared_;
  mutable std::mutex mutex_;  // families_, claimed_, typed views
  std::vector<std::unique_ptr<detail::FamilyCore>> families_;  // registration order
  std::set<std::string, std::less<>> claimed_;  // every exposition name in use
  std::vector<std::unique_ptr<CounterFamily>> counters_;  // typed views handed out by reference
  std::vector<std::unique_ptr<GaugeFamily>> gauges_;
  std::vector<std::unique_ptr<HistogramFamily>> histograms_;
  mutable std::mutex hooks_mutex_;
  std::vector<std::function<void()>> hooks_;
};

}  // namespace inferscope::metrics
