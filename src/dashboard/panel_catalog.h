// File: dashboard/panel_catalog.h
// The dashboard's rows and panels, written once in terms of dialect roles (dialect/dialect.h) and
// statistics, so the page served by `inferscope up` and the exported Grafana dashboards show the
// same panels for every server kind. PromQL is built from this by dashboard/panel_queries.h.
// Example: for (const RowSpec& row : dashboard_rows()) for (const PanelSpec& p : row.panels) ...
// Thread-safe: immutable static data.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string_view>

#include "dialect/dialect.h"

namespace inferscope::dashboard {

// PanelKind says how a panel is drawn.
enum class PanelKind : std::uint8_t {
  kTimeseries,  // lines over time
  kStacked,     // stacked areas over time (per-stage mean: the stack height is the e2e mean)
  kTable,       // per-stage p95, baseline vs now
  kAlerts,      // firing alerts (Prometheus ALERTS)
  kFindings,    // the doctor's current findings (GET /api/doctor)
};

// Statistic is what a series computes from its role's metric.
enum class Statistic : std::uint8_t {
  kRate,          // per second (counters; histograms: observations per second)
  kMean,          // mean per observation (histograms, counter ratios) or a gauge's value
  kP50,
  kP95,
  kP99,
  kValue,         // a gauge's current value
  kErrorRatio,    // failed / all requests (dialect's error accounting)
  kSuccessRatio,  // 1 - error ratio
  kStageMean,     // mean per stage: one series per stage the dialect exposes
  kRecorded,      // the series up's recording rules record from the role's metric (SeriesSpec::recorded,
                  // src/alerts/target_rules.cpp): ratios, per-pool and per-rank series; absent where the
                  // dialect has no binding for the role
};

// Source says which targets a series reads.
enum class Source : std::uint8_t {
  kSelected,  // the selected target's dialect, restricted to that target and model
  kGateway,   // every inferscope gateway (dialect kGateway), restricted to the model
  kGpu,       // every GPU exporter (dialect kDcgm): simulated or real
  kHost,      // every node-exporter (dialect kNode)
  kQueue,     // every queue target of up (its Redis queue collector: dialect::queue_bindings())
  kRanks,     // the selected target's per-rank series (vLLM's `engine` label): vLLM's own, and the
              // vllm:* families inferscope serve exposes beside its own; no other dialect has them
};

// SeriesSpec is one line of a panel.
struct SeriesSpec {
  std::string_view label;  // legend text ("p95"); kStageMean: prefix of each stage's name
  dialect::Role role;
  Statistic statistic;
  Source source = Source::kSelected;
  bool right_axis = false;  // drawn against the panel's right axis (its right_unit)
  std::string_view by = {}; // one label to split by (gpu, instance), or empty for one series
  // labels kept beside `by` and shown after its value ("default (rq, jobs)"): system and job of a queue
  std::array<std::string_view, 2> shown = {};
  // kRecorded: the recorded series' name ("inferscope:pool_waiting"); it carries `job`, `model`
  // where the binding has the model label, and the labels named in `by`/`shown`.
  std::string_view recorded = {};
};

// PanelSpec is one chart, table or list.
struct PanelSpec {
  std::string_view id;     // stable id used by the page, the JSON and the browser test
  std::string_view title;
  PanelKind kind;
  std::string_view unit;        // left axis: "s", "req/s", "ratio", "tokens", "tokens/s", "requests",
                                // "events/s", "bytes", "celsius", "watts"
  std::string_view right_unit;  // right axis, or empty
  std::string_view description;
  std::span<const SeriesSpec> series = {};
};

// RowSpec is one row of panels, top to bottom on the page.
struct RowSpec {
  std::string_view id;
  std::string_view title;
  std::span<const PanelSpec> panels;
  bool queue_targets_only = false;  // shown only when up has a queue (redis) target
  // Non-empty: the row collapses to one line when the selected target exposes none of its series
  // (features that are off, a server that is not a disaggregated fleet); this says where they come from.
  std::string_view collapse_note = {};
};

// dashboard_rows returns every row in page order. Never fails.
std::span<const RowSpec> dashboard_rows() noexcept;

// find_panel returns the panel with `id`, or nullptr.
const PanelSpec* find_panel(std::string_view id) noexcept;

// stage_roles returns the stage roles in request order (gateway queue ... send, then the gateway's
// upstream stages): the stacked per-stage panel and the baseline table use them when a dialect
// has no `stage`-labelled histogram.
std::span<const dialect::Role> stage_roles() noexcept;

// to_string returns "timeseries", "stacked", "table", "alerts" or "findings".
std::string_view to_string(PanelKind kind) noexcept;

}  // namespace inferscope::dashboard
