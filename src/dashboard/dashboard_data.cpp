// Why one big batch: every panel of one refresh is evaluated in one query_all call (bounded
// parallelism in promapi), then the empty ones get one more instant query that tells "metric not
// exposed" from "exposed but no traffic", so a refresh costs two round trips whatever the range.
#include "dashboard/dashboard_data.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "dashboard/panel_catalog.h"
#include "dashboard/panel_queries.h"
#include "dashboard/target_discovery.h"
#include "dialect/dialect.h"
#include "dialect/promql.h"

namespace inferscope::dashboard {
namespace {

using nlohmann::json;

constexpr std::pair<std::string_view, double> kRanges[] = {
    {"15m", 900}, {"1h", 3600}, {"3h", 10800}, {"6h", 21600}, {"12h", 43200}, {"24h", 86400}, {"2d", 172800}, {"7d", 604800}};
constexpr double kSteps[] = {5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400};
constexpr std::string_view kNowWindow = "5m";
constexpr double kNowWindowSeconds = 300;
constexpr std::string_view kBaselineWindow = "30m";
// The charts that plot exemplars, and the latency role whose histogram carries them.
constexpr std::pair<std::string_view, dialect::Role> kExemplarPanels[] = {{"e2e_latency", dialect::Role::kE2e},
                                                                          {"ttft", dialect::Role::kTtft}};
constexpr std::size_t kMaxExemplarPoints = 300;

std::string seconds_text(double s) { return std::to_string(static_cast<long long>(std::ceil(s))) + "s"; }

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string range_name(double seconds) {
  for (const auto& [name, s] : kRanges) {
    if (s == seconds) return std::string(name);
  }
  return seconds_text(seconds);
}

json panel_json(const PanelSpec& p) {
  json j = {{"id", p.id}, {"title", p.title}, {"kind", to_string(p.kind)}, {"unit", p.unit}};
  if (!p.right_unit.empty()) j["right_unit"] = p.right_unit;
  if (!p.description.empty()) j["description"] = p.description;
  return j;
}

// shown_rows is the page's rows: the Queue row only when up has a queue target.
std::vector<const RowSpec*> shown_rows(bool queue_targets) {
  std::vector<const RowSpec*> out;
  for (const RowSpec& row : dashboard_rows()) {
    if (!row.queue_targets_only || queue_targets) out.push_back(&row);
  }
  return out;
}

json rows_json(bool queue_targets) {
  json rows = json::array();
  for (const RowSpec* shown : shown_rows(queue_targets)) {
    const RowSpec& row = *shown;
    json panels = json::array();
    for (const PanelSpec& p : row.panels) panels.push_back(panel_json(p));
    rows.push_back({{"id", row.id}, {"title", row.title}, {"panels", panels}});
  }
  return rows;
}

json targets_json(const Targets& targets, const std::map<std::string, std::string>& notes,
                  const std::vector<std::string>& queue_jobs) {
  json out = json::array();
  for (const auto& job : targets.jobs) {
    const auto note = notes.find(job.job);
    const bool queue = std::find(queue_jobs.begin(), queue_jobs.end(), job.job) != queue_jobs.end();
    out.push_back({{"id", job.job},
                   {"job", job.job},
                   {"dialect", job.dialect ? std::string(dialect::to_string(*job.dialect))
                                           : std::string(queue ? "redis" : "unknown")},
                   {"instances", job.instances},
                   {"up", job.instances > 0 && job.instances_up == job.instances},
                   {"models", job.models},
                   {"note", note == notes.end() ? std::string() : note->second}});
  }
  return out;
}

// Presence maps metric name -> jobs exposing it now.
using Presence = std::map<std::string, std::set<std::string>>;

std::string join(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// empty_reason explains why a query with an expression returned nothing usable.
// presence_key is the selector of a query's first metric with the binding's fixed matchers.
std::string presence_key(const PanelQuery& q) {
  if (q.metrics.empty()) return "";
  return q.fixed_matchers.empty() ? q.metrics.front() : q.metrics.front() + "{" + q.fixed_matchers + "}";
}

// empty_reason explains why a query with an expression returned nothing usable.
std::string empty_reason(const PanelQuery& q, const Presence& presence, const std::string& job,
                         bool restricted_to_job, double range_s) {
  if (q.metrics.empty()) return "the query returned no samples";
  const std::string& metric = q.metrics.front();
  auto it = presence.find(metric);
  if (it == presence.end() || it->second.empty()) {
    for (const auto& old : q.legacy) {
      auto o = presence.find(old);
      if (o != presence.end() && !o->second.empty()) {
        return "metric " + metric + " not found; " + join(o->second) + " still expose the older name " + old +
               " (renamed: upgrade the server or its dashboards)";
      }
    }
    if (q.dialect_title == queue_table().title) {
      return "metric " + metric + " not found on any target (a queue system that cannot tell it has no such "
             "series: `inferscope up --status` says why, per queue)";
    }
    return "metric " + metric + " not found on any target";
  }
  if (restricted_to_job && !it->second.count(job)) {
    return "metric " + metric + " not found on target job=" + job + " (exposed by job " + join(it->second) + ")";
  }
  if (!q.fixed_matchers.empty()) {
    auto sel = presence.find(presence_key(q));
    if (sel != presence.end() && (sel->second.empty() || (restricted_to_job && !sel->second.count(job)))) {
      return "no series " + presence_key(q) + (restricted_to_job ? " on target job=" + job : " on any target") +
             " (none observed yet)";
    }
  }
  return "metric " + metric + " is exposed but had no observations in the last " + range_name(range_s) +
         (q.dialect_title == queue_table().title ? " (no job seen starting?)" : " (no finished requests?)");
}

// PanelNote is why one query of a panel has no data; `label` names its series ("" for the panel).
struct PanelNote {
  std::string label;
  std::string reason;
};

// merged_notes says each reason once, with the series it applies to ("p50, p95: metric X not
// found on any target"): a panel's queries often fail for the same reason, and the page used to
// repeat the same sentence two or three times per panel.
std::vector<std::string> merged_notes(const std::vector<PanelNote>& notes) {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;  // first-seen order
  for (const PanelNote& n : notes) {
    auto it = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& r) { return r.first == n.reason; });
    if (it == by_reason.end()) it = by_reason.insert(by_reason.end(), {n.reason, {}});
    if (std::find(it->second.begin(), it->second.end(), n.label) == it->second.end()) it->second.push_back(n.label);
  }
  std::vector<std::string> out;
  for (const auto& [reason, labels] : by_reason) {
    // A reason that holds for the whole panel (no label) needs no list of series.
    const bool whole = std::find(labels.begin(), labels.end(), std::string()) != labels.end();
    out.push_back(whole ? reason : join(std::set<std::string>(labels.begin(), labels.end())) + ": " + reason);
  }
  return out;
}

struct SeriesOut {
  std::string label;
  bool right = false;
  std::vector<double> values;
};

}  // namespace

