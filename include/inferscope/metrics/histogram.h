// File: histogram.h
// Histogram: distribution of observations (latencies, sizes) over fixed bucket bounds.
// Example: auto ttft = registry.histogram({{.name = "app_ttft_seconds", .help = "..."},
//                                         default_latency_buckets()}).with({});  ttft.observe(0.42);
// Exemplars: h.observe_with_exemplar(0.42, {{"trace_id", trace_id_hex}}) also keeps (labels, value,
// time) as the exemplar of 0.42's bucket, printed only in the OpenMetrics exposition.
// Thread-safe: observe never locks, throws or allocates (except once per thread and series, on the
// thread's first write). Scheme (per-thread seqlocked shards): docs/design/metrics-hot-path.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include <inferscope/metrics/buckets.h>
#include <inferscope/metrics/detail/histogram_series.h>

namespace inferscope::metrics {

template <class Metric>
class Family;

// ExemplarLabels are the label pairs of one exemplar, e.g. {{"trace_id", "4bf92f3577b34da6a3ce929d0e0e4736"}}.
using ExemplarLabels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

// PreparedExemplar is an exemplar's labels checked, escaped and formatted once, for several
// observations that carry the same ones (a request's e2e, TTFT and stage latencies all carry its
// trace id): each observe_with_exemplar with it then only copies the text. Labels OpenMetrics
// forbids make it invalid, and every observation with it drops the exemplar (counted) and keeps
// the value, as observe_with_exemplar with those labels would. ~1 KiB; meant for the stack.
class PreparedExemplar {
 public:
  explicit PreparedExemplar(ExemplarLabels labels) noexcept { detail::prepare_exemplar_text(labels, text_); }
  bool valid() const noexcept { return text_.valid; }

 private:
  friend class Histogram;
  detail::ExemplarText text_;
};

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

  // observe_with_exemplar records v exactly like observe() and makes {labels, v, at} the exemplar
  // of v's bucket: each bucket keeps its latest exemplar (by `at`; of several in one millisecond,
  // the first) with that original timestamp, so a Prometheus with exemplar storage stores it once
  // however often it scrapes (it takes no second exemplar of a series at the same millisecond). Exemplars are
  // printed after their bucket line in the OpenMetrics exposition only, never in text 0.0.4 (where
  // one breaks the whole scrape). Labels must be valid label names (no duplicates) with UTF-8
  // values, at most 128 code points together (trace_id plus a 32-hex id is 40); otherwise the
  // exemplar is dropped, the value kept, and the drop counted as
  // inferscope_metrics_values_rejected_total{family,reason="exemplar"}. Never throws; validates,
  // escapes and takes a per-bucket mutex: a few hundred ns (BM_HistogramObserveWithExemplar; the
  // default `at` is a clock read, ~130 ns of it on a 2-vCPU VM), so call it once per request, not
  // per token. The series' first exemplar allocates one slot per bucket (~1 KiB each). observe()
  // is unaffected: it never touches the slots.
  void observe_with_exemplar(double v, ExemplarLabels labels,
                             std::chrono::system_clock::time_point at = std::chrono::system_clock::now()) noexcept {
    series_->observe_with_exemplar(
        v, labels, std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count());
  }
  // The same with labels prepared once for several observations (PreparedExemplar).
  void observe_with_exemplar(double v, const PreparedExemplar& labels,
                             std::chrono::system_clock::time_point at = std::chrono::system_clock::now()) noexcept {
    series_->observe_with_exemplar(
        v, labels.text_, std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count());
  }

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
