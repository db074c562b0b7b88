#include "doctor/prometheus_collector.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dialect/promql.h"
#include "doctor/exposition_sampling.h"
#include "doctor/role_spec.h"
#include "doctor/sampled_roles.h"

namespace inferscope::doctor {
namespace {

// One query of the batch and where its result goes.
struct Planned {
  std::size_t role;     // index into SampledRoles::roles
  int slot;             // 0 primary, 1 secondary, 2 buckets
  std::string expr;
};

std::string agg_name(Aggregation a) {
  switch (a) {
    case Aggregation::kSum: return "sum";
    case Aggregation::kMax: return "max";
    case Aggregation::kAvg: return "avg";
  }
  return "sum";
}

std::string selector_for(const std::string& name, const std::string& base, const RoleSpec& spec,
                         const std::string& key, const std::string& model, const std::string& group = {}) {
  std::vector<std::string> parts;
  if (!base.empty()) parts.push_back(base);
  if (!spec.matchers.empty()) parts.push_back(spec.matchers);
  if (!key.empty()) parts.push_back(spec.by_label + "=" + dialect::promql_string(key));
  // An endpoint's pool: `pool=""` matches the series without the label, as a scrape does.
  if (!key.empty() && !spec.group_label.empty()) parts.push_back(spec.group_label + "=" + dialect::promql_string(group));
  if (!model.empty() && !spec.model_label.empty())
    parts.push_back(spec.model_label + "=" + dialect::promql_string(model));
  std::string out = "{__name__=\"" + name + "\"";
  for (const auto& p : parts) out += "," + p;
  return out + "}";
}

}  // namespace

Result<std::string> selector_matchers(const std::string& selector) {
  std::string s = selector;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(s.begin());
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  if (s.empty()) return std::string();
  if (s.size() < 2 || s.front() != '{' || s.back() != '}')
    return make_error("cannot use --selector '" + selector + "': expected label matchers in braces, e.g. {job=\"vllm\"}");
  std::string inner = s.substr(1, s.size() - 2);
  if (inner.find_first_of("{}") != std::string::npos)
    return make_error("cannot use --selector '" + selector + "': nested braces");
  return inner;
}

namespace {

// custom_name_pattern: a PromQL regex of a custom mapping's series names (regex characters in
// metric names are only ':' and '_', neither special).
std::string custom_name_pattern(const dialect::CustomDialect& custom) {
  std::string out;
  for (const RoleSpec& spec : role_specs_for(custom.table())) {
    for (const std::string& metric : spec.metrics) {
      for (const std::string& name : series_names(spec, metric)) out += (out.empty() ? "" : "|") + name;
    }
  }
  return out;
}

}  // namespace

Result<Snapshot> collect_from_prometheus(const promapi::PrometheusClient& client, const PrometheusWindow& w,
                                         CollectStats* stats) {
  const auto started = std::chrono::steady_clock::now();
  auto inner = selector_matchers(w.selector);
  if (!inner) return inner.error();
  const double incident_start = w.at - w.window_s, baseline_start = incident_start - w.baseline_s;
  int queries = 0;

  // Targets (Prometheus only; other APIs may not have the endpoint) also give the scrape interval.
  Snapshot snap;
  double scrape_interval = 0;
  auto targets = client.targets();
  ++queries;
  std::set<std::string> jobs_wanted;
  std::set<std::string> hosts;  // hosts of the selected targets: where their host CPU is read
  // Targets whose health reads down now, with their snap.targets_down line.
  struct DownTarget {
    std::string job, instance, line;
  };
  std::vector<DownTarget> down_now;
  if (targets) {
    // Only targets the selector could mean: a job="x" matcher narrows them.
    std::string job;
    auto pos = inner->find("job=\"");
    if (pos != std::string::npos) {
      auto end = inner->find('"', pos + 5);
      if (end != std::string::npos) job = inner->substr(pos + 5, end - pos - 5);
    }
    for (const auto& t : *targets) {
      auto j = t.labels.find("job");
      if (!job.empty() && (j == t.labels.end() || j->second != job)) continue;
      if (job.empty() && j != t.labels.end() && j->second == "prometheus") continue;
      ++snap.targets_total;
      if (auto inst = t.labels.find("instance"); inst != t.labels.end()) {
        std::string h = inst->second;
        if (!h.empty() && h.front() == '[') h.resize(std::min(h.size(), h.find(']') + 1));  // [v6]:port
        else if (auto colon = h.rfind(':'); colon != std::string::npos) h.resize(colon);
        if (!h.empty()) hosts.insert(h);
      }
      scrape_interval = std::max(scrape_interval, t.scrape_interval_s);
      if (t.health == "down") {
        auto inst = t.labels.find("instance");
        const std::string job_name = j == t.labels.end() ? std::string() : j->second;
        const std::string instance = inst == t.labels.end() ? std::string() : inst->second;
        down_now.push_back({job_name, instance,
                            (job_name.empty() ? std::string("?") : job_name) + "/" +
                                (instance.empty() ? t.scrape_url : instance) + ": " + t.last_error});
      }
    }
  }
  // Prometheus' health is its latest scrape's, read now: one scrape that timed out on a loaded
  // host reads down while every other scrape of the window succeeded, and a window that ended in
  // the past is not judged by the present. A target is down for this window when no scrape in
  // its last two intervals up to the window's end succeeded (`up`, which Prometheus writes at
  // every scrape, success or not); where `up` has no sample there for it (a selector on labels
  // `up` lacks, a target newer than that), by its health as before.
  if (!down_now.empty()) {
    const double interval = scrape_interval > 0 ? scrape_interval : 15;
    const int lookback_s = static_cast<int>(std::ceil(2.5 * interval));
    const std::string up_query = "max by (job, instance) (max_over_time(up" +
                                 (inner->empty() ? std::string() : "{" + *inner + "}") + "[" +
                                 std::to_string(lookback_s) + "s]))";
    auto up = client.query(up_query, w.at);
    ++queries;
    std::map<std::pair<std::string, std::string>, double> last_up;
    if (up)
      for (const auto& series : up->series) {
        auto job = series.labels.find("job");
        auto inst = series.labels.find("instance");
        if (job != series.labels.end() && inst != series.labels.end() && !series.points.empty())
          last_up[{job->second, inst->second}] = series.points.back().value;
      }
    for (const DownTarget& t : down_now) {
      auto it = last_up.find({t.job, t.instance});
      if (it == last_up.end() || !(it->second > 0)) snap.targets_down.push_back(t.line);
    }
  }

  // Which metrics exist for this selector over the whole range: one series lookup.
  std::string name_re = w.custom ? custom_name_pattern(*w.custom) : name_pattern();
  std::string match = "{__name__=~\"" + name_re + "\"" + (inner->empty() ? "" : "," + *inner) + "}";
  auto series = client.series({match}, baseline_start, w.at);
  ++queries;
  if (!series) return series.error();
  std::set<std::string> names;
  // Each series name's label sets: the values a role split by a label (dependency, pool, endpoint) reads.
  std::map<std::string, std::vector<const std::map<std::string, std::string>*>> series_labels;
  for (const auto& labels : *series) {
    auto n = labels.find("__name__");
    if (n == labels.end()) continue;
    names.insert(n->second);
    series_labels[n->second].push_back(&labels);
  }
  auto dialects = w.custom ? std::vector<std::string>{"custom"} : detect_dialects(names);
  for (std::size_t i = 0; i < dialects.size(); ++i) snap.dialect += (i ? "+" : "") + dialects[i];

  double step = w.step_s;
  if (step <= 0) {
    double range = w.at - baseline_start;
    step = std::max({scrape_interval > 0 ? scrape_interval : 15.0, std::ceil(range / 720.0), 1.0});
    // A window must hold a few steps to have a noise estimate.
    step = std::min(step, std::max(1.0, std::floor(w.window_s / 4)));
    if (scrape_interval > 0) step = std::max(step, scrape_interval);
  }

  // Plan the batch.
  SampledRoles sampled;
  // Grid: from one step before the baseline to the window end, aligned on the end.
  int steps = static_cast<int>(std::ceil((w.at - baseline_start) / step));
  for (int k = steps + 1; k >= 0; --k) sampled.times.push_back(w.at - k * step);
  std::vector<Planned> plan;
  std::map<std::string, std::string> e2e_series;  // e2e series name -> its model label
  for (const RoleSpec& spec : w.custom ? role_specs_for(w.custom->table()) : role_specs_for(dialects)) {
    bool renamed = false;
    std::string metric = choose_metric(spec, names, renamed);
    if (metric.empty()) {
      if (spec.expected) snap.missing.push_back(spec.id + " (" + spec.metrics.front() + ")");
      continue;
    }
    if (spec.id == "e2e")
      for (const std::string& n : series_names(spec, metric)) e2e_series.emplace(n, spec.model_label);
    if (renamed) snap.renamed.push_back(metric + " -> " + spec.metrics.front());
    // (group, key) pairs: one quantity per value of by_label (within its group_label's value).
    std::vector<std::pair<std::string, std::string>> keys{{"", ""}};
    if (!spec.by_label.empty()) {
      std::set<std::pair<std::string, std::string>> values;
      const std::string counted = spec.kind == RoleKind::kHistogram ? metric + "_count" : metric;
      for (const auto* labels : series_labels[counted]) {
        auto v = labels->find(spec.by_label);
        if (v == labels->end()) continue;
        auto g = spec.group_label.empty() ? labels->end() : labels->find(spec.group_label);
        values.insert({g == labels->end() ? std::string() : g->second, v->second});
      }
      keys.assign(values.begin(), values.end());
    }
    for (const auto& [group_value, key_value] : keys) {
      const std::string key = key_value, group = group_value;
      RoleSamples r;
      r.spec = spec;
      r.metric = metric;
      r.key = key;
      r.group = group;
      std::size_t index = sampled.roles.size();
      auto sel = [&](const std::string& name) { return selector_for(name, *inner, r.spec, key, w.model, group); };
      switch (spec.kind) {
        case RoleKind::kHistogram:
          plan.push_back({index, 0, "sum(" + sel(metric + "_sum") + ")"});
          plan.push_back({index, 1, "sum(" + sel(metric + "_count") + ")"});
          plan.push_back({index, 2, "sum by (le) (" + sel(metric + "_bucket") + ")"});
          break;
        case RoleKind::kCounter: plan.push_back({index, 0, "sum(" + sel(metric) + ")"}); break;
        case RoleKind::kGauge: plan.push_back({index, 0, agg_name(spec.aggregation) + "(" + sel(metric) + ")"}); break;
        case RoleKind::kCounterRatio:
          plan.push_back({index, 0, "sum(" + sel(metric) + ")"});
          plan.push_back({index, 1, "sum(" + sel(spec.denominator) + ")"});
          break;
        case RoleKind::kBusyFromIdle: {
          RoleSpec every_mode = spec;
          every_mode.matchers.clear();
          plan.push_back({index, 0, "sum(" + sel(metric) + ")"});
          plan.push_back({index, 1, "sum(" + selector_for(metric, *inner, every_mode, key, w.model, group) + ")"});
          break;
        }
      }
      r.primary.assign(sampled.times.size(), kNaN);
      if (spec.kind == RoleKind::kHistogram || spec.kind == RoleKind::kCounterRatio ||
          spec.kind == RoleKind::kBusyFromIdle)
        r.secondary.assign(sampled.times.size(), kNaN);
      sampled.roles.push_back(std::move(r));
    }
  }
  // Host CPU comes from the exporter of the host the server runs on (node-exporter is a job of
  // its own): matched by the selected targets' host, else by the selector itself.
  bool host_read = false;
  for (const auto& r : sampled.roles) host_read |= r.spec.id == "host_cpu_busy";
  if (!host_read) {
    std::string host_matcher = *inner;
    if (!hosts.empty()) {
      host_matcher = "instance=~\"(";
      bool first = true;
      for (const auto& h : hosts) {
        host_matcher += first ? "" : "|";
        first = false;
        for (char c : h) {
          if (std::string_view(".+*?()[]{}|^$\\").find(c) != std::string_view::npos) host_matcher += "\\\\";
          host_matcher += c == '"' ? std::string("\\\"") : std::string(1, c);
        }
      }
      host_matcher += "):[0-9]+\"";
    }
    for (const RoleSpec& spec : host_specs()) {
      RoleSamples r;
      r.spec = spec;
      r.metric = spec.metrics.front();
      RoleSpec every_mode = spec;
      every_mode.matchers.clear();
      std::size_t index = sampled.roles.size();
      plan.push_back({index, 0, "sum(" + selector_for(r.metric, host_matcher, spec, "", "") + ")"});
      plan.push_back({index, 1, "sum(" + selector_for(r.metric, host_matcher, every_mode, "", "") + ")"});
      r.primary.assign(sampled.times.size(), kNaN);
      r.secondary.assign(sampled.times.size(), kNaN);
      sampled.roles.push_back(std::move(r));
    }
  }

  std::vector<promapi::QueryRequest> batch;
  for (const auto& p : plan) batch.push_back({p.expr, sampled.times.back(), sampled.times.front(), step});
  auto results = client.query_all(batch);
  queries += static_cast<int>(batch.size());
  auto grid_index = [&](double t) -> long {
    long i = std::lround((t - sampled.times.front()) / step);
    return i >= 0 && i < static_cast<long>(sampled.times.size()) ? i : -1;
  };
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (!results[i]) return results[i].error();
    RoleSamples& r = sampled.roles[plan[i].role];
    for (const auto& s : results[i]->series) {
      std::vector<double>* column = nullptr;
      if (plan[i].slot == 0) column = &r.primary;
      else if (plan[i].slot == 1) column = &r.secondary;
      else {
        auto le = s.labels.find("le");
        if (le == s.labels.end()) continue;
        auto bound = promapi::parse_sample_value(le->second);
        if (!bound) continue;
        column = &r.buckets[*bound * r.spec.scale];
        column->assign(sampled.times.size(), kNaN);
      }
      const double scale = plan[i].slot == 0 ? r.spec.scale : 1.0;
      for (const auto& p : s.points)
        if (long k = grid_index(p.time); k >= 0) (*column)[static_cast<std::size_t>(k)] = p.value * scale;
    }
  }

