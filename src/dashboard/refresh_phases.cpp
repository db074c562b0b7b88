// File: refresh_phases.cpp
// Why one big batch: every panel of one refresh is evaluated in one query_all call (bounded
// parallelism in promapi), then the empty ones get one more instant query that tells "metric not
// exposed" from "exposed but no traffic", so a refresh costs two round trips whatever the range.
#include "dashboard/detail/refresh_phases.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "dialect/dialect.h"

namespace inferscope::dashboard::detail {
namespace {

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

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
  if (!q.recorded.empty()) {
    return "metric " + metric + " is exposed but up's recorded series " + q.recorded + " has no samples in the last " +
           range_name(range_s) + " (its rule needs traffic on " + metric + ")";
  }
  return "metric " + metric + " is exposed but had no observations in the last " + range_name(range_s) +
         (q.dialect_title == queue_table().title ? " (no job seen starting?)" : " (no finished requests?)");
}

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

}  // namespace

std::vector<const RowSpec*> shown_rows(bool queue_targets) {
  std::vector<const RowSpec*> out;
  for (const RowSpec& row : dashboard_rows()) {
    if (!row.queue_targets_only || queue_targets) out.push_back(&row);
  }
  return out;
}

QueryBatch plan_queries(const std::vector<const RowSpec*>& rows, const Selection& selection,
                        const std::string& selection_problem, const TimeGrid& grid) {
  QueryBatch batch;
  auto& requests = batch.requests;
  for (const RowSpec* row : rows) {
    for (const PanelSpec& p : row->panels) {
      for (PanelQuery& q : build_panel_queries(p, selection)) {
        const bool selected_source = std::any_of(p.series.begin(), p.series.end(), [](const SeriesSpec& s) {
          return s.source == Source::kSelected || s.source == Source::kRanks;
        });
        if (!selection_problem.empty() && selected_source && q.dialect_title == dialect::dialect(selection.dialect).title) {
          batch.missing[std::string(p.id)].push_back({"", selection_problem});
          continue;
        }
        if (!q.expr) {
          batch.missing[std::string(p.id)].push_back({"", q.missing});
          continue;
        }
        batch.pending.push_back({std::string(p.id), std::move(q), requests.size()});
        requests.push_back({*batch.pending.back().query.expr, grid.end, grid.start, grid.step});
      }
    }
  }
  batch.stage_table = build_stage_table_queries(selection, kNowWindow, kBaselineWindow);
  batch.stage_first = requests.size();
  for (const auto& q : batch.stage_table.queries) {
    requests.push_back({q.mean_now.empty() ? "vector(0)" : q.mean_now, grid.end});
    requests.push_back({q.mean_baseline.empty() ? "vector(0)" : q.mean_baseline, grid.end - kNowWindowSeconds});
    requests.push_back({q.p95_now.empty() ? "vector(0)" : q.p95_now, grid.end});
    requests.push_back({q.p95_baseline.empty() ? "vector(0)" : q.p95_baseline, grid.end - kNowWindowSeconds});
  }
  batch.alerts_index = requests.size();
  requests.push_back({"ALERTS{alertstate=\"firing\"}", grid.end});
  requests.push_back({"ALERTS_FOR_STATE", grid.end});
  return batch;
}

AlignedSeries align_series(const std::vector<PendingQuery>& pending, const QueryResults& results, const TimeGrid& grid) {
  AlignedSeries aligned;
  for (const PendingQuery& item : pending) {
    const auto& r = results[item.request];
    if (!r) {
      aligned.errors_by_panel[item.panel].push_back(r.error().message);
      continue;
    }
    bool any_value = false;
    for (const auto& s : r->series) {
      SeriesOut so;
      so.right = item.query.right_axis;
      so.label = series_label(item.query, s.labels);
      so.values.assign(grid.points, std::nan(""));
      bool series_value = false;
      for (const auto& pt : s.points) {
        const long long idx = std::llround((pt.time - grid.start) / grid.step);
        if (idx < 0 || idx >= static_cast<long long>(grid.points) || !std::isfinite(pt.value)) continue;
        so.values[static_cast<std::size_t>(idx)] = pt.value;
        series_value = true;
      }
      if (!series_value) continue;
      any_value = true;
      aligned.series_by_panel[item.panel].push_back(std::move(so));
    }
    if (!any_value) aligned.empty.push_back(&item);
  }
  return aligned;
}

