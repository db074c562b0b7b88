// QuantileSketch (DDSketch). Index mapping: index(v) = ceil(ln(v) / ln(gamma)) with
// gamma = (1 + alpha) / (1 - alpha); bin i holds (gamma^(i-1), gamma^i] and reports
// 2 gamma^i / (gamma + 1), which is within alpha of anything in the bin.
//
// Why std::log and not a bit-trick approximation: bench/metrics/quantile_sketch_bench.cpp measures
// add() at ~13 ns with glibc's log on the shared 2-vCPU VM (BM_QuantileSketchAdd), close to the
// cost of a histogram observe; a polynomial approximation would need a corrected gamma to
// keep the guarantee, for a gain nobody has measured as needed.
#include <inferscope/metrics/quantile_sketch.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace inferscope::metrics {
namespace {

// Slack added when the index range grows, so a slowly widening range does not reallocate per add.
constexpr std::int64_t kMinGrowthSlack = 16;

}  // namespace

QuantileSketch::QuantileSketch(QuantileSketchOptions options) : options_(options) {
  if (!(options_.relative_accuracy >= 1e-6 && options_.relative_accuracy <= 0.5)) {
    throw std::invalid_argument("QuantileSketch: relative_accuracy must be in [1e-6, 0.5]");
  }
  if (options_.max_bins == 0) throw std::invalid_argument("QuantileSketch: max_bins must be >= 1");
  const double alpha = options_.relative_accuracy;
  gamma_ = (1 + alpha) / (1 - alpha);
  log_gamma_ = std::log1p(2 * alpha / (1 - alpha));  // ln(gamma) without cancellation for small alpha
  multiplier_ = 1 / log_gamma_;
  // Below DBL_MIN * gamma the bin's lower bound would be subnormal and lose relative precision.
  min_indexable_ = DBL_MIN * gamma_;
}

std::int32_t QuantileSketch::index_of(double magnitude) const noexcept {
  // |ln v| <= 745 and multiplier <= 5e5 (alpha >= 1e-6), so the result fits an int32 comfortably.
  return static_cast<std::int32_t>(std::ceil(std::log(magnitude) * multiplier_));
}

double QuantileSketch::value_of(std::int32_t index) const noexcept {
  // May overflow to +Inf for indices near DBL_MAX; quantile() clamps to max_ afterwards.
  return std::exp(static_cast<double>(index) * log_gamma_) * (2 / (gamma_ + 1));
}

void QuantileSketch::add(double value) {
  if (!std::isfinite(value)) {
    ++rejected_;
    return;
  }
  const double magnitude = std::fabs(value);
  if (magnitude < min_indexable_) {
    ++zero_count_;
  } else if (value > 0) {
    positive_.add(index_of(magnitude), 1, options_.max_bins);
  } else {
    negative_.add(index_of(magnitude), 1, options_.max_bins);
  }
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++count_;
  sum_ += value;
}

std::optional<double> QuantileSketch::quantile(double q) const {
  if (count_ == 0 || !(q >= 0.0 && q <= 1.0)) return std::nullopt;
  // 0-based position of the order statistic; count_ < 2^53 in any realistic run, so exact.
  const auto target = static_cast<std::uint64_t>(std::floor(q * static_cast<double>(count_ - 1)));
  // The extreme ranks are known exactly; this also keeps q=0 exact when low bins have collapsed.
  if (target == 0) return min_;
  if (target == count_ - 1) return max_;
  double estimate = 0;
  if (target < negative_.total()) {
    // Negative values ascend as their magnitude index descends.
    estimate = -value_of(negative_.index_at_rank(negative_.total() - 1 - target));
  } else if (target < negative_.total() + zero_count_) {
    estimate = 0;
  } else {
    estimate = value_of(positive_.index_at_rank(target - negative_.total() - zero_count_));
  }
  // The true order statistic lies in [min, max], so clamping can only reduce the error.
  return std::clamp(estimate, min_, max_);
}

Result<void> QuantileSketch::merge(const QuantileSketch& other) {
  if (other.options_.relative_accuracy != options_.relative_accuracy) {
    char message[160];
    std::snprintf(message, sizeof message,
                  "cannot merge quantile sketch from a sketch with relative accuracy %g: this one uses %g",
                  other.options_.relative_accuracy, options_.relative_accuracy);
    return make_error(message);
  }
  if (&other == this) {
    const QuantileSketch copy = other;
    return merge(copy);
  }
  if (other.count_ == 0) {
    rejected_ += other.rejected_;
    return {};
  }
  // Highest index first: our upper bound reaches its final value before lower bins arrive, so
  // collapsing happens exactly as it would have for the union added value by value.
  for (std::int32_t i = other.positive_.hi(); !other.positive_.empty() && i >= other.positive_.lo(); --i) {
    positive_.add(i, other.positive_.at(i), options_.max_bins);
  }
  for (std::int32_t i = other.negative_.hi(); !other.negative_.empty() && i >= other.negative_.lo(); --i) {
    negative_.add(i, other.negative_.at(i), options_.max_bins);
  }
  zero_count_ += other.zero_count_;
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
  rejected_ += other.rejected_;
  return {};
}

