// File: detail/family_core.h  -- DO NOT INCLUDE DIRECTLY (use <inferscope/metrics/family.h>).
// The untyped part of a family: validated metadata, the label-values -> series index, creation
// order, the cardinality guard and the overflow series. Family<Metric> is a typed view of it.
// Thread-safe: one mutex per family, taken by with()/remove()/size() and by rendering, never by
// the hot path (inc/set/observe go through handles).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <inferscope/metrics/detail/series_base.h>

namespace inferscope::metrics::detail {

// MetricKind is the family's type.
enum class MetricKind { kCounter, kGauge, kHistogram };

// kMaxLabels bounds label names per family, so with() can convert values on the stack.
inline constexpr std::size_t kMaxLabels = 32;

// kOverflowValue is every label value of a family's overflow series.
inline constexpr std::string_view kOverflowValue = "__overflow__";

// FamilyConfig is a family's validated registration data.
struct FamilyConfig {
  MetricKind kind = MetricKind::kCounter;
  std::string name;  // as registered (counters include _total)
  std::string help;
  std::string unit;
  std::vector<std::string> label_names;
  std::size_t max_series = 0;
  std::shared_ptr<const std::vector<double>> bounds;  // histograms only
  bool decimal_le = false;
  bool self_metric = false;  // registry's own families: no limits, not counted in the total
};

// RegistryShared is the registry-wide state every family of one registry points to. The registry
// outlives its families, so they keep a raw pointer.
struct RegistryShared {
  std::atomic<std::size_t> total_series{0};
  std::size_t max_total = 0;
  class FamilyCore* dropped = nullptr;  // inferscope_metrics_series_dropped_total{family,reason}
};

// FamilyCore implements the index and the cardinality guard.
class FamilyCore {
 public:
  FamilyCore(FamilyConfig config, RegistryShared* shared, std::shared_ptr<RejectCounts> rejects);
  ~FamilyCore();
  FamilyCore(const FamilyCore&) = delete;
  FamilyCore& operator=(const FamilyCore&) = delete;

  // find_or_create returns the series for values (n must equal the label count, else throws
  // std::invalid_argument). Invalid UTF-8 or a limit reached: the overflow series, and the refusal
  // is counted. A hit takes the family mutex and allocates nothing.
  std::shared_ptr<SeriesBase> find_or_create(const std::string_view* values, std::size_t n);
  // erase unlinks the series for values; false if absent. Handles keep the series alive.
  bool erase(const std::string_view* values, std::size_t n);
  // size returns the live series, overflow included once created.
  std::size_t size() const;
  const FamilyConfig& config() const noexcept { return config_; }
  const std::shared_ptr<RejectCounts>& rejects() const noexcept { return rejects_; }

  // for_each_series calls fn(const SeriesBase&) per live series in creation order, overflow last,
  // holding the family mutex (fn must not call back into this family).
  template <class Fn>
  void for_each_series(Fn&& fn) const {
    std::lock_guard lock(mutex_);
    for (const auto& s : series_) fn(*s);
    if (overflow_ != nullptr) fn(*overflow_);
  }

 private:
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const noexcept;
  };
  enum class DropReason { kFamilyLimit, kRegistryLimit, kInvalidLabelValue };

  std::shared_ptr<SeriesBase> make_series(const std::string_view* values, std::size_t n) const;
  std::shared_ptr<SeriesBase> overflow_locked();
  void count_drop(DropReason reason);

  FamilyConfig config_;
  RegistryShared* shared_;
  std::shared_ptr<RejectCounts> rejects_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<SeriesBase>, KeyHash, std::equal_to<>> index_;
  std::vector<std::shared_ptr<SeriesBase>> series_;  // creation order
  std::shared_ptr<SeriesBase> overflow_;
};

}  // namespace inferscope::metrics::detail