Presence explain_empty_series(const promapi::PrometheusClient& client, const AlignedSeries& aligned,
                              const StageTable& stage_table, const Selection& selection, double range_s,
                              const TimeGrid& grid, NotesByPanel& missing) {
  // One query over the bare names, one per selector with fixed matchers (errors, one stage).
  Presence presence;
  std::set<std::string> names(stage_table.metrics.begin(), stage_table.metrics.end());
  std::set<std::string> selectors;
  for (const PendingQuery* item : aligned.empty) {
    names.insert(item->query.metrics.begin(), item->query.metrics.end());
    names.insert(item->query.legacy.begin(), item->query.legacy.end());
    if (!item->query.fixed_matchers.empty()) selectors.insert(presence_key(item->query));
  }
  if (!names.empty()) {
    std::string regex;
    for (const auto& n : names) regex += (regex.empty() ? "" : "|") + n;
    std::vector<promapi::QueryRequest> checks = {{"count by (__name__, job) ({__name__=~\"" + regex + "\"})", grid.end}};
    for (const auto& sel : selectors) checks.push_back({"count by (job) (" + sel + ")", grid.end});
    auto found = client.query_all(checks);
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
  for (const PendingQuery* item : aligned.empty) {
    const bool restricted = !selection.job.empty() && item->query.dialect_title == dialect::dialect(selection.dialect).title;
    missing[item->panel].push_back(
        {item->query.label, empty_reason(item->query, presence, selection.job, restricted, range_s)});
  }
  return presence;
}

void timeseries_panels(const std::vector<const RowSpec*>& rows, AlignedSeries& aligned, NotesByPanel& missing,
                       const TimeGrid& grid, json& panels) {
  const std::vector<double> timestamps = [&] {
    std::vector<double> g(grid.points);
    for (std::size_t i = 0; i < grid.points; ++i) g[i] = grid.start + static_cast<double>(i) * grid.step;
    return g;
  }();
  for (const RowSpec* row : rows) {
    for (const PanelSpec& p : row->panels) {
      if (p.kind != PanelKind::kTimeseries && p.kind != PanelKind::kStacked) continue;
      const std::string id(p.id);
      std::vector<std::string> notes = merged_notes(missing[id]);
      auto& series = aligned.series_by_panel[id];
      if (series.empty()) {
        const auto& errs = aligned.errors_by_panel[id];
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
      for (const auto& e : aligned.errors_by_panel[id]) notes.push_back("query failed: " + e);
      panels[id] = {{"status", "ok"}, {"timeseries", {{"timestamps", timestamps}, {"series", js}}}, {"notes", notes}};
    }
  }
}

json row_states(const std::vector<const RowSpec*>& rows, const QueryBatch& batch, const Presence& presence,
                const Selection& selection, const std::string& selection_problem, const json& panels) {
  json out = json::object();
  const std::string selected_title(table_of(Source::kSelected, selection).title);
  // exposed: Prometheus holds the query's metric (its selector with fixed matchers, or an older
  // name) for the selected job, or, for a series not restricted to it, for any job.
  auto exposed = [&](const PanelQuery& q) {
    if (q.metrics.empty()) return true;
    const bool restricted = !selection.job.empty() && q.dialect_title == selected_title;
    auto has = [&](const std::string& key) {
      auto it = presence.find(key);
      return it != presence.end() && (restricted ? it->second.count(selection.job) > 0 : !it->second.empty());
    };
    if (has(q.fixed_matchers.empty() ? q.metrics.front() : presence_key(q))) return true;
    return std::any_of(q.legacy.begin(), q.legacy.end(), has);
  };
  for (const RowSpec* row : rows) {
    if (row->collapse_note.empty()) continue;
    const std::string id(row->id);
    bool empty = selection_problem.empty();
    bool queried = false;
    for (const PanelSpec& p : row->panels) {
      const auto it = panels.find(std::string(p.id));
      if (it == panels.end() || it->value("status", "") != "no_data") empty = false;
      for (const PendingQuery& item : batch.pending) {
        if (item.panel != p.id) continue;
        queried = true;
        if (exposed(item.query)) empty = false;
      }
    }
    if (!empty) {
      out[id] = {{"status", "shown"}};
      continue;
    }
    const std::string who = queried ? "target job=" + selection.job : selected_title;
    out[id] = {{"status", "collapsed"},
               {"reason", who + " exposes none of this row's series: " + std::string(row->collapse_note)}};
  }
  return out;
}

json stage_table_panel(const QueryBatch& batch, const QueryResults& results, const Presence& presence,
                       const Selection& selection, const std::string& selection_problem) {
  const StageTable& stage_table = batch.stage_table;
  std::map<std::string, std::array<double, 4>> rows;
  std::string first_error;
  for (std::size_t i = 0; i < stage_table.queries.size(); ++i) {
    const auto& q = stage_table.queries[i];
    for (std::size_t k = 0; k < 4; ++k) {
      const auto& r = results[batch.stage_first + 4 * i + k];
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
  if (!selection_problem.empty()) return {{"status", "no_data"}, {"reason", selection_problem}};
  if (!table_rows.empty()) {
    json columns = json::array({{{"label", "stage"}, {"unit", ""}},
                                {{"label", "mean baseline"}, {"unit", "s"}},
                                {{"label", "mean now"}, {"unit", "s"}},
                                {{"label", "p95 baseline"}, {"unit", "s"}},
                                {{"label", "p95 now"}, {"unit", "s"}},
                                {{"label", "p95 change"}, {"unit", "change"}}});
    return {{"status", "ok"}, {"table", {{"columns", columns}, {"rows", table_rows}}}};
  }
  if (!first_error.empty()) return {{"status", "error"}, {"reason", "Prometheus rejected the query: " + first_error}};
  if (!stage_table.missing.empty()) return {{"status", "no_data"}, {"reason", stage_table.missing}};
  PanelQuery probe;
  probe.metrics = stage_table.metrics;
  return {{"status", "no_data"},
          {"reason", empty_reason(probe, presence, selection.job, true, 30 * 60 + kNowWindowSeconds)}};
}

json alerts_panel(const Result<promapi::QueryResult>& firing, const Result<promapi::QueryResult>& since) {
  if (!firing) return {{"status", "error"}, {"reason", "cannot read ALERTS: " + firing.error().message}};
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
  return {{"status", "ok"}, {"alerts", alerts}};
}

}  // namespace inferscope::dashboard::detail