std::optional<double> QuantileSketch::min() const noexcept {
  if (count_ == 0) return std::nullopt;
  return min_;
}

std::optional<double> QuantileSketch::max() const noexcept {
  if (count_ == 0) return std::nullopt;
  return max_;
}

std::size_t QuantileSketch::bin_count() const noexcept {
  return positive_.non_empty() + negative_.non_empty() + (zero_count_ > 0 ? 1 : 0);
}

void QuantileSketch::clear() noexcept {
  positive_.clear();
  negative_.clear();
  zero_count_ = count_ = rejected_ = 0;
  sum_ = min_ = max_ = 0;
}

// ---- Bins

void QuantileSketch::Bins::add(std::int32_t index, std::uint64_t n, std::size_t max_bins) {
  if (n == 0) return;
  const auto max_span = static_cast<std::int64_t>(max_bins);
  if (total_ == 0) {
    lo_ = hi_ = index;
  } else if (index > hi_) {
    const std::int32_t old_hi = hi_;
    hi_ = index;
    if (static_cast<std::int64_t>(hi_) - lo_ + 1 > max_span) {
      // Fold every bin below the new lower bound into it. Bounded by max_bins iterations.
      const auto new_lo = static_cast<std::int32_t>(hi_ - max_span + 1);
      std::uint64_t folded = 0;
      for (std::int32_t i = lo_; i < new_lo && i <= old_hi; ++i) {
        folded += counts_[static_cast<std::size_t>(i - offset_)];
        counts_[static_cast<std::size_t>(i - offset_)] = 0;
      }
      lo_ = new_lo;
      collapsed_ = true;
      ensure_storage(lo_, hi_, max_bins);
      counts_[static_cast<std::size_t>(lo_ - offset_)] += folded;
    }
  } else if (index < lo_) {
    if (static_cast<std::int64_t>(hi_) - index + 1 > max_span) {
      index = static_cast<std::int32_t>(hi_ - max_span + 1);
      collapsed_ = true;
    }
    lo_ = std::min(lo_, index);
  }
  ensure_storage(lo_, hi_, max_bins);
  counts_[static_cast<std::size_t>(index - offset_)] += n;
  total_ += n;
}

void QuantileSketch::Bins::ensure_storage(std::int32_t lo, std::int32_t hi, std::size_t max_bins) {
  const auto size = static_cast<std::int64_t>(counts_.size());
  const bool grow_low = counts_.empty() || lo < offset_;
  const bool grow_high = counts_.empty() || hi >= offset_ + size;
  if (!grow_low && !grow_high) return;
  const std::int64_t span = static_cast<std::int64_t>(hi) - lo + 1;
  const std::int64_t slack =
      std::max<std::int64_t>(0, std::min(static_cast<std::int64_t>(max_bins) - span,
                                         std::max(span / 2, kMinGrowthSlack)));
  std::int64_t new_lo = lo;
  std::int64_t new_hi = hi;
  if (grow_low && grow_high) {
    new_lo -= slack / 2;
    new_hi += slack - slack / 2;
  } else if (grow_low) {
    new_lo -= slack;
  } else {
    new_hi += slack;
  }
  std::vector<std::uint64_t> grown(static_cast<std::size_t>(new_hi - new_lo + 1), 0);
  const std::int64_t copy_from = std::max<std::int64_t>(offset_, new_lo);
  const std::int64_t copy_to = std::min<std::int64_t>(offset_ + size - 1, new_hi);
  for (std::int64_t i = copy_from; i <= copy_to; ++i) {
    grown[static_cast<std::size_t>(i - new_lo)] = counts_[static_cast<std::size_t>(i - offset_)];
  }
  counts_ = std::move(grown);
  offset_ = static_cast<std::int32_t>(new_lo);
}

std::uint64_t QuantileSketch::Bins::at(std::int32_t index) const noexcept {
  if (total_ == 0 || index < lo_ || index > hi_) return 0;
  return counts_[static_cast<std::size_t>(index - offset_)];
}

std::int32_t QuantileSketch::Bins::index_at_rank(std::uint64_t rank) const noexcept {
  // Walk from the nearer end: tail quantiles (p99) of a latency sketch then cost a few bins.
  std::uint64_t seen = 0;
  if (rank < total_ / 2) {
    for (std::int32_t i = lo_; i < hi_; ++i) {
      seen += at(i);
      if (seen > rank) return i;
    }
    return hi_;
  }
  const std::uint64_t from_top = total_ - 1 - rank;
  for (std::int32_t i = hi_; i > lo_; --i) {
    seen += at(i);
    if (seen > from_top) return i;
  }
  return lo_;
}

std::size_t QuantileSketch::Bins::non_empty() const noexcept {
  if (total_ == 0) return 0;
  std::size_t bins = 0;
  for (std::int32_t i = lo_; i <= hi_; ++i) bins += at(i) > 0 ? 1 : 0;
  return bins;
}

void QuantileSketch::Bins::clear() noexcept {
  std::fill(counts_.begin(), counts_.end(), 0);
  lo_ = 0;
  hi_ = -1;
  total_ = 0;
  collapsed_ = false;
}

}  // namespace inferscope::metrics
