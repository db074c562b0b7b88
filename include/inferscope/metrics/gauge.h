// File: gauge.h
// Gauge: a value that goes up and down (in-flight requests, queue depth, KV-cache usage).
// Example: auto in_flight = registry.gauge({.name = "app_in_flight", .help = "..."}).with({});
//          in_flight.inc(); ... in_flight.dec();
// Thread-safe; set/inc/dec never lock, allocate or throw. Design: docs/design/metrics-hot-path.md.
#pragma once

#include <memory>

#include <inferscope/metrics/detail/gauge_series.h>

namespace inferscope::metrics {

template <class Metric>
class Family;

// Gauge is a cheap-to-copy handle to one gauge series. A default-constructed Gauge writes to a
// process-wide null series that is never exported. Handles stay valid for the program's life, even
// after Family::remove() or the registry's destruction.
class Gauge {
 public:
  using Series = detail::GaugeSeries;

  // Gauge constructs a handle to the null series.
  Gauge() noexcept;

  // set stores v (NaN and +-Inf allowed and exported as-is). One relaxed store (~1 ns).
  void set(double v) noexcept { series_->set(v); }
  // inc adds v (CAS loop; contended writers retry, so prefer one gauge per writer where hot).
  void inc(double v = 1) noexcept { series_->add(v); }
  // dec subtracts v.
  void dec(double v = 1) noexcept { series_->add(-v); }
  // value returns the current value.
  double value() const noexcept { return series_->value(); }

 private:
  template <class Metric>
  friend class Family;
  explicit Gauge(std::shared_ptr<Series> series) noexcept : series_(std::move(series)) {}

  std::shared_ptr<Series> series_;
};

}  // namespace inferscope::metrics
