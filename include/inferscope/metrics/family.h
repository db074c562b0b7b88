// File: family.h
// Family<Metric>: all series of one metric name, one per combination of label values.
// Example: auto& f = registry.counter({.name = "app_requests_total", .help = "Requests.",
//                                      .label_names = {"route", "status"}});
//          Counter ok = f.with({"/v1/chat", "2xx"});  // once, at startup; keep the handle
// Thread-safe. with()/remove() take the family mutex: call them at startup or on rare events, never
// per request; the handle's inc/observe never lock.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include <inferscope/metrics/counter.h>
#include <inferscope/metrics/detail/family_core.h>
#include <inferscope/metrics/gauge.h>
#include <inferscope/metrics/histogram.h>

namespace inferscope::metrics {

class Registry;

// Family is a typed view of a registered family; it lives as long as its Registry.
template <class Metric>
class Family {
 public:
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  // with returns the series for these label values (same order as the label names), creating it on
  // first use. The handle stays valid for the program's life, even after remove(). Wrong value
  // count: throws std::invalid_argument (setup misuse). Invalid UTF-8 or past a cardinality limit:
  // returns the family's overflow series (every label "__overflow__") and counts the refusal in
  // inferscope_metrics_series_dropped_total{family,reason}. A hit allocates nothing (~30-60 ns:
  // mutex + hash); a miss allocates the series and its cached label text.
  Metric with(std::initializer_list<std::string_view> label_values) {
    return with(std::span<const std::string_view>(label_values.begin(), label_values.size()));
  }
  Metric with(std::span<const std::string_view> label_values) {
    return Metric(std::static_pointer_cast<typename Metric::Series>(
        core_->find_or_create(label_values.data(), label_values.size())));
  }
  Metric with(std::span<const std::string> label_values) {
    std::array<std::string_view, detail::kMaxLabels> views;
    if (label_values.size() > views.size()) throw std::invalid_argument("too many label values");
    for (std::size_t i = 0; i < label_values.size(); ++i) views[i] = label_values[i];
    return with(std::span<const std::string_view>(views.data(), label_values.size()));
  }

  // remove unlinks a series from exposition and frees its slot under the cardinality limits;
  // existing handles stay valid (their writes go nowhere visible). A later with() of the same
  // values creates a fresh series starting at zero. Returns false if no such series. Wrong value
  // count: throws std::invalid_argument.
  bool remove(std::initializer_list<std::string_view> label_values) {
    return core_->erase(label_values.begin(), label_values.size());
  }
  bool remove(std::span<const std::string_view> label_values) {
    return core_->erase(label_values.data(), label_values.size());
  }

  // size returns the number of live series, the overflow series included once used.
  std::size_t size() const { return core_->size(); }
  // name returns the family name as registered (counters include "_total").
  const std::string& name() const { return core_->config().name; }

 private:
  friend class Registry;
  explicit Family(detail::FamilyCore* core) noexcept : core_(core) {}
  detail::FamilyCore* core_;  // owned by the Registry
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

}  // namespace inferscope::metrics
