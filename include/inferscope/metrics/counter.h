// File: counter.h
// Counter: a monotonically increasing value (requests, tokens, errors), exposed as `<name>_total`.
// Example: auto requests = registry.counter({.name = "app_requests_total", .help = "..."}).with({});
//          requests.inc();
// Thread-safe: any number of threads may write the same handle; inc/add never lock, never throw
// and allocate only once per (thread, series) on that thread's first write. Hot-path design:
// docs/design/metrics-hot-path.md.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>

#include <inferscope/metrics/detail/counter_series.h>

namespace inferscope::metrics {

template <class Metric>
class Family;

// Counter is a cheap-to-copy handle to one counter series. A default-constructed Counter writes
// to a process-wide null series that is never exported. Handles stay valid for the program's life,
// even after Family::remove() or the registry's destruction (writes then go nowhere visible).
class Counter {
 public:
  using Series = detail::CounterSeries;

  // Counter constructs a handle to the null series.
  Counter() noexcept;

  // inc adds 1. ~2 ns on the writing thread's own shard (relaxed load + store, no lock prefix).
  void inc() noexcept { series_->add_whole(1); }

  // add adds v. Whole numbers below 2^64 take the exact integer path (no precision loss above
  // 2^53); other values a floating accumulator. v < 0 or NaN is ignored and counted in
  // inferscope_metrics_values_rejected_total{family,reason="negative"|"nan"}. -0.0 adds nothing.
  void add(double v) noexcept {
    if (!(v >= 0.0)) [[unlikely]] {
      series_->reject(std::isnan(v));
      return;
    }
    if (v < 18446744073709551616.0) {  // 2^64
      const auto whole = static_cast<std::uint64_t>(v);
      if (static_cast<double>(whole) == v) {
        series_->add_whole(whole);
        return;
      }
    }
    series_->add_fraction(v);
  }

  // value returns the sum over all threads' shards; O(shards), never blocks writers. Above 2^53
  // the returned double rounds; the exposition prints the exact integer.
  double value() const noexcept;

 private:
  template <class Metric>
  friend class Family;
  explicit Counter(std::shared_ptr<Series> series) noexcept : series_(std::move(series)) {}

  std::shared_ptr<Series> series_;
};

}  // namespace inferscope::metrics
