// File: detail/series_base.h  -- DO NOT INCLUDE DIRECTLY (internal to inferscope/metrics).
// What every series shares: its pre-escaped label text (cached at creation so that rendering is a
// memcpy) and the family's counters of rejected values. Thread-safe: immutable after construction.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace inferscope::metrics::detail {

// RejectCounts counts values a family's series refused (Counter::add of a negative or NaN value,
// Histogram::observe(NaN)) and exemplars it dropped (invalid labels); exposed as
// inferscope_metrics_values_rejected_total{family,reason="negative"|"nan"|"exemplar"}.
// Shared by the family and its series, so handles outliving the registry still have a target.
struct RejectCounts {
  std::atomic<std::uint64_t> negative{0};
  std::atomic<std::uint64_t> nan{0};
  std::atomic<std::uint64_t> exemplar{0};
};

// SeriesBase holds what rendering needs besides the values.
class SeriesBase {
 public:
  SeriesBase(std::string labels, std::shared_ptr<RejectCounts> rejects) noexcept
      : labels_(std::move(labels)), rejects_(std::move(rejects)) {}
  SeriesBase(const SeriesBase&) = delete;
  SeriesBase& operator=(const SeriesBase&) = delete;

  // labels returns the escaped label pairs without braces: `a="x",b="y"` (empty when unlabelled).
  const std::string& labels() const noexcept { return labels_; }

 protected:
  // count_rejected records a refused value; rare path (relaxed RMW on a shared line is fine).
  void count_rejected(bool nan) noexcept {
    if (rejects_ == nullptr) return;
    (nan ? rejects_->nan : rejects_->negative).fetch_add(1, std::memory_order_relaxed);
  }
  // count_rejected_exemplar records a dropped exemplar (its value was kept).
  void count_rejected_exemplar() noexcept {
    if (rejects_ != nullptr) rejects_->exemplar.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  std::string labels_;
  std::shared_ptr<RejectCounts> rejects_;
};

}  // namespace inferscope::metrics::detail