  Snapshot built = build_snapshot(sampled, {baseline_start, incident_start}, {incident_start, w.at});
  // When the data starts: the e2e metric's first sample, else a job queue's depth's (the queue
  // exists from its first job on; the collector's own gauges, its workers' 0 among them, from
  // the start of collection), else any role's.
  double first_any = kNaN, first_e2e = kNaN, first_queue = kNaN;
  for (const auto& r : sampled.roles) {
    for (const auto* column : {&r.primary, &r.secondary})
      for (std::size_t k = 0; k < column->size(); ++k)
        if (!std::isnan((*column)[k])) {
          double t = sampled.times[k];
          if (!(first_any <= t)) first_any = t;
          if (r.spec.id == "e2e" && !(first_e2e <= t)) first_e2e = t;
          if (r.spec.id == to_string(SignalId::kQueueDepth) && !(first_queue <= t)) first_queue = t;
          break;
        }
  }
  built.data_start = !std::isnan(first_e2e) ? first_e2e : !std::isnan(first_queue) ? first_queue : first_any;
  built.source = "prometheus";
  built.dialect = snap.dialect;
  built.targets_total = snap.targets_total;
  built.targets_down = snap.targets_down;
  built.missing = snap.missing;
  built.renamed = snap.renamed;
  // vLLM's e2e series carry the data-parallel rank (`engine`) even where another dialect's e2e
  // metric is read: they say which engines an instance runs (localize.h reads them rank by rank).
  if (!w.custom && std::find(dialects.begin(), dialects.end(), "vllm") != dialects.end()) {
    for (const RoleSpec& spec : role_specs_for(std::vector<std::string>{"vllm"})) {
      bool renamed = false;
      const std::string metric = spec.id == "e2e" ? choose_metric(spec, names, renamed) : std::string();
      if (!metric.empty())
        for (const std::string& n : series_names(spec, metric)) e2e_series.emplace(n, spec.model_label);
    }
  }
  // Where the latency came from: the job / instance / model (and engine) of each e2e series.
  std::set<Where> sources;
  for (const auto& labels : *series) {
    auto n = labels.find("__name__");
    if (n == labels.end()) continue;
    auto e2e = e2e_series.find(n->second);
    if (e2e == e2e_series.end()) continue;
    auto value = [&](const std::string& key) {
      auto it = key.empty() ? labels.end() : labels.find(key);
      return it == labels.end() ? std::string() : it->second;
    };
    sources.insert({value("job"), value("instance"), value(e2e->second), value("engine")});
  }
  built.sources.assign(sources.begin(), sources.end());
  if (dialects.empty())
    built.notes.push_back("no inferscope, vLLM or llama.cpp metrics match " +
                          (w.selector.empty() ? std::string("any series") : "selector " + w.selector) +
                          " in this range");
  if (stats) {
    stats->queries = queries;
    stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    stats->step_s = step;
  }
  return built;
}

}  // namespace inferscope::doctor
