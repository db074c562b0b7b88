// File: detail/gauge_series.h  -- DO NOT INCLUDE DIRECTLY (use <inferscope/metrics/gauge.h>).
// Storage of one gauge series: a single atomic holding the double's bits. A gauge is last-writer-
// wins, so it cannot be sharded; set is a relaxed store (no xchg), inc/dec a CAS loop.
// Thread-safe; never locks or allocates.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>

#include <inferscope/metrics/detail/series_base.h>

namespace inferscope::metrics::detail {

// GaugeSeries is the state behind a Gauge handle.
class GaugeSeries : public SeriesBase {
 public:
  using SeriesBase::SeriesBase;

  void set(double v) noexcept { bits_.store(std::bit_cast<std::uint64_t>(v), std::memory_order_relaxed); }
  void add(double v) noexcept {
    std::uint64_t old = bits_.load(std::memory_order_relaxed);
    while (!bits_.compare_exchange_weak(
        old, std::bit_cast<std::uint64_t>(std::bit_cast<double>(old) + v), std::memory_order_relaxed)) {
    }
  }
  double value() const noexcept { return std::bit_cast<double>(bits_.load(std::memory_order_relaxed)); }

 private:
  alignas(64) std::atomic<std::uint64_t> bits_{0};  // 0 bits == +0.0
};

}  // namespace inferscope::metrics::detail
