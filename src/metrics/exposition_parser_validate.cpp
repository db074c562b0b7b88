// Strict semantic checks of a parsed exposition (what promtool 2.42 misses; see the header).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "exposition_parser_scan.h"
#include "inferscope/metrics/exposition_parser.h"

namespace inferscope::metrics {
namespace {

using detail::printable;
using T = ParsedMetricType;

// series_key encodes a sample name and its labels (sorted by name, optionally without one label)
// with length prefixes, so values holding any byte cannot collide.
std::string series_key(std::string_view name, const std::vector<ParsedLabel>& labels, std::string_view skip = {}) {
  std::vector<const ParsedLabel*> sorted;
  sorted.reserve(labels.size());
  for (const ParsedLabel& label : labels) {
    if (skip.empty() || label.name != skip) sorted.push_back(&label);
  }
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->name < b->name; });
  std::string key;
  auto append = [&key](std::string_view part) {
    key += std::to_string(part.size());
    key.push_back(':');
    key.append(part);
  };
  append(name);
  for (const ParsedLabel* label : sorted) {
    append(label->name);
    append(label->value);
  }
  return key;
}

const std::string* find_label(const ParsedSample& sample, std::string_view name) {
  for (const ParsedLabel& label : sample.labels) {
    if (label.name == name) return &label.value;
  }
  return nullptr;
}

Error invalid(const ParsedSample& sample, std::string cause) {
  return make_error("cannot validate exposition at line " + std::to_string(sample.line) + ": " + std::move(cause));
}

bool is_count(double v) { return v >= 0 && std::isfinite(v) && v == std::floor(v); }

// Suffix of `sample` relative to its family name; sample names always start with it.
std::string_view suffix_of(const ParsedFamily& family, const ParsedSample& sample) {
  return std::string_view(sample.name).substr(std::min(family.name.size(), sample.name.size()));
}

bool suffix_fits(T type, std::string_view suffix, ExpositionTextFormat format) {
  const bool om = format == ExpositionTextFormat::kOpenMetrics100;
  switch (type) {
    case T::kCounter: return om ? (suffix == "_total" || suffix == "_created") : suffix.empty();
    case T::kHistogram:
      return suffix == "_bucket" || suffix == "_count" || suffix == "_sum" || (om && suffix == "_created");
    case T::kGaugeHistogram: return suffix == "_bucket" || suffix == "_gcount" || suffix == "_gsum";
    case T::kSummary: return suffix.empty() || suffix == "_count" || suffix == "_sum" || (om && suffix == "_created");
    case T::kInfo: return suffix == "_info";
    case T::kGauge:
    case T::kStateset:
    case T::kUnknown: return suffix.empty();
  }
  return false;
}

// Per-series state of one histogram (labels without le) or summary (labels without quantile).
struct Series {
  const ParsedSample* first = nullptr;
  const ParsedSample* inf_bucket = nullptr;
  const ParsedSample* count = nullptr;
  const ParsedSample* sum = nullptr;
  double last_bound = -std::numeric_limits<double>::infinity();
  double last_value = 0;
  bool has_bucket = false;
};

Result<void> check_histogram_sample(const ParsedFamily& family, const ParsedSample& sample, Series& series) {
  const std::string_view suffix = suffix_of(family, sample);
  const std::string* le = find_label(sample, "le");
  if (suffix != "_bucket") {
    if (le) return invalid(sample, "label le on " + printable(sample.name) + ", which is not a _bucket sample");
    if (suffix == "_count" || suffix == "_gcount") {
      if (!is_count(sample.value)) return invalid(sample, "histogram count " + printable(sample.name) + " is not a non-negative integer");
      series.count = &sample;
    } else if (suffix == "_sum" || suffix == "_gsum") {
      if (std::isnan(sample.value)) return invalid(sample, "histogram sum " + printable(sample.name) + " is NaN");
      series.sum = &sample;
    }
    return {};
  }
  if (!le) return invalid(sample, "histogram bucket " + printable(sample.name) + " without an le label");
  const auto bound = parse_exposition_float(*le);
  if (!bound || std::isnan(*bound)) return invalid(sample, "le=" + printable(*le) + " is not a number");
  if (series.inf_bucket) return invalid(sample, "bucket le=" + printable(*le) + " after the +Inf bucket");
  if (series.has_bucket && !(*bound > series.last_bound)) {
    return invalid(sample, "bucket le=" + printable(*le) + " does not increase over the previous bucket");
  }
  if (!is_count(sample.value)) return invalid(sample, "bucket value of le=" + printable(*le) + " is not a non-negative integer");
  if (series.has_bucket && sample.value < series.last_value) {
    return invalid(sample, "bucket le=" + printable(*le) + " is lower than the previous bucket (buckets are cumulative)");
  }
  series.has_bucket = true;
  series.last_bound = *bound;
  series.last_value = sample.value;
  if (std::isinf(*bound) && *bound > 0) series.inf_bucket = &sample;
  return {};
}

