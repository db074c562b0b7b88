// File: quantile_sketch.h
// QuantileSketch is a mergeable quantile sketch with a relative-error guarantee (DDSketch,
// Masson et al., VLDB 2019): every quantile it reports is within +-alpha (default 1 %) of the
// true value, in bounded memory, and sketches from many threads or hosts merge exactly.
//   QuantileSketch s; s.add(0.231); std::optional<double> p99 = s.quantile(0.99);
// Thread-compatible (a value type: one writer or many readers; merge per-thread sketches for
// concurrency). Never reports an empty sketch as 0: quantile/min/max of an empty sketch are nullopt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <inferscope/common/result.h>

namespace inferscope::metrics {

// QuantileSketchOptions configures a QuantileSketch.
struct QuantileSketchOptions {
  // relative_accuracy (alpha) is the guaranteed relative error, in [1e-6, 0.5]. Memory grows as
  // ln(max/min) / (2 alpha): 1 ms..60 s takes 551 bins at 1 %, 110 at 5 %.
  double relative_accuracy = 0.01;
  // max_bins caps the bins of each sign (>= 1). When values span more than max_bins bins, the
  // lowest-magnitude bins collapse into one: quantiles that land there lose the guarantee (they
  // read too far from zero), while the upper tail, which latency work cares about, keeps it.
  // 2048 bins at 1 % cover a range ratio of ~6e17 before anything collapses.
  std::size_t max_bins = 2048;
};

// QuantileSketch is a DDSketch with a collapsing-lowest dense store per sign and a zero count.
//
// Which rank: quantile(q) estimates the order statistic x_(floor(q * (count - 1))) of the sorted
// values (0-based), the DDSketch definition, and the estimate v' satisfies |v' - x| <= alpha * |x|
// unless x fell in a collapsed bin or |x| < min_indexable() (reported as 0).
//
// Cost: add is one std::log plus an array increment (~10-20 ns; see
// bench/metrics/quantile_sketch_bench.cpp), allocating only when the value range grows.
// quantile is O(bins). Memory 8 bytes per bin between the smallest and largest index seen.
class QuantileSketch {
 public:
  // QuantileSketch throws std::invalid_argument (setup misuse) if relative_accuracy is outside
  // [1e-6, 0.5] or max_bins is 0.
  explicit QuantileSketch(QuantileSketchOptions options = {});

  // add records one value. NaN and +-Inf are dropped and counted in rejected(). Values with
  // |v| < min_indexable() count as zero. May allocate when the range of indices grows.
  void add(double value);

  // quantile returns the estimate of the q-quantile (see the class comment for the rank), clamped
  // to [min(), max()]; the lowest and highest ranks return the exact min() and max(). O(bins). std::nullopt if the sketch is empty or q is NaN or outside [0, 1].
  std::optional<double> quantile(double q) const;

  // merge adds every value of `other` into this sketch; the result equals (bin for bin) the sketch
  // of the union of both inputs, sum up to rounding. Sketches with different relative accuracy
  // cannot be merged: returns an error and leaves this sketch unchanged. `other` may be *this.
  Result<void> merge(const QuantileSketch& other);

  // count returns the number of values added (rejected ones excluded).
  std::uint64_t count() const noexcept { return count_; }
  // sum returns the sum of the values added (exact up to double rounding, not sketched).
  double sum() const noexcept { return sum_; }
  // min and max return the exact extremes, or std::nullopt if empty.
  std::optional<double> min() const noexcept;
  std::optional<double> max() const noexcept;
  // rejected returns how many non-finite values add() has dropped.
  std::uint64_t rejected() const noexcept { return rejected_; }
  // relative_accuracy returns alpha as configured.
  double relative_accuracy() const noexcept { return options_.relative_accuracy; }
  // min_indexable returns the smallest magnitude with its own bin; smaller values count as zero.
  double min_indexable() const noexcept { return min_indexable_; }
  // bin_count returns the number of non-empty bins (both signs and zero), a measure of memory.
  std::size_t bin_count() const noexcept;
  // collapsed reports whether any bins were collapsed, i.e. whether low quantiles may be off.
  bool collapsed() const noexcept { return positive_.collapsed() || negative_.collapsed(); }
  // clear empties the sketch, keeping its options and allocated memory.
  void clear() noexcept;

 private:
  // Bins is a dense array of counts for indices [lo_, hi_] that folds its lowest indices into one
  // bin when the span would exceed max_bins (the DDSketch "collapsing lowest dense store").
  class Bins {
   public:
    void add(std::int32_t index, std::uint64_t n, std::size_t max_bins);
    bool empty() const noexcept { return total_ == 0; }
    std::uint64_t total() const noexcept { return total_; }
    bool collapsed() const noexcept { return collapsed_; }
    std::int32_t lo() const noexcept { return lo_; }
    std::int32_t hi() const noexcept { return hi_; }
    // at returns the count of `index` (0 outside [lo, hi]).
    std::uint64_t at(std::int32_t index) const noexcept;
    // index_at_rank returns the index holding the rank-th value (0-based, ascending index);
    // needs rank < total(). O(bins), walking from the nearer end.
    std::int32_t index_at_rank(std::uint64_t rank) const noexcept;
    std::size_t non_empty() const noexcept;
    void clear() noexcept;

   private:
    void ensure_storage(std::int32_t lo, std::int32_t hi, std::size_t max_bins);
    std::vector<std::uint64_t> counts_;  // counts_[k] is index offset_ + k
    std::int32_t offset_ = 0;
    std::int32_t lo_ = 0;
    std::int32_t hi_ = -1;
    std::uint64_t total_ = 0;
    bool collapsed_ = false;
  };

  std::int32_t index_of(double magnitude) const noexcept;
  double value_of(std::int32_t index) const noexcept;

  QuantileSketchOptions options_;
  double gamma_;
  double log_gamma_;
  double multiplier_;  // 1 / ln(gamma)
  double min_indexable_;
  Bins positive_;
  Bins negative_;  // indexed by |v|
  std::uint64_t zero_count_ = 0;
  std::uint64_t count_ = 0;
  std::uint64_t rejected_ = 0;
  double sum_ = 0;
  double min_ = 0;
  double max_ = 0;
};

}  // namespace inferscope::metrics
