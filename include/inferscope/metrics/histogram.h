// File: histogram.h
// Histogram: distribution of observations (latencies, sizes) over fixed bucket bounds.
// Example: auto ttft = registry.histogram({{.name = "app_ttft_seconds", .help = "..."},
//                                         default_latency_buckets()}).with({});  ttft.observe(0.42);
// Thread-safe: observe never locks, throws or allocates (except once per thread and series, on the
// thread's first write). Scheme (per-thread seqlocked shards): docs/design/metrics-hot-path.md.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <inferscope/metrics/buckets.h>
#include <inferscope/metrics/detail/histogram_series.h>

namespace inferscope::metrics {

template <class Metric>
class Family;

// Histogram is a cheap-to-copy handle to one histogram series. A default-constructed Histogram
// writes to a process-wide null series (no buckets) that is never exported. Handles stay valid for
// the program's life, even after Family::remove() or the registry's destruction.
class Histogram {
 public:
  using Series = detail::HistogramSeries;

  // Histogram constructs a handle to the null series.
  Histogram() noexcept;

  // observe records v. NaN is dropped and counted in
  // inferscope_metrics_values_rejected_total{family,reason="nan"}. A negative v is kept: it lands
  // in the lowest bucket whose bound is >= v (the first bucket for non-negative bounds) and is
  // added to the sum. +Inf lands in the +Inf bucket. ~5-10 ns for <= 32 bounds.
  void observe(double v) noexcept { series_->observe(v); }

  // Snapshot is a consistent view: count == cumulative_counts.back() (the +Inf bucket) always,
  // and sum is the sum of the same observations (except those written through the shared shard by
  // threads beyond the shard count, whose sum may lag by in-flight observations).
  struct Snapshot {
    std::vector<std::uint64_t> cumulative_counts;  // one per bound, then +Inf
    double sum = 0.0;
    std::uint64_t count = 0;
  };
  // snapshot reads all shards (allocates the vector); never blocks writers.
  Snapshot snapshot() const;

 private:
  template <class Metric>
  friend class Family;
  explicit Histogram(std::shared_ptr<Series> series) noexcept : series_(std::move(series)) {}

  std::shared_ptr<Series> series_;
};

}  // namespace inferscope::metrics
