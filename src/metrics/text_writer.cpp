// Writes families as Prometheus text 0.0.4 or OpenMetrics 1.0.0 (rules: reference §1-§2).
// Each series' label text was escaped once at creation, so a line is memcpy + number formatting.
#include <functional>
#include <vector>

#include <inferscope/metrics/detail/counter_series.h>
#include <inferscope/metrics/detail/gauge_series.h>
#include <inferscope/metrics/detail/histogram_series.h>

#include "detail/registry_access.h"
#include "detail/text_format.h"

namespace inferscope::metrics::detail {
namespace {

constexpr std::string_view kRejectedName = "inferscope_metrics_values_rejected_total";

// LineWriter appends `name{labels,extra} ` prefixes; values are appended by the caller.
void append_prefix(std::string& out, std::string_view name, std::string_view suffix,
                   std::string_view labels, std::string_view extra = {}) {
  out += name;
  out += suffix;
  if (!labels.empty() || !extra.empty()) {
    out += '{';
    out += labels;
    if (!labels.empty() && !extra.empty()) out += ',';
    out += extra;
    out += '}';
  }
  out += ' ';
}

void append_counter_value(std::string& out, const CounterSeries::Total& total) {
  if (total.fraction == 0.0) {
    append_uint(out, total.whole);  // exact above 2^53
  } else {
    append_double(out, static_cast<double>(total.whole) + total.fraction);
  }
}

// append_metadata writes HELP, TYPE (and UNIT for OpenMetrics) on the family name; OpenMetrics
// names a counter family without its "_total".
void append_metadata(std::string& out, const FamilyConfig& config, bool om) {
  static constexpr const char* kTypes[] = {"counter", "gauge", "histogram"};
  std::string_view meta_name = config.name;
  if (om && config.kind == MetricKind::kCounter) meta_name.remove_suffix(6);
  if (!config.help.empty()) {
    out += "# HELP ";
    out += meta_name;
    out += ' ';
    append_escaped_help(out, config.help, om);
    out += '\n';
  }
  out += "# TYPE ";
  out += meta_name;
  out += ' ';
  out += kTypes[static_cast<int>(config.kind)];
  out += '\n';
  if (om && !config.unit.empty()) {
    out += "# UNIT ";
    out += meta_name;
    out += ' ';
    out += config.unit;
    out += '\n';
  }
}

// le_labels pre-formats `le="..."` once per family and scrape.
std::vector<std::string> le_labels(const FamilyConfig& config, bool om) {
  std::vector<std::string> les;
  les.reserve(config.bounds->size() + 1);
  for (double bound : *config.bounds) {
    std::string le = "le=\"";
    if (om || config.decimal_le) {
      append_go_float(le, bound, true);
    } else {
      append_go_float(le, bound, false);
    }
    le += '"';
    les.push_back(std::move(le));
  }
  les.emplace_back("le=\"+Inf\"");
  return les;
}

void write_histograms(const FamilyCore& family, bool om, std::string& out) {
  const FamilyConfig& config = family.config();
  const std::vector<std::string> les = le_labels(config, om);
  std::vector<std::uint64_t> counts(les.size());
  std::vector<std::uint64_t> scratch(les.size());
  // OpenMetrics: with a negative bucket threshold the sum is no longer a counter and MUST NOT be
  // exposed. 0.0.4 has no such rule (and Prometheus expects _sum), so it always prints it.
  const bool print_sum = !om || config.bounds->empty() || config.bounds->front() >= 0;
  family.for_each_series([&](const SeriesBase& base) {
    const auto& series = static_cast<const HistogramSeries&>(base);
    std::fill(counts.begin(), counts.end(), 0);
    const double sum = series.read(counts.data(), scratch.data());
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < counts.size(); ++b) {
      cumulative += counts[b];
      append_prefix(out, config.name, "_bucket", series.labels(), les[b]);
      append_uint(out, cumulative);
      if (om) series.append_exemplar(b, out);  // text 0.0.4 has no exemplars: one fails the scrape
      out += '\n';
    }
    if (print_sum) {
      append_prefix(out, config.name, "_sum", series.labels());
      append_double(out, sum);
      out += '\n';
    }
    append_prefix(out, config.name, "_count", series.labels());
    append_uint(out, cumulative);  // == the +Inf bucket by construction
    out += '\n';
  });
}

void write_family(const FamilyCore& family, bool om, std::string& out) {
  const FamilyConfig& config = family.config();
  append_metadata(out, config, om);
  switch (config.kind) {
    case MetricKind::kCounter:
      family.for_each_series([&](const SeriesBase& base) {
        append_prefix(out, config.name, {}, base.labels());
        append_counter_value(out, static_cast<const CounterSeries&>(base).read());
        out += '\n';
      });
      break;
    case MetricKind::kGauge:
      family.for_each_series([&](const SeriesBase& base) {
        append_prefix(out, config.name, {}, base.labels());
        append_double(out, static_cast<const GaugeSeries&>(base).value());
        out += '\n';
      });
      break;
    case MetricKind::kHistogram:
      write_histograms(family, om, out);
      break;
  }
}

void write_rejected(const std::vector<std::unique_ptr<FamilyCore>>& families, bool om, std::string& out) {
  FamilyConfig config;
  config.name = kRejectedName;
  config.help =
      "Values ignored by Counter::add (negative or NaN) and Histogram::observe (NaN), and exemplars dropped "
      "for invalid labels, by family.";
  append_metadata(out, config, om);
  for (const auto& family : families) {
    const auto& rejects = family->rejects();
    if (rejects == nullptr) continue;
    const std::pair<const char*, std::uint64_t> rows[] = {
        {"negative", rejects->negative.load(std::memory_order_relaxed)},
        {"nan", rejects->nan.load(std::memory_order_relaxed)},
        {"exemplar", rejects->exemplar.load(std::memory_order_relaxed)}};
    for (const auto& [reason, count] : rows) {
      if (count == 0) continue;
      out += kRejectedName;
      out += "{family=\"";
      out += family->config().name;  // a valid metric name: nothing to escape
      out += "\",reason=\"";
      out += reason;
      out += "\"} ";
      append_uint(out, count);
      out += '\n';
    }
  }
}

}  // namespace

void RegistryAccess::run_hooks(const Registry& registry) {
  std::vector<std::function<void()>> hooks;
  {
    std::lock_guard lock(registry.hooks_mutex_);
    hooks = registry.hooks_;
  }
  for (const auto& hook : hooks) hook();
}

void RegistryAccess::write_families(const Registry& registry, ExpositionFormat format, std::string& out) {
  const bool om = format == ExpositionFormat::kOpenMetrics100;
  std::lock_guard lock(registry.mutex_);
  bool rejected_written = false;
  for (const auto& family : registry.families_) {
    write_family(*family, om, out);
    if (!rejected_written) {  // right after the first self-metric, the series-dropped family
      write_rejected(registry.families_, om, out);
      rejected_written = true;
    }
  }
  if (om) out += "# EOF\n";
}

}  // namespace inferscope::metrics::detail
