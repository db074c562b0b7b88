// File: dashboard_data.cpp
// DashboardData's endpoints: the layout and targets (meta), one refresh of every panel (compute,
// whose phases are in refresh_phases.cpp) and the exemplars of the latency charts; the answer cache.
#include "dashboard/dashboard_data.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "dashboard/detail/refresh_phases.h"
#include "dashboard/panel_catalog.h"
#include "dashboard/panel_queries.h"
#include "dashboard/target_discovery.h"
#include "dialect/dialect.h"
#include "dialect/promql.h"

namespace inferscope::dashboard {
namespace {

using detail::join;
using detail::kRanges;
using detail::range_name;
using detail::seconds_text;
using detail::shown_rows;
using nlohmann::json;

constexpr double kSteps[] = {5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400};
// The charts that plot exemplars, and the latency role whose histogram carries them.
constexpr std::pair<std::string_view, dialect::Role> kExemplarPanels[] = {{"e2e_latency", dialect::Role::kE2e},
                                                                          {"ttft", dialect::Role::kTtft}};
constexpr std::size_t kMaxExemplarPoints = 300;

json panel_json(const PanelSpec& p) {
  json j = {{"id", p.id}, {"title", p.title}, {"kind", to_string(p.kind)}, {"unit", p.unit}};
  if (!p.right_unit.empty()) j["right_unit"] = p.right_unit;
  if (!p.description.empty()) j["description"] = p.description;
  return j;
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
  const detail::TimeGrid grid{.start = start, .end = end, .step = step, .points = points};
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

  detail::QueryBatch batch = detail::plan_queries(rows, selection, selection_problem, grid);
  const detail::QueryResults results = client_.query_all(batch.requests);
  detail::AlignedSeries aligned = detail::align_series(batch.pending, results, grid);
  const detail::Presence presence = detail::explain_empty_series(client_, aligned, batch.stage_table, selection,
                                                                 range_s, grid, batch.missing);
  detail::timeseries_panels(rows, aligned, batch.missing, grid, panels);
  out["rows"] = detail::row_states(rows, batch, presence, selection, selection_problem, panels);
  panels["stage_p95"] = detail::stage_table_panel(batch, results, presence, selection, selection_problem);
  panels["alerts"] = detail::alerts_panel(results[batch.alerts_index], results[batch.alerts_index + 1]);
  out["panels"] = panels;
  return out.dump();
}

}  // namespace inferscope::dashboard
