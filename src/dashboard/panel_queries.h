// File: dashboard/panel_queries.h
// Builds each panel's PromQL from the panel catalog and the dialect table's builders
// (dialect/promql.h), for one server dialect and one target/model selection. The browser never
// sends PromQL: these are the only queries the dashboard endpoints and the Grafana export run.
// Example: auto qs = build_panel_queries(*find_panel("ttft"), {.dialect = DialectId::kVllm});
// Thread-safe (pure functions). A role the dialect cannot answer yields a query without `expr`
// and a `missing` reason naming the dialect, never a guessed substitute.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dashboard/panel_catalog.h"
#include "dialect/custom_dialect.h"
#include "dialect/dialect.h"

namespace inferscope::dashboard {

// Selection says what the queries read.
struct Selection {
  dialect::DialectId dialect = dialect::DialectId::kInferscope;  // of the selected target
  std::shared_ptr<const dialect::CustomDialect> custom = {};     // dialect kCustom: the target's mapping
  std::string job = {};       // selected target's job label; empty = every target of the dialect
  std::string model = {};     // model label value; empty = every model
  std::string window = "5m";  // rate() range
  std::vector<std::string> queue_jobs = {};  // Source::kQueue reads these jobs (up's redis targets)
  // grafana: match job and model with Grafana template variables (job=~"$job", model=~"$model",
  // queue series job=~"$queue_job") instead of the values above; `window` is then typically
  // "$__rate_interval".
  bool grafana = false;
};

// PanelQuery is one series (or a group of series, when split by a label) of a panel.
struct PanelQuery {
  std::string label;                // legend text; split series append the label value
  std::string split_label;          // the label splitting the result into series, or empty
  std::vector<std::string> shown_labels;  // kept beside split_label, shown after its value in parentheses
  bool right_axis = false;
  std::optional<std::string> expr;  // absent: the dialect has no metric for this role
  std::string missing;              // why `expr` is absent ("vLLM V1 exposes no GPU metrics ...")
  std::vector<std::string> metrics; // metric names the expression reads (for "no data" reasons)
  std::vector<std::string> legacy;  // older names of those metrics (renamed-metric reasons)
  std::string fixed_matchers;       // the binding's own matchers on metrics[0] (stage="queue"), or empty
  std::string dialect_title;        // title of the dialect the query reads
  std::string recorded;             // Statistic::kRecorded: the recorded series `expr` reads (metrics: its source)
};

// build_panel_queries returns the queries of a time-series or stacked panel (empty for tables,
// alerts and findings). Label values in `selection` are escaped; any string is safe.
std::vector<PanelQuery> build_panel_queries(const PanelSpec& panel, const Selection& selection);

// StageTableQuery holds the instant queries of one row (or, split by `stage`, every row) of the
// per-stage baseline/now table: mean and p95 over `now_window` and over `baseline_window`. The
// caller evaluates the *_now ones at the end of the range and the *_baseline ones `now_window`
// earlier, so the baseline is the window just before "now".
struct StageTableQuery {
  std::string stage;        // stage name, or empty when split by the `stage` label
  std::string split_label;  // "stage" when one query returns every stage
  std::string mean_now, mean_baseline, p95_now, p95_baseline;
};
struct StageTable {
  std::vector<StageTableQuery> queries;
  std::string missing;  // why there are none
  std::vector<std::string> metrics;
};
StageTable build_stage_table_queries(const Selection& selection, std::string_view now_window,
                                     std::string_view baseline_window);


// selection_matchers returns the matchers (without braces) restricting a query of `source` to the
// selection: job and model for the selected dialect, model for gateways, the queue jobs for queue
// series, the job for per-rank series, nothing for GPU/host.
std::string selection_matchers(Source source, const Selection& selection);

// table_of returns the table a series of `source` reads: the custom mapping for a custom
// selected target, queue_table() for kQueue, vLLM's for kRanks of a vLLM or inferscope target,
// else the dialect of the source (the selected one, gateway, dcgm-exporter, node-exporter).
const dialect::Dialect& table_of(Source source, const Selection& selection) noexcept;

// queue_table is up's Redis queue collector as a table (dialect::queue_bindings(), no model label).
const dialect::Dialect& queue_table() noexcept;

// series_label returns the legend text of one series of `query` with `labels`: the query's label,
// then the split label's value, then the shown labels' values in parentheses ("depth default (rq, jobs)").
std::string series_label(const PanelQuery& query, const std::map<std::string, std::string>& labels);

}  // namespace inferscope::dashboard
