// Family registration and validation (see registry.h).
#include <inferscope/metrics/registry.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "detail/text_format.h"

namespace inferscope::metrics {
namespace {

using detail::MetricKind;

constexpr std::string_view kDroppedName = "inferscope_metrics_series_dropped_total";
constexpr std::string_view kRejectedName = "inferscope_metrics_values_rejected_total";

[[noreturn]] void fail(const std::string& name, const std::string& why) {
  throw std::invalid_argument("cannot register metric family \"" + name + "\": " + why);
}

// exposition_names lists every name a family prints (metadata and samples), for clash checks.
std::vector<std::string> exposition_names(const std::string& name, MetricKind kind) {
  switch (kind) {
    case MetricKind::kCounter: {
      const std::string base = name.substr(0, name.size() - 6);
      return {base, name, base + "_created"};
    }
    case MetricKind::kGauge:
      return {name};
    case MetricKind::kHistogram:
      return {name, name + "_bucket", name + "_count", name + "_sum", name + "_created"};
  }
  return {};
}

// check_name enforces the naming rules; `foreign` (MetricOptions::foreign_name) lifts only the
// "_total is for counters" rule, for names another system defined.
void check_name(const std::string& name, MetricKind kind, bool foreign) {
  if (!detail::is_valid_metric_name(name)) fail(name, "name must match [a-zA-Z_:][a-zA-Z0-9_:]*");
  const bool total = name.ends_with("_total");
  if (kind == MetricKind::kCounter && (!total || name.size() == 6)) fail(name, "counter names must end in \"_total\"");
  if (kind != MetricKind::kCounter && total && !foreign) {
    fail(name, "only counter names may end in \"_total\" (foreign_name allows another system's name)");
  }
  const std::string_view base = kind == MetricKind::kCounter ? std::string_view(name).substr(0, name.size() - 6) : name;
  for (std::string_view suffix : {"_bucket", "_count", "_sum", "_created"}) {
    if (base.ends_with(suffix)) fail(name, "name must not end in the reserved suffix \"" + std::string(suffix) + "\"");
  }
}

void check_labels(const std::string& name, const std::vector<std::string>& labels) {
  if (labels.size() > detail::kMaxLabels) fail(name, "more than 32 label names");
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::string& label = labels[i];
    if (!detail::is_valid_label_name(label)) {
      fail(name, "label name \"" + label + "\" must match [a-zA-Z_][a-zA-Z0-9_]* without a \"__\" prefix");
    }
    if (label == "le" || label == "quantile") fail(name, "label name \"" + label + "\" is reserved");
    for (std::size_t j = 0; j < i; ++j) {
      if (labels[j] == label) fail(name, "duplicate label name \"" + label + "\"");
    }
  }
}

void check_buckets(const std::string& name, const std::vector<double>& bounds) {
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i])) fail(name, "bucket bounds must be finite (+Inf is implicit)");
    if (i > 0 && !(bounds[i] > bounds[i - 1])) fail(name, "bucket bounds must be strictly increasing");
  }
}

}  // namespace

Registry::Registry(RegistryOptions options)
    : options_(options), shared_(std::make_unique<detail::RegistryShared>()) {
  if (options_.max_series_per_family == 0 || options_.max_series_total == 0) {
    throw std::invalid_argument("cannot create registry: series limits must be at least 1");
  }
  shared_->max_total = options_.max_series_total;
  detail::FamilyConfig dropped;
  dropped.kind = MetricKind::kCounter;
  dropped.name = kDroppedName;
  dropped.help = "Label sets refused by Family::with() and sent to the overflow series, by family and reason.";
  dropped.label_names = {"family", "reason"};
  dropped.max_series = std::numeric_limits<std::size_t>::max();
  dropped.self_metric = true;
  shared_->dropped = &add_family(std::move(dropped), exposition_names(std::string(kDroppedName), MetricKind::kCounter));
  // The rejected-values family is rendered from each family's RejectCounts; reserve its names.
  for (auto& claim : exposition_names(std::string(kRejectedName), MetricKind::kCounter)) claimed_.insert(claim);
}

Registry::~Registry() = default;

detail::FamilyConfig Registry::validated(const MetricOptions& options, MetricKind kind) const {
  check_name(options.name, kind, options.foreign_name);
  check_labels(options.name, options.label_names);
  if (!detail::is_valid_utf8(options.help)) fail(options.name, "help is not valid UTF-8");
  if (!options.unit.empty()) {
    if (!detail::is_valid_label_name(options.unit)) fail(options.name, "unit must match [a-zA-Z_][a-zA-Z0-9_]*");
    const std::string base = exposition_names(options.name, kind).front();
    if (!base.ends_with("_" + options.unit)) fail(options.name, "unit \"" + options.unit + "\" must be the name's suffix");
  }
  detail::FamilyConfig config;
  config.kind = kind;
  config.name = options.name;
  config.help = options.help;
  config.unit = options.unit;
  config.label_names = options.label_names;
  config.max_series = options.max_series.value_or(options_.max_series_per_family);
  return config;
}

detail::FamilyCore& Registry::add_family(detail::FamilyConfig config, const std::vector<std::string>& claims) {
  std::lock_guard lock(mutex_);
  for (const auto& claim : claims) {
    if (claimed_.contains(claim)) fail(config.name, "\"" + claim + "\" is already used by another family");
  }
  claimed_.insert(claims.begin(), claims.end());
  const bool unlabelled = config.label_names.empty();
  auto rejects = config.kind == MetricKind::kGauge ? nullptr : std::make_shared<detail::RejectCounts>();
  families_.push_back(std::make_unique<detail::FamilyCore>(std::move(config), shared_.get(), std::move(rejects)));
  detail::FamilyCore& core = *families_.back();
  if (unlabelled) core.find_or_create(nullptr, 0);  // always exported (client-library rule)
  return core;
}

CounterFamily& Registry::counter(const MetricOptions& options) {
  detail::FamilyConfig config = validated(options, MetricKind::kCounter);
  auto& core = add_family(std::move(config), exposition_names(options.name, MetricKind::kCounter));
  std::lock_guard lock(mutex_);
  counters_.push_back(std::unique_ptr<CounterFamily>(new CounterFamily(&core)));
  return *counters_.back();
}

GaugeFamily& Registry::gauge(const MetricOptions& options) {
  detail::FamilyConfig config = validated(options, MetricKind::kGauge);
  auto& core = add_family(std::move(config), exposition_names(options.name, MetricKind::kGauge));
  std::lock_guard lock(mutex_);
  gauges_.push_back(std::unique_ptr<GaugeFamily>(new GaugeFamily(&core)));
  return *gauges_.back();
}

HistogramFamily& Registry::histogram(const HistogramOptions& options) {
  detail::FamilyConfig config = validated(options, MetricKind::kHistogram);
  check_buckets(options.name, options.buckets);
  config.bounds = std::make_shared<const std::vector<double>>(options.buckets);
  config.decimal_le = options.decimal_le;
  auto& core = add_family(std::move(config), exposition_names(options.name, MetricKind::kHistogram));
  std::lock_guard lock(mutex_);
  histograms_.push_back(std::unique_ptr<HistogramFamily>(new HistogramFamily(&core)));
  return *histograms_.back();
}

void Registry::add_collect_hook(std::function<void()> hook) {
  std::lock_guard lock(hooks_mutex_);
  hooks_.push_back(std::move(hook));
}

}  // namespace inferscope::metrics