Result<void> finish_histogram(const Series& series) {
  if (!series.inf_bucket) return invalid(*series.first, "histogram series has no le=\"+Inf\" bucket");
  if (series.count && series.count->value != series.inf_bucket->value) {
    return invalid(*series.count, "count " + std::to_string(series.count->value) + " differs from the +Inf bucket " +
                                      std::to_string(series.inf_bucket->value));
  }
  if (series.sum && !series.count) return invalid(*series.sum, "histogram series has a sum but no count");
  return {};
}

Result<void> check_summary_sample(const ParsedFamily& family, const ParsedSample& sample, Series& series) {
  const std::string* quantile = find_label(sample, "quantile");
  if (!suffix_of(family, sample).empty()) {
    if (quantile) return invalid(sample, "label quantile on " + printable(sample.name) + ", which is not a quantile sample");
    return {};
  }
  if (!quantile) return invalid(sample, "summary sample " + printable(sample.name) + " without a quantile label");
  const auto q = parse_exposition_float(*quantile);
  if (!q || !(*q >= 0 && *q <= 1)) return invalid(sample, "quantile=" + printable(*quantile) + " is not a number in [0, 1]");
  if (series.has_bucket && !(*q > series.last_bound)) {
    return invalid(sample, "quantile=" + printable(*quantile) + " does not increase over the previous quantile");
  }
  series.has_bucket = true;
  series.last_bound = *q;
  return {};
}

// check_sample applies the per-sample rules that need no series state.
Result<void> check_sample(const ParsedFamily& family, const ParsedSample& sample, ExpositionTextFormat format) {
  if (!suffix_fits(family.type, suffix_of(family, sample), format)) {
    return invalid(sample, "sample name " + printable(sample.name) + " does not fit " + std::string(to_string(family.type)) +
                               " family " + printable(family.name));
  }
  const bool histogram = family.type == T::kHistogram || family.type == T::kGaugeHistogram;
  if (!histogram && find_label(sample, "le")) return invalid(sample, "label le on " + printable(sample.name) + " of a non-histogram family");
  if (family.type != T::kSummary && find_label(sample, "quantile")) {
    return invalid(sample, "label quantile on " + printable(sample.name) + " of a non-summary family");
  }
  if (family.type == T::kCounter && suffix_of(family, sample) != "_created" && (std::isnan(sample.value) || sample.value < 0)) {
    return invalid(sample, "counter " + printable(sample.name) + " is negative or NaN");
  }
  if (family.type == T::kInfo && sample.value != 1) return invalid(sample, "info sample " + printable(sample.name) + " is not 1");
  if (family.type == T::kStateset) {
    if (sample.value != 0 && sample.value != 1) return invalid(sample, "stateset sample " + printable(sample.name) + " is not 0 or 1");
    if (!find_label(sample, family.name)) return invalid(sample, "stateset sample without a label named " + printable(family.name));
  }
  return {};
}

Result<void> validate_family(const ParsedFamily& family, ExpositionTextFormat format, std::unordered_set<std::string>& seen) {
  const bool histogram = family.type == T::kHistogram || family.type == T::kGaugeHistogram;
  const bool summary = family.type == T::kSummary;
  // Series in order of first appearance, so the first failing one in the text is reported.
  std::vector<Series> series_list;
  std::unordered_map<std::string, std::size_t> series_index;
  for (const ParsedSample& sample : family.samples) {
    if (auto r = check_sample(family, sample, format); !r) return r;
    if (!seen.insert(series_key(sample.name, sample.labels)).second) {
      return invalid(sample, "duplicate series " + printable(sample.name) + " with the same labels");
    }
    if (!histogram && !summary) continue;
    auto [it, added] = series_index.emplace(series_key({}, sample.labels, histogram ? "le" : "quantile"), series_list.size());
    if (added) series_list.push_back(Series{.first = &sample});
    Series& series = series_list[it->second];
    auto r = histogram ? check_histogram_sample(family, sample, series) : check_summary_sample(family, sample, series);
    if (!r) return r;
  }
  if (histogram) {
    for (const Series& series : series_list) {
      if (auto r = finish_histogram(series); !r) return r;
    }
  }
  return {};
}

}  // namespace

Result<void> validate_exposition(const ParsedExposition& exposition) {
  std::unordered_set<std::string> seen;
  for (const ParsedFamily& family : exposition.families) {
    if (!family.contiguous) {
      return make_error("cannot validate exposition at line " + std::to_string(family.line) + ": family " +
                        printable(family.name) + " is split by other families");
    }
    if (auto r = validate_family(family, exposition.format, seen); !r) return r;
  }
  return {};
}

}  // namespace inferscope::metrics
