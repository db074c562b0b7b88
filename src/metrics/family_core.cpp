// Label-values index and cardinality guard of a family (see detail/family_core.h).
#include <inferscope/metrics/detail/family_core.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>

#include <inferscope/metrics/detail/counter_series.h>
#include <inferscope/metrics/detail/gauge_series.h>
#include <inferscope/metrics/detail/histogram_series.h>

#include "detail/text_format.h"

namespace inferscope::metrics::detail {
namespace {

// encode_key builds the index key: each value length-prefixed, so ("a,b") and ("a","b") differ.
// Uses a thread-local buffer so a lookup hit allocates nothing after the first calls.
std::string_view encode_key(const std::string_view* values, std::size_t n) {
  thread_local std::string key;
  key.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const auto size = static_cast<std::uint32_t>(values[i].size());
    char prefix[sizeof size];
    std::memcpy(prefix, &size, sizeof size);
    key.append(prefix, sizeof prefix);
    key.append(values[i]);
  }
  return key;
}

const char* reason_name(int reason) {
  static constexpr const char* kNames[] = {"family_limit", "registry_limit", "invalid_label_value"};
  return kNames[reason];
}

}  // namespace

std::size_t FamilyCore::KeyHash::operator()(std::string_view key) const noexcept {
  return std::hash<std::string_view>{}(key);
}

FamilyCore::FamilyCore(FamilyConfig config, RegistryShared* shared, std::shared_ptr<RejectCounts> rejects)
    : config_(std::move(config)), shared_(shared), rejects_(std::move(rejects)) {}

FamilyCore::~FamilyCore() = default;

std::shared_ptr<SeriesBase> FamilyCore::find_or_create(const std::string_view* values, std::size_t n) {
  const std::size_t want = config_.label_names.size();
  if (n != want) {
    throw std::invalid_argument("cannot get series of " + config_.name + ": got " + std::to_string(n) +
                                " label values, want " + std::to_string(want));
  }
  const std::string_view key = encode_key(values, n);
  std::shared_ptr<SeriesBase> series;
  int drop = -1;
  {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) return it->second;
    const bool overflow_values =
        n > 0 && std::all_of(values, values + n, [](std::string_view v) { return v == kOverflowValue; });
    if (overflow_values) return overflow_locked();
    const bool limited = !config_.self_metric && n > 0;
    if (!std::all_of(values, values + n, [](std::string_view v) { return is_valid_utf8(v); })) {
      drop = static_cast<int>(DropReason::kInvalidLabelValue);
    } else if (limited && series_.size() >= config_.max_series) {
      drop = static_cast<int>(DropReason::kFamilyLimit);
    } else if (limited && shared_->total_series.fetch_add(1, std::memory_order_relaxed) >= shared_->max_total) {
      shared_->total_series.fetch_sub(1, std::memory_order_relaxed);
      drop = static_cast<int>(DropReason::kRegistryLimit);
    } else {
      if (!limited && !config_.self_metric) shared_->total_series.fetch_add(1, std::memory_order_relaxed);
      series = make_series(values, n);
      index_.emplace(std::string(key), series);
      series_.push_back(series);
      return series;
    }
    series = overflow_locked();
  }
  count_drop(static_cast<DropReason>(drop));
  return series;
}

bool FamilyCore::erase(const std::string_view* values, std::size_t n) {
  if (n != config_.label_names.size()) {
    throw std::invalid_argument("cannot remove series of " + config_.name + ": got " + std::to_string(n) +
                                " label values, want " + std::to_string(config_.label_names.size()));
  }
  const std::string_view key = encode_key(values, n);
  std::lock_guard lock(mutex_);
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  series_.erase(std::find(series_.begin(), series_.end(), it->second));
  index_.erase(it);
  if (!config_.self_metric) shared_->total_series.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

std::size_t FamilyCore::size() const {
  std::lock_guard lock(mutex_);
  return series_.size() + (overflow_ != nullptr ? 1 : 0);
}

std::shared_ptr<SeriesBase> FamilyCore::make_series(const std::string_view* values, std::size_t n) const {
  std::string labels;
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) labels += ',';
    labels += config_.label_names[i];
    labels += "=\"";
    append_escaped_label_value(labels, values[i]);
    labels += '"';
  }
  switch (config_.kind) {
    case MetricKind::kCounter:
      return std::make_shared<CounterSeries>(std::move(labels), rejects_);
    case MetricKind::kGauge:
      return std::make_shared<GaugeSeries>(std::move(labels), nullptr);
    case MetricKind::kHistogram:
      return std::make_shared<HistogramSeries>(std::move(labels), rejects_, config_.bounds);
  }
  return nullptr;
}

std::shared_ptr<SeriesBase> FamilyCore::overflow_locked() {
  if (overflow_ == nullptr) {
    const std::vector<std::string_view> values(config_.label_names.size(), kOverflowValue);
    overflow_ = make_series(values.data(), values.size());
    if (!config_.self_metric) shared_->total_series.fetch_add(1, std::memory_order_relaxed);
  }
  return overflow_;
}

void FamilyCore::count_drop(DropReason reason) {
  if (shared_->dropped == nullptr || shared_->dropped == this) return;
  const std::string_view values[] = {config_.name, reason_name(static_cast<int>(reason))};
  const auto series = shared_->dropped->find_or_create(values, 2);
  static_cast<CounterSeries&>(*series).add_whole(1);
}

}  // namespace inferscope::metrics::detail
