// File: lazy_series.h
// LazySeries caches one metric handle per combination of bounded label values (given as indices)
// and creates it with Family::with() on first use: combinations that never happen never show up
// in the exposition, and no lookup by string happens after the first use (the timeline recorder
// and serve's metrics use it). Example:
//   LazySeries<Histogram> ttft(family, {{"chat", "completion"}, {"m1", "other"}}); ttft.get({0, 1}).observe(s);
// Thread-safe (std::call_once per slot). get() never throws: a failing with() leaves a null handle.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/metrics/registry.h>

namespace inferscope::metrics {

// LazySeries holds count = product of the value-list sizes slots, each created on its first get().
template <class Metric>
class LazySeries {
 public:
  // LazySeries keeps `family` (which must outlive it); values[d] lists label d's allowed values.
  LazySeries(Family<Metric>& family, std::vector<std::vector<std::string>> values)
      : family_(&family), values_(std::move(values)) {
    count_ = 1;
    for (const auto& dimension : values_) count_ *= dimension.size();
    slots_ = std::make_unique<Slot[]>(count_);
  }

  // get returns the handle for the given value index per label (each < values[d].size(); an
  // out-of-range index is clamped to the last value, which callers make "other").
  Metric get(std::initializer_list<std::size_t> indices) noexcept {
    std::size_t flat = 0;
    std::size_t d = 0;
    for (std::size_t index : indices) {
      const std::size_t size = values_[d].size();
      flat = flat * size + (index < size ? index : size - 1);
      ++d;
    }
    Slot& slot = slots_[flat];
    std::call_once(slot.once, [&] { slot.metric = create(indices); });
    return slot.metric;
  }

  // precreate makes the series for these indices visible now (e.g. counters that must start at 0).
  void precreate(std::initializer_list<std::size_t> indices) noexcept { (void)get(indices); }

 private:
  struct Slot {
    std::once_flag once;
    Metric metric;
  };

  Metric create(std::initializer_list<std::size_t> indices) noexcept {
    try {
      std::vector<std::string_view> labels;
      labels.reserve(values_.size());
      std::size_t d = 0;
      for (std::size_t index : indices) {
        const auto& dimension = values_[d++];
        labels.emplace_back(dimension[index < dimension.size() ? index : dimension.size() - 1]);
      }
      return family_->with(std::span<const std::string_view>(labels));
    } catch (...) {
      return Metric{};  // setup bug (wrong label count): write to the null series, never crash
    }
  }

  Family<Metric>* family_;
  std::vector<std::vector<std::string>> values_;
  std::size_t count_ = 1;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace inferscope::metrics
