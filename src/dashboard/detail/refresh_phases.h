// File: dashboard/detail/refresh_phases.h
// The phases of one refresh of GET /api/dashboard/data (DashboardData::compute): plan every
// panel's queries as one batch, align the answers to the time grid, explain the empty ones (one
// more instant query tells "not exposed" or renamed from "exposed, no traffic"), then render the
// time-series panels, the per-stage table and the firing alerts. Helpers shared with
// dashboard_data.cpp sit here too. DO NOT INCLUDE THIS FILE DIRECTLY outside src/dashboard.
// Pure functions apart from explain_empty_series, which queries Prometheus; thread-safe.
#pragma once

#include <cmath>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dashboard/panel_catalog.h"
#include "dashboard/panel_queries.h"
#include "inferscope/common/result.h"
#include "promapi/prometheus_client.h"

namespace inferscope::dashboard::detail {

using nlohmann::json;

// kRanges are the page's time ranges and their length in seconds.
inline constexpr std::pair<std::string_view, double> kRanges[] = {
    {"15m", 900}, {"1h", 3600}, {"3h", 10800}, {"6h", 21600}, {"12h", 43200}, {"24h", 86400}, {"2d", 172800}, {"7d", 604800}};

// The per-stage table compares the last kNowWindow with the kBaselineWindow before it.
inline constexpr std::string_view kNowWindow = "5m";
inline constexpr double kNowWindowSeconds = 300;
inline constexpr std::string_view kBaselineWindow = "30m";

inline std::string seconds_text(double s) { return std::to_string(static_cast<long long>(std::ceil(s))) + "s"; }

inline std::string range_name(double seconds) {
  for (const auto& [name, s] : kRanges) {
    if (s == seconds) return std::string(name);
  }
  return seconds_text(seconds);
}

inline std::string join(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// shown_rows is the page's rows: the Queue row only when up has a queue target.
std::vector<const RowSpec*> shown_rows(bool queue_targets);

// TimeGrid is the refresh's range: `points` timestamps start, start + step, ..., end.
struct TimeGrid {
  double start = 0;
  double end = 0;
  double step = 0;
  std::size_t points = 0;
};

// PanelNote is why one query of a panel has no data; `label` names its series ("" for the panel).
struct PanelNote {
  std::string label;
  std::string reason;
};
using NotesByPanel = std::map<std::string, std::vector<PanelNote>>;

// Presence maps metric name (or selector with fixed matchers) -> jobs exposing it now.
using Presence = std::map<std::string, std::set<std::string>>;

// PendingQuery is one panel query sent in the batch, answered by results[request].
struct PendingQuery {
  std::string panel;
  PanelQuery query;
  std::size_t request = 0;
};

// QueryBatch is every query of one refresh: the panels' range queries, then four instant queries
// per stage-table query (from stage_first: mean now, mean baseline, p95 now, p95 baseline), then
// ALERTS and ALERTS_FOR_STATE (at alerts_index). missing holds the panel queries not sent, with why.
struct QueryBatch {
  std::vector<promapi::QueryRequest> requests;
  std::vector<PendingQuery> pending;
  NotesByPanel missing;
  StageTable stage_table;
  std::size_t stage_first = 0;
  std::size_t alerts_index = 0;
};
using QueryResults = std::vector<Result<promapi::QueryResult>>;

// plan_queries builds the batch for `rows`. With a selection_problem, the queries that read the
// selected target are not sent; their panels get the problem as their note.
QueryBatch plan_queries(const std::vector<const RowSpec*>& rows, const Selection& selection,
                        const std::string& selection_problem, const TimeGrid& grid);

// SeriesOut is one series of a time-series panel on the grid (NaN where there is no sample).
struct SeriesOut {
  std::string label;
  bool right = false;
  std::vector<double> values;
};

// AlignedSeries is the panels' range answers on the grid, the errors per panel, and the queries
// that answered without one finite value (for explain_empty_series).
struct AlignedSeries {
  std::map<std::string, std::vector<SeriesOut>> series_by_panel;
  std::map<std::string, std::vector<std::string>> errors_by_panel;
  std::vector<const PendingQuery*> empty;
};

// align_series puts each pending query's answer on the grid. The result points into `pending`.
AlignedSeries align_series(const std::vector<PendingQuery>& pending, const QueryResults& results, const TimeGrid& grid);

// explain_empty_series asks Prometheus (instant queries at grid.end) which jobs expose the empty
// queries' metrics, their older names and the stage table's metrics, adds why each empty query
// has no data to `missing`, and returns what it found (the stage table's reason needs it too).
Presence explain_empty_series(const promapi::PrometheusClient& client, const AlignedSeries& aligned,
                              const StageTable& stage_table, const Selection& selection, double range_s,
                              const TimeGrid& grid, NotesByPanel& missing);

// timeseries_panels writes every time-series and stacked panel of `rows` into `panels`: its
// series, or no_data / error with the reasons.
void timeseries_panels(const std::vector<const RowSpec*>& rows, AlignedSeries& aligned, NotesByPanel& missing,
                       const TimeGrid& grid, json& panels);

// row_states says, for each row with a collapse note (RowSpec::collapse_note), whether the page
// collapses it: {"features": {"status": "shown"}, "disagg": {"status": "collapsed", "reason": ...}}.
// A row collapses when every chart of it has no data and the selected target exposes none of the
// series it reads (or its dialect has none of them); the reason says so once, with the note. Rows
// are never collapsed while the banner explains the page (`selection_problem`). Call after
// timeseries_panels.
json row_states(const std::vector<const RowSpec*>& rows, const QueryBatch& batch, const Presence& presence,
                const Selection& selection, const std::string& selection_problem, const json& panels);

// stage_table_panel is the per-stage table: baseline (the 30 min before the last 5) vs now (the
// last 5 min), or why it has no rows.
json stage_table_panel(const QueryBatch& batch, const QueryResults& results, const Presence& presence,
                       const Selection& selection, const std::string& selection_problem);

// alerts_panel lists the firing alerts, with the time each became active (ALERTS_FOR_STATE's value).
json alerts_panel(const Result<promapi::QueryResult>& firing, const Result<promapi::QueryResult>& since);

}  // namespace inferscope::dashboard::detail