std::optional<double> time_range_seconds(std::string_view range) noexcept {
  for (const auto& [name, s] : kRanges) {
    if (name == range) return s;
  }
  return std::nullopt;
}

double choose_step(double range_s, double scrape_interval_s, std::size_t max_points) noexcept {
  const double at_least = std::max(scrape_interval_s, range_s / static_cast<double>(std::max<std::size_t>(max_points, 2) - 1));
  for (double s : kSteps) {
    if (s >= at_least) return s;
  }
  return std::ceil(at_least);
}

Result<std::unique_ptr<DashboardData>> DashboardData::create(DashboardOptions options) {
  promapi::ClientOptions client_options;
  client_options.timeout = options.query_timeout;
  client_options.tls = options.tls;
  auto client = promapi::PrometheusClient::create(options.prometheus_url, client_options);
  if (!client) return client.error();
  return std::unique_ptr<DashboardData>(new DashboardData(std::move(*client), std::move(options)));
}

DashboardData::DashboardData(promapi::PrometheusClient client, DashboardOptions options)
    : client_(std::move(client)), options_(std::move(options)) {}

double DashboardData::now() const {
  if (options_.now) return options_.now();
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::size_t DashboardData::cache_entries_for_test() {
  std::lock_guard lock(mutex_);
  return cache_.size();
}

std::string DashboardData::meta_json() {
  const double t = now();
  {
    std::lock_guard lock(mutex_);
    auto it = cache_.find("meta");
    if (it != cache_.end() && it->second.expires > t) return it->second.body;
  }
  json ranges = json::array();
  for (const auto& [name, s] : kRanges) ranges.push_back(name);
  json out = {{"schema_version", 1}, {"ranges", ranges}, {"default_range", "1h"}, {"rows", rows_json(!options_.queue_jobs.empty())},
              {"prometheus_url", options_.prometheus_url}};
  auto targets = targets_at(t);
  if (targets) {
    out["targets"] = targets_json(*targets,
                                  options_.target_notes ? options_.target_notes() : std::map<std::string, std::string>(),
                                  options_.queue_jobs);
    out["models"] = targets->models;
    const JobInfo* def = default_job(*targets);
    out["default_target"] = def ? def->job : "";
    out["prometheus"] = {{"reachable", true}, {"error", ""}};
  } else {
    out["targets"] = json::array();
    out["models"] = json::array();
    out["default_target"] = "";
    out["prometheus"] = {{"reachable", false}, {"error", targets.error().message}};
  }
  std::string body = out.dump();
  std::lock_guard lock(mutex_);
  cache_["meta"] = {t + 5, body};
  return body;
}

Result<std::string> DashboardData::data_json(std::string_view range, std::string_view target, std::string_view model) {
  auto range_s = time_range_seconds(range);
  if (!range_s) return make_error("unknown range '" + std::string(range) + "' (15m, 1h, 3h, 6h, 12h, 24h, 2d, 7d)");
  if (target.size() > 256 || model.size() > 256) return make_error("target and model must be at most 256 bytes");
  const std::string key = std::string(range) + '\n' + std::string(target) + '\n' + std::string(model);
  std::lock_guard lock(mutex_);
  const double t = now();
  auto it = cache_.find(key);
  if (it != cache_.end() && it->second.expires > t) return it->second.body;
  auto body = compute(*range_s, target, model);
  if (!body) return body;
  const double step = choose_step(*range_s, options_.scrape_interval_s, options_.max_points);
  cache_[key] = {t + std::clamp(step / 2, 2.0, 30.0), *body};
  return body;
}

Result<Targets> DashboardData::targets_at(double t) const {
  auto targets = discover_targets(client_, t);
  if (!targets) return targets;
  Targets out = *targets;
  for (JobInfo& job : out.jobs) {
    if (options_.custom_targets.contains(job.job)) job.dialect = dialect::DialectId::kCustom;
  }
  return out;
}

Result<Selection> DashboardData::select_target(const Targets& targets, std::string_view target, std::string_view model,
                                               std::string& problem) const {
  Selection selection;
  selection.model = std::string(model);
  const JobInfo* job = target.empty() ? default_job(targets) : find_job(targets, target);
  if (!target.empty() && job == nullptr) {
    return make_error("unknown target '" + std::string(target) + "': Prometheus scrapes no job of that name");
  }
  if (job == nullptr) {
    std::set<std::string> scraped;
    for (const JobInfo& j : targets.jobs) scraped.insert(j.job + (j.instances_up == 0 ? " (down)" : ""));
    problem = "no scrape target of a known serving dialect (inferscope, vLLM, llama.cpp, TGI, Triton, gateway)" +
              (scraped.empty() ? std::string(": Prometheus has scraped nothing yet")
                               : " — Prometheus scrapes only job " + join(scraped)) +
              " (a target shows here after its first scrape)";
  } else if (!job->dialect) {
    problem = "target job=" + job->job + " exposes no metric family inferscope knows";
  } else {
    selection.job = job->job;
    selection.dialect = *job->dialect;
    if (auto custom = options_.custom_targets.find(job->job); custom != options_.custom_targets.end()) {
      selection.custom = custom->second;
    }
  }
  return selection;
}

Result<std::string> DashboardData::exemplars_json(std::string_view range, std::string_view target,
                                                  std::string_view model) {
  auto range_s = time_range_seconds(range);
  if (!range_s) return make_error("unknown range '" + std::string(range) + "' (15m, 1h, 3h, 6h, 12h, 24h, 2d, 7d)");
  if (target.size() > 256 || model.size() > 256) return make_error("target and model must be at most 256 bytes");
  const std::string key = "exemplars\n" + std::string(range) + '\n' + std::string(target) + '\n' + std::string(model);
  std::lock_guard lock(mutex_);
  const double t = now();
  auto it = cache_.find(key);
  if (it != cache_.end() && it->second.expires > t) return it->second.body;

  const double end = std::floor(t);
  const double start = end - *range_s;
  json out = {{"start", start}, {"end", end}};
  json panels = json::object();
  auto targets = targets_at(end);
  if (!targets) {
    const std::string reason = "cannot query Prometheus at " + options_.prometheus_url + ": " + targets.error().message;
    for (const auto& [panel, role] : kExemplarPanels) panels[std::string(panel)] = {{"status", "unreachable"}, {"reason", reason}};
    out["panels"] = panels;
    return out.dump();  // not cached: the next refresh asks again
  }
  std::string problem;
  auto selection = select_target(*targets, target, model, problem);
  if (!selection) return selection.error();
  if (problem.empty()) out["target"] = selection->job;
  for (const auto& [panel, role] : kExemplarPanels) {
    const std::string id(panel);
    const dialect::MetricBinding* binding =
        problem.empty() ? dialect::find_binding(table_of(Source::kSelected, *selection), role) : nullptr;
    if (binding == nullptr || binding->kind != dialect::MetricKind::kHistogram) {
      panels[id] = {{"status", "no_data"},
                    {"reason", !problem.empty() ? problem
                                                : "the target's dialect has no histogram for this chart, so no exemplars"}};
      continue;
    }
    const std::string selector =
        dialect::series_selector(std::string(binding->metric) + "_bucket", binding->matchers,
                                 selection_matchers(Source::kSelected, *selection));
    auto found = client_.query_exemplars(selector, start, end);
    if (!found) {
      panels[id] = {{"status", "error"}, {"reason", "Prometheus rejected the exemplar query: " + found.error().message}};
      continue;
    }
    struct Point {
      std::string trace_id;
      double value, time;
    };
    std::vector<Point> points;
    std::set<std::string> seen;
    for (const auto& series : *found) {
      for (const auto& e : series.exemplars) {
        auto id_label = e.labels.find("trace_id");
        if (id_label == e.labels.end() || !std::isfinite(e.value) || !seen.insert(id_label->second).second) continue;
        points.push_back({id_label->second, e.value * binding->scale, e.time});
      }
    }
    if (points.empty()) {
      panels[id] = {{"status", "no_data"},
                    {"reason", "no trace_id exemplars on " + std::string(binding->metric) + " in the last " +
                                   std::string(range) + " (the target exports no traces, or Prometheus keeps no exemplars)"}};
      continue;
    }
    // A chart has room for a few hundred points; the slowest are the ones worth opening.
    if (points.size() > kMaxExemplarPoints) {
      std::nth_element(points.begin(), points.begin() + kMaxExemplarPoints, points.end(),
                       [](const Point& a, const Point& b) { return a.value > b.value; });
      points.resize(kMaxExemplarPoints);
    }
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.time < b.time; });
    json list = json::array();
    for (const auto& p : points) list.push_back({{"trace_id", p.trace_id}, {"value", p.value}, {"time", p.time}});
    panels[id] = {{"status", "ok"}, {"exemplars", list}};
  }
  out["panels"] = panels;
  std::string body = out.dump();
  const double step = choose_step(*range_s, options_.scrape_interval_s, options_.max_points);
  cache_[key] = {t + std::clamp(step / 2, 2.0, 30.0), body};
  return body;
}

