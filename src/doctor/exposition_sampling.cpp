#include "doctor/exposition_sampling.h"

#include <algorithm>
#include <cmath>

#include "dialect/detect.h"

namespace inferscope::doctor {
namespace {

bool matches(const metrics::ParsedSample& sample, const RoleSpec& spec, const std::string& model,
             const std::string& key, const std::string& group) {
  if (!spec.matchers.empty() && !dialect::matchers_hold(spec.matchers, sample.labels)) return false;
  if (!model.empty() && !spec.model_label.empty()) {
    auto v = metrics::label_value(sample, spec.model_label);
    if (v && *v != model) return false;
  }
  if (!spec.by_label.empty()) {
    auto v = metrics::label_value(sample, spec.by_label);
    if (!v || *v != key) return false;
  }
  if (!spec.group_label.empty()) {
    auto v = metrics::label_value(sample, spec.group_label);
    if (std::string_view(v ? *v : std::string_view()) != group) return false;
  }
  return true;
}

// Aggregate combines one round's matching samples of one series name (NaN when none matched).
struct Aggregate {
  double sum = 0, max = -INFINITY;
  int n = 0;
  void add(double v) {
    if (std::isnan(v)) return;
    sum += v;
    max = std::max(max, v);
    ++n;
  }
  double value(Aggregation a) const {
    if (n == 0) return kNaN;
    switch (a) {
      case Aggregation::kSum: return sum;
      case Aggregation::kMax: return max;
      case Aggregation::kAvg: return sum / n;
    }
    return kNaN;
  }
};

double aggregate(const ScrapeRound& round, const std::string& series, const RoleSpec& spec, const std::string& model,
                 const std::string& key, const std::string& group, Aggregation how) {
  Aggregate agg;
  for (const auto& e : round.expositions)
    for (const auto* s : metrics::find_samples(e, series))
      if (matches(*s, spec, model, key, group)) agg.add(s->value);
  return agg.value(how);
}

void fill_buckets(RoleSamples& r, const std::vector<ScrapeRound>& rounds, const std::string& model) {
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    std::map<double, double> by_le;
    for (const auto& e : rounds[i].expositions)
      for (const auto* s : metrics::find_samples(e, r.metric + "_bucket"))
        if (matches(*s, r.spec, model, r.key, r.group)) {
          auto le = metrics::label_value(*s, "le");
          if (!le) continue;
          auto bound = metrics::parse_exposition_float(*le);
          if (bound) by_le[*bound * r.spec.scale] += s->value;
        }
    for (auto& [le, count] : by_le) {
      auto& column = r.buckets[le];
      column.resize(rounds.size(), kNaN);
      column[i] = count;
    }
  }
}

}  // namespace

std::set<std::string> metric_names(const metrics::ParsedExposition& exposition) {
  std::set<std::string> names;
  for (const auto& family : exposition.families) {
    names.insert(family.name);
    for (const auto& s : family.samples) names.insert(s.name);
  }
  return names;
}

std::string choose_metric(const RoleSpec& spec, const std::set<std::string>& names, bool& renamed) {
  renamed = false;
  for (std::size_t i = 0; i < spec.metrics.size(); ++i) {
    auto wanted = series_names(spec, spec.metrics[i]);
    bool present = names.count(wanted.back()) > 0;
    if (spec.kind == RoleKind::kBusyFromIdle) present = names.count(spec.metrics[i]) > 0;
    if (spec.kind == RoleKind::kCounterRatio) present = names.count(wanted[0]) && names.count(wanted[1]);
    if (present) {
      renamed = i > 0;
      return spec.metrics[i];
    }
  }
  return {};
}

SampledRoles sample_rounds(const std::vector<ScrapeRound>& rounds, const std::string& model, SamplingReport& report,
                           const dialect::CustomDialect* custom) {
  SampledRoles out;
  std::set<std::string> names;
  for (const auto& round : rounds) {
    out.times.push_back(round.time);
    for (const auto& e : round.expositions) {
      auto n = metric_names(e);
      names.insert(n.begin(), n.end());
    }
  }
  report.dialects = custom ? std::vector<std::string>{"custom"} : detect_dialects(names);
  for (const RoleSpec& spec : custom ? role_specs_for(custom->table()) : role_specs_for(report.dialects)) {
    bool renamed = false;
    std::string metric = choose_metric(spec, names, renamed);
    if (metric.empty()) {
      if (spec.expected) report.missing.push_back(spec.id + " (" + spec.metrics.front() + ")");
      continue;
    }
    if (renamed) report.renamed.push_back(metric + " -> " + spec.metrics.front());
    // (group, key) pairs: one quantity per value of by_label (within its group_label's value).
    std::vector<std::pair<std::string, std::string>> keys{{"", ""}};
    if (!spec.by_label.empty()) {
      std::set<std::pair<std::string, std::string>> values;
      const std::string counted = spec.kind == RoleKind::kHistogram ? metric + "_count" : metric;
      for (const auto& round : rounds)
        for (const auto& e : round.expositions)
          for (const auto* s : metrics::find_samples(e, counted))
            if (auto v = metrics::label_value(*s, spec.by_label)) {
              auto g = spec.group_label.empty() ? std::nullopt : metrics::label_value(*s, spec.group_label);
              values.insert({std::string(g ? *g : std::string_view()), std::string(*v)});
            }
      keys.assign(values.begin(), values.end());
    }
    for (const auto& [group, key] : keys) {
      RoleSamples r;
      r.spec = spec;
      r.metric = metric;
      r.key = key;
      r.group = group;
      for (const auto& round : rounds) {
        switch (spec.kind) {
          case RoleKind::kHistogram:
            r.primary.push_back(aggregate(round, metric + "_sum", spec, model, key, group, Aggregation::kSum));
            r.secondary.push_back(aggregate(round, metric + "_count", spec, model, key, group, Aggregation::kSum));
            break;
          case RoleKind::kCounterRatio:
            r.primary.push_back(aggregate(round, metric, spec, model, key, group, Aggregation::kSum));
            r.secondary.push_back(aggregate(round, spec.denominator, spec, model, key, group, Aggregation::kSum));
            break;
          case RoleKind::kCounter:
            r.primary.push_back(aggregate(round, metric, spec, model, key, group, Aggregation::kSum));
            break;
          case RoleKind::kBusyFromIdle: {
            RoleSpec every_mode = spec;
            every_mode.matchers.clear();
            r.primary.push_back(aggregate(round, metric, spec, model, key, group, Aggregation::kSum));
            r.secondary.push_back(aggregate(round, metric, every_mode, model, key, group, Aggregation::kSum));
            break;
          }
          case RoleKind::kGauge:
            r.primary.push_back(aggregate(round, metric, spec, model, key, group, spec.aggregation));
            break;
        }
      }
      if (spec.scale != 1) {
        // Histogram sums, ratio numerators, counters and gauges carry the unit; counts do not.
        for (double& v : r.primary) v *= spec.scale;
      }
      if (spec.kind == RoleKind::kHistogram) fill_buckets(r, rounds, model);
      out.roles.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace inferscope::doctor