Result<std::string> DashboardData::compute(double range_s, std::string_view target, std::string_view model) {
  const double end = std::floor(now());
  const double step = choose_step(range_s, options_.scrape_interval_s, options_.max_points);
  const double start = end - std::floor(range_s / step) * step;
  const std::size_t points = static_cast<std::size_t>(std::llround((end - start) / step)) + 1;
  json out = {{"schema_version", 1}, {"range", range_name(range_s)}, {"start", start}, {"end", end}, {"step", step}};
  json panels = json::object();

  auto targets = targets_at(end);
  if (!targets) {
    const std::string reason = "cannot query Prometheus at " + options_.prometheus_url + ": " + targets.error().message;
    out["prometheus"] = {{"reachable", false}, {"error", targets.error().message}};
    out["missing"] = reason;
    for (const RowSpec* row : shown_rows(!options_.queue_jobs.empty())) {
      for (const PanelSpec& p : row->panels) {
        if (p.kind != PanelKind::kFindings) panels[std::string(p.id)] = {{"status", "unreachable"}, {"reason", reason}};
      }
    }
    out["panels"] = panels;
    return out.dump();
  }
  out["prometheus"] = {{"reachable", true}, {"error", ""}};

  // Which job and dialect the selected-target panels read.
  std::string selection_problem;
  auto selected = select_target(*targets, target, model, selection_problem);
  if (!selected) return selected.error();
  Selection selection = std::move(*selected);
  selection.queue_jobs = options_.queue_jobs;
  const std::vector<const RowSpec*> rows = shown_rows(!options_.queue_jobs.empty());
  selection.window = seconds_text(std::max({2 * step, 4 * options_.scrape_interval_s, 30.0}));
  if (selection_problem.empty()) {
    out["target"] = selection.job;
    out["dialect"] = std::string(dialect::to_string(selection.dialect));
  }
  // The page's banner: what is missing for every panel that reads the selected target.
  if (!selection_problem.empty()) out["missing"] = selection_problem;

  // 1. Every query of every panel in one batch.
  struct Pending {
    std::string panel;
    PanelQuery query;
    std::size_t request = 0;
  };
  std::vector<promapi::QueryRequest> requests;
  std::vector<Pending> pending;
  std::map<std::string, std::vector<PanelNote>> missing_by_panel;
  for (const RowSpec* row : rows) {
    for (const PanelSpec& p : row->panels) {
      for (PanelQuery& q : build_panel_queries(p, selection)) {
        const bool selected_source = std::any_of(p.series.begin(), p.series.end(), [](const SeriesSpec& s) {
          return s.source == Source::kSelected;
        });
        if (!selection_problem.empty() && selected_source && q.dialect_title == dialect::dialect(selection.dialect).title) {
          missing_by_panel[std::string(p.id)].push_back({"", selection_problem});
          continue;
        }
        if (!q.expr) {
          missing_by_panel[std::string(p.id)].push_back({"", q.missing});
          continue;
        }
        pending.push_back({std::string(p.id), std::move(q), requests.size()});
        requests.push_back({*pending.back().query.expr, end, start, step});
      }
    }
  }
  StageTable stage_table = build_stage_table_queries(selection, kNowWindow, kBaselineWindow);
  const std::size_t stage_first = requests.size();
  for (const auto& q : stage_table.queries) {
    requests.push_back({q.mean_now.empty() ? "vector(0)" : q.mean_now, end});
    requests.push_back({q.mean_baseline.empty() ? "vector(0)" : q.mean_baseline, end - kNowWindowSeconds});
    requests.push_back({q.p95_now.empty() ? "vector(0)" : q.p95_now, end});
    requests.push_back({q.p95_baseline.empty() ? "vector(0)" : q.p95_baseline, end - kNowWindowSeconds});
  }
  const std::size_t alerts_index = requests.size();
  requests.push_back({"ALERTS{alertstate=\"firing\"}", end});
  requests.push_back({"ALERTS_FOR_STATE", end});
  auto results = client_.query_all(requests);

  // 2. Time series: align to the grid; remember the empty ones for the presence check.
  std::map<std::string, std::vector<SeriesOut>> series_by_panel;
  std::map<std::string, std::vector<std::string>> errors_by_panel;
  std::vector<const Pending*> empty;
  for (const Pending& item : pending) {
    const auto& r = results[item.request];
    if (!r) {
      errors_by_panel[item.panel].push_back(r.error().message);
      continue;
    }
    bool any_value = false;
    for (const auto& s : r->series) {
      SeriesOut so;
      so.right = item.query.right_axis;
      so.label = series_label(item.query, s.labels);
      so.values.assign(points, std::nan(""));
      bool series_value = false;
      for (const auto& pt : s.points) {
        const long long idx = std::llround((pt.time - start) / step);
        if (idx < 0 || idx >= static_cast<long long>(points) || !std::isfinite(pt.value)) continue;
        so.values[static_cast<std::size_t>(idx)] = pt.value;
        series_value = true;
      }
      if (!series_value) continue;
      any_value = true;
      series_by_panel[item.panel].push_back(std::move(so));
    }
    if (!any_value) empty.push_back(&item);
  }

  // 3. Instant queries tell "not exposed" (or renamed) from "exposed, no traffic": one over the
  // bare names, one per selector with fixed matchers (errors, one stage).
  Presence presence;
  std::set<std::string> names(stage_table.metrics.begin(), stage_table.metrics.end());
  std::set<std::string> selectors;
  for (const Pending* item : empty) {
    names.insert(item->query.metrics.begin(), item->query.metrics.end());
    names.insert(item->query.legacy.begin(), item->query.legacy.end());
    if (!item->query.fixed_matchers.empty()) selectors.insert(presence_key(item->query));
  }
  if (!names.empty()) {
    std::string regex;
    for (const auto& n : names) regex += (regex.empty() ? "" : "|") + n;
    std::vector<promapi::QueryRequest> checks = {{"count by (__name__, job) ({__name__=~\"" + regex + "\"})", end}};
    for (const auto& sel : selectors) checks.push_back({"count by (job) (" + sel + ")", end});
    auto found = client_.query_all(checks);
    if (found[0]) {
      for (const auto& s : found[0]->series) {
        auto n = s.labels.find("__name__");
        auto j = s.labels.find("job");
        if (n != s.labels.end()) presence[n->second].insert(j == s.labels.end() ? "" : j->second);
      }
    }
    std::size_t i = 1;
    for (const auto& sel : selectors) {
      auto& jobs = presence[sel];  // present (maybe empty) = checked
      if (found[i]) {
        for (const auto& s : found[i]->series) {
          auto j = s.labels.find("job");
          jobs.insert(j == s.labels.end() ? "" : j->second);
        }
      }
      ++i;
    }
  }
  for (const Pending* item : empty) {
    const bool restricted = !selection.job.empty() && item->query.dialect_title == dialect::dialect(selection.dialect).title;
    missing_by_panel[item->panel].push_back(
        {item->query.label, empty_reason(item->query, presence, selection.job, restricted, range_s)});
  }

  const std::vector<double> grid = [&] {
    std::vector<double> g(points);
    for (std::size_t i = 0; i < points; ++i) g[i] = start + static_cast<double>(i) * step;
    return g;
  }();
  for (const RowSpec* row : rows) {
    for (const PanelSpec& p : row->panels) {
      if (p.kind != PanelKind::kTimeseries && p.kind != PanelKind::kStacked) continue;
      const std::string id(p.id);
      std::vector<std::string> notes = merged_notes(missing_by_panel[id]);
      auto& series = series_by_panel[id];
      if (series.empty()) {
        const auto& errs = errors_by_panel[id];
        if (!errs.empty()) {
          panels[id] = {{"status", "error"}, {"reason", "Prometheus rejected the query: " + errs.front()}};
        } else {
          std::string reason;
          for (const auto& n : notes) reason += (reason.empty() ? "" : "; ") + n;
          panels[id] = {{"status", "no_data"}, {"reason", reason.empty() ? "the queries returned no samples" : reason}};
        }
        continue;
      }
      json js = json::array();
      for (const auto& s : series) {
        json values = json::array();
        for (double v : s.values) values.push_back(number_or_null(v));
        js.push_back({{"label", s.label}, {"axis", s.right ? "right" : "left"}, {"values", values}});
      }
      for (const auto& e : errors_by_panel[id]) notes.push_back("query failed: " + e);
      panels[id] = {{"status", "ok"}, {"timeseries", {{"timestamps", grid}, {"series", js}}}, {"notes", notes}};
    }
  }

  // 4. Per-stage table: baseline (the 30 min before the last 5) vs now (the last 5 min).
  {
    std::map<std::string, std::array<double, 4>> rows;
    std::string first_error;
    for (std::size_t i = 0; i < stage_table.queries.size(); ++i) {
      const auto& q = stage_table.queries[i];
      for (std::size_t k = 0; k < 4; ++k) {
        const auto& r = results[stage_first + 4 * i + k];
        if (!r) {
          if (first_error.empty()) first_error = r.error().message;
          continue;
        }
        for (const auto& s : r->series) {
          std::string stage = q.stage;
          if (!q.split_label.empty()) {
            auto l = s.labels.find(q.split_label);
            if (l == s.labels.end()) continue;
            stage = l->second;
          }
          auto [row_it, inserted] = rows.try_emplace(stage, std::array<double, 4>{NAN, NAN, NAN, NAN});
          if (!s.points.empty()) row_it->second[k] = s.points.back().value;
        }
      }
    }
    json table_rows = json::array();
    auto order = [](const std::string& stage) {
      const auto roles = stage_roles();
      for (std::size_t i = 0; i < roles.size(); ++i) {
        if (dialect::to_string(roles[i]) == stage) return i;
      }
      return roles.size();
    };
    std::vector<std::pair<std::string, std::array<double, 4>>> sorted(rows.begin(), rows.end());
    std::stable_sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) { return order(a.first) < order(b.first); });
    for (const auto& [stage, v] : sorted) {
      if (!std::isfinite(v[0]) && !std::isfinite(v[1]) && !std::isfinite(v[2]) && !std::isfinite(v[3])) continue;
      const double change = (std::isfinite(v[2]) && std::isfinite(v[3]) && v[3] > 0) ? v[2] / v[3] - 1 : NAN;
      table_rows.push_back({stage, number_or_null(v[1]), number_or_null(v[0]), number_or_null(v[3]),
                            number_or_null(v[2]), number_or_null(change)});
    }
    if (!selection_problem.empty()) {
      panels["stage_p95"] = {{"status", "no_data"}, {"reason", selection_problem}};
    } else if (!table_rows.empty()) {
      json columns = json::array({{{"label", "stage"}, {"unit", ""}},
                                  {{"label", "mean baseline"}, {"unit", "s"}},
                                  {{"label", "mean now"}, {"unit", "s"}},
                                  {{"label", "p95 baseline"}, {"unit", "s"}},
                                  {{"label", "p95 now"}, {"unit", "s"}},
                                  {{"label", "p95 change"}, {"unit", "change"}}});
      panels["stage_p95"] = {{"status", "ok"}, {"table", {{"columns", columns}, {"rows", table_rows}}}};
    } else if (!first_error.empty()) {
      panels["stage_p95"] = {{"status", "error"}, {"reason", "Prometheus rejected the query: " + first_error}};
    } else if (!stage_table.missing.empty()) {
      panels["stage_p95"] = {{"status", "no_data"}, {"reason", stage_table.missing}};
    } else {
      PanelQuery probe;
      probe.metrics = stage_table.metrics;
      panels["stage_p95"] = {{"status", "no_data"},
                             {"reason", empty_reason(probe, presence, selection.job, true, 30 * 60 + kNowWindowSeconds)}};
    }
  }

  // 5. Firing alerts, with the time each became active (ALERTS_FOR_STATE's value).
  {
    const auto& firing = results[alerts_index];
    const auto& since = results[alerts_index + 1];
    if (!firing) {
      panels["alerts"] = {{"status", "error"}, {"reason", "cannot read ALERTS: " + firing.error().message}};
    } else {
      json alerts = json::array();
      for (const auto& s : firing->series) {
        promapi::Labels labels = s.labels;
        labels.erase("__name__");
        labels.erase("alertstate");
        json a = {{"alertname", labels["alertname"]}, {"severity", labels.count("severity") ? labels["severity"] : ""}};
        double active_since = NAN;
        if (since) {
          for (const auto& f : since->series) {
            promapi::Labels fl = f.labels;
            fl.erase("__name__");
            if (fl == labels && !f.points.empty()) active_since = f.points.back().value;
          }
        }
        labels.erase("alertname");
        labels.erase("severity");
        a["labels"] = labels;
        a["since"] = number_or_null(active_since);
        alerts.push_back(std::move(a));
      }
      panels["alerts"] = {{"status", "ok"}, {"alerts", alerts}};
    }
  }
  out["panels"] = panels;
  return out.dump();
}

}  // namespace inferscope::dashboard
