#include "dashboard/grafana_export.h"

#include <algorithm>
#include <filesystem>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "dashboard/panel_catalog.h"
#include "dashboard/panel_queries.h"
#include "dialect/promql.h"

namespace inferscope::dashboard {
namespace {

using dialect::DialectId;
using nlohmann::json;

constexpr int kGridWidth = 24;
constexpr int kPanelHeight = 8;
const json kDatasource = {{"type", "prometheus"}, {"uid", "${datasource}"}};

std::string grafana_unit(std::string_view unit) {
  if (unit == "s") return "s";
  if (unit == "req/s") return "reqps";
  if (unit == "ratio") return "percentunit";
  if (unit == "bytes") return "bytes";
  if (unit == "bytes/s") return "Bps";
  if (unit == "celsius") return "celsius";
  if (unit == "watts") return "watt";
  return "short";
}

std::string ref_id(std::size_t i) {
  std::string id;
  do {
    id.insert(id.begin(), static_cast<char>('A' + i % 26));
    i = i / 26;
  } while (i-- > 0);
  return id;
}

Selection grafana_selection(DialectId id) {
  Selection s;
  s.dialect = id;
  s.grafana = true;
  s.window = "$__rate_interval";
  return s;
}

// presence_metric is the series a job variable lists jobs from: the table's first always-present
// binding (a lazy one would hide idle targets).
std::string presence_metric(const dialect::Dialect& d) {
  for (const auto& b : d.bindings) {
    if (b.presence == dialect::Presence::kAlways) return dialect::presence_series(b.kind, b.metric);
  }
  return d.bindings.empty() ? std::string("up") : dialect::presence_series(d.bindings[0].kind, d.bindings[0].metric);
}

json text_panel(std::string title, std::string markdown, int y) {
  return {{"type", "text"}, {"title", std::move(title)}, {"gridPos", {{"x", 0}, {"y", y}, {"w", kGridWidth}, {"h", 4}}},
          {"options", {{"mode", "markdown"}, {"content", std::move(markdown)}}}};
}

// timeseries_panel draws chart `p` from its queries for the dialect (build_panel_queries).
json timeseries_panel(const PanelSpec& p, const std::vector<PanelQuery>& queries, json grid) {
  json targets = json::array();
  std::vector<std::string> missing;
  for (const PanelQuery& q : queries) {
    if (!q.expr) {
      missing.push_back(q.missing);
      continue;
    }
    std::map<std::string, std::string> placeholders;  // label -> {{label}}: Grafana fills in each series' value
    if (!q.split_label.empty()) placeholders[q.split_label] = "{{" + q.split_label + "}}";
    for (const std::string& shown : q.shown_labels) placeholders[shown] = "{{" + shown + "}}";
    const std::string legend = series_label(q, placeholders);
    targets.push_back({{"refId", ref_id(targets.size())}, {"datasource", kDatasource}, {"expr", *q.expr},
                       {"legendFormat", legend}, {"range", true}});
  }
  json custom = {{"drawStyle", "line"}, {"lineWidth", 1}, {"fillOpacity", p.kind == PanelKind::kStacked ? 35 : 0},
                 {"showPoints", "never"}, {"spanNulls", false},
                 {"stacking", {{"mode", p.kind == PanelKind::kStacked ? "normal" : "none"}, {"group", "A"}}}};
  json overrides = json::array();
  for (const SeriesSpec& s : p.series) {
    if (!s.right_axis) continue;
    overrides.push_back({{"matcher", {{"id", "byName"}, {"options", s.label}}},
                         {"properties", json::array({{{"id", "custom.axisPlacement"}, {"value", "right"}},
                                                     {{"id", "unit"}, {"value", grafana_unit(p.right_unit)}},
                                                     {{"id", "custom.lineStyle"}, {"value", {{"fill", "dash"}, {"dash", {10, 10}}}}}})}});
  }
  std::string description(p.description);
  if (!missing.empty()) {
    description += description.empty() ? "" : ". ";
    description += "Not available: " + missing.front();
  }
  json panel = {{"type", "timeseries"}, {"title", p.title}, {"description", description}, {"datasource", kDatasource},
                {"gridPos", grid}, {"targets", targets},
                {"fieldConfig", {{"defaults", {{"unit", grafana_unit(p.unit)}, {"custom", custom},
                                                {"min", 0}}}, {"overrides", overrides}}},
                {"options", {{"tooltip", {{"mode", "multi"}, {"sort", "none"}}},
                             {"legend", {{"displayMode", "list"}, {"placement", "bottom"}, {"showLegend", true}}}}}};
  return panel;
}

// stage_table_panel: instant queries, one row per stage (label_replace names the stage where the
// dialect has one histogram per stage), merged into one table. `shift` moves the whole panel back
// (Grafana's per-panel time shift): the baseline table is the 30 min that end 5 min ago.
json stage_table_panel(DialectId id, std::string title, std::string window, std::string shift, json grid) {
  Selection sel = grafana_selection(id);
  StageTable table = build_stage_table_queries(sel, window, window);
  json targets = json::array();
  auto add = [&](std::string expr, const StageTableQuery& q, std::string_view what) {
    if (expr.empty()) return;
    if (q.split_label.empty()) expr = "label_replace(" + expr + R"(, "stage", ")" + q.stage + R"(", "", ""))";
    targets.push_back({{"refId", ref_id(targets.size())}, {"datasource", kDatasource}, {"expr", expr},
                       {"legendFormat", std::string(what)}, {"instant", true}, {"range", false}, {"format", "table"}});
  };
  for (const auto& q : table.queries) {
    add(q.mean_now, q, "mean");
    add(q.p95_now, q, "p95");
  }
  json panel = {{"type", "table"}, {"title", std::move(title)}, {"datasource", kDatasource}, {"gridPos", grid},
                {"targets", targets}, {"fieldConfig", {{"defaults", {{"unit", "s"}}}, {"overrides", json::array()}}},
                {"transformations", json::array({{{"id", "merge"}, {"options", json::object()}},
                                                 {{"id", "organize"}, {"options", {{"excludeByName", {{"Time", true}}}}}}})},
                {"options", {{"showHeader", true}}}};
  if (!shift.empty()) panel["timeShift"] = shift;
  if (!table.missing.empty()) panel["description"] = "Not available: " + table.missing;
  return panel;
}

json query_variable(std::string name, std::string query) {
  return {{"type", "query"}, {"name", name}, {"label", name}, {"datasource", kDatasource},
          {"query", {{"query", query}, {"refId", "PrometheusVariableQueryEditor-VariableQuery"}}},
          {"definition", query}, {"refresh", 2}, {"includeAll", true}, {"multi", true},
          {"allValue", ".*"}, {"sort", 1}, {"hide", 0}, {"current", json::object()}, {"options", json::array()}};
}

json variables(DialectId id, bool queue_row) {
  json list = json::array();
  list.push_back({{"type", "datasource"}, {"name", "datasource"}, {"label", "Prometheus"}, {"query", "prometheus"},
                  {"hide", 0}, {"refresh", 1}, {"regex", ""}, {"current", json::object()}, {"options", json::array()}});
  const auto& d = dialect::dialect(id);
  list.push_back(query_variable("job", "label_values(" + presence_metric(d) + ", job)"));
  if (!d.model_label.empty()) {
    list.push_back(query_variable(
        "model", "label_values(" + presence_metric(d) + R"({job=~"$job"}, )" + std::string(d.model_label) + ")"));
  }
  if (queue_row) list.push_back(query_variable("queue_job", "label_values(" + presence_metric(queue_table()) + ", job)"));
  return list;
}

}  // namespace

std::vector<DialectId> grafana_dialects() {
  std::vector<DialectId> out;
  for (DialectId id : dialect::kAllDialects) {
    if (!dialect::is_exporter(id)) out.push_back(id);
  }
  return out;
}

std::string grafana_dashboard_json(DialectId id, bool queue_row) {
  const auto& d = dialect::dialect(id);
  json panels = json::array();
  int y = 0;
  int next_id = 1;
  for (const RowSpec& row : dashboard_rows()) {
    if (row.queue_targets_only && !queue_row) continue;
    std::vector<const PanelSpec*> charts;
    std::vector<std::vector<PanelQuery>> chart_queries;
    for (const PanelSpec& p : row.panels) {
      if (p.kind != PanelKind::kTimeseries && p.kind != PanelKind::kStacked) continue;
      charts.push_back(&p);
      chart_queries.push_back(build_panel_queries(p, grafana_selection(id)));
    }
    // A row of features that may be off (collapse_note) whose charts this dialect cannot query at
    // all is exported collapsed, its reason in the title, as the page collapses it: a dashboard
    // of empty charts reads as "nothing happening", not as "not exposed".
    auto queried = [](const std::vector<PanelQuery>& queries) {
      return std::any_of(queries.begin(), queries.end(), [](const PanelQuery& q) { return q.expr.has_value(); });
    };
    const bool collapsed = !row.collapse_note.empty() && !charts.empty() && charts.size() == row.panels.size() &&
                           std::none_of(chart_queries.begin(), chart_queries.end(), queried);
    const std::string title = collapsed ? std::string(row.title) + " — " + std::string(d.title) +
                                              " exposes none of this row's series: " + std::string(row.collapse_note)
                                        : std::string(row.title);
    json row_panel = {{"type", "row"}, {"title", title}, {"collapsed", collapsed}, {"id", next_id++},
                      {"gridPos", {{"x", 0}, {"y", y}, {"w", kGridWidth}, {"h", 1}}}, {"panels", json::array()}};
    const int row_y = y;
    y += 1;
    json row_charts = json::array();
    const int width = charts.empty() ? kGridWidth : kGridWidth / static_cast<int>(std::min<std::size_t>(charts.size(), 4));
    for (std::size_t i = 0; i < charts.size(); ++i) {
      const int x = static_cast<int>(i % 4) * width;
      if (i > 0 && i % 4 == 0) y += kPanelHeight;
      json panel = timeseries_panel(*charts[i], chart_queries[i], {{"x", x}, {"y", y}, {"w", width}, {"h", kPanelHeight}});
      panel["id"] = next_id++;
      row_charts.push_back(std::move(panel));
    }
    if (!charts.empty()) y += kPanelHeight;
    if (collapsed) {
      // Grafana keeps a collapsed row's panels inside the row, laid out as if it were open; the
      // rows below start right under it.
      row_panel["panels"] = std::move(row_charts);
      panels.push_back(std::move(row_panel));
      y = row_y + 1;
      continue;
    }
    panels.push_back(std::move(row_panel));
    for (json& chart : row_charts) panels.push_back(std::move(chart));
    for (const PanelSpec& p : row.panels) {
      json panel;
      if (p.kind == PanelKind::kTable) {
        json now = stage_table_panel(id, "Per-stage mean and p95: now (last 5 min)", "5m", "",
                                     {{"x", 0}, {"y", y}, {"w", 12}, {"h", kPanelHeight}});
        now["id"] = next_id++;
        panels.push_back(std::move(now));
        panel = stage_table_panel(id, "Per-stage mean and p95: baseline (30 min ending 5 min ago)", "30m", "5m",
                                  {{"x", 12}, {"y", y}, {"w", 12}, {"h", kPanelHeight}});
        y += kPanelHeight;
      } else if (p.kind == PanelKind::kAlerts) {
        panel = {{"type", "table"}, {"title", p.title}, {"datasource", kDatasource},
                 {"gridPos", {{"x", 0}, {"y", y}, {"w", kGridWidth}, {"h", 6}}},
                 {"targets", json::array({{{"refId", "A"}, {"datasource", kDatasource},
                                           {"expr", R"(ALERTS{alertstate="firing"})"}, {"instant", true},
                                           {"range", false}, {"format", "table"}}})},
                 {"transformations", json::array({{{"id", "organize"},
                                                   {"options", {{"excludeByName", {{"Time", true}, {"Value", true}, {"__name__", true}}}}}}})}};
        y += 6;
      } else if (p.kind == PanelKind::kFindings) {
        panel = text_panel(std::string(p.title),
                           "The doctor names the slow stage and its cause with the evidence: open `inferscope up`'s own "
                           "page (its `--port`, default http://127.0.0.1:9300/) or run "
                           "`inferscope doctor --prometheus <this Prometheus>`. Every alert notification carries it too.",
                           y);
        y += 4;
      } else {
        continue;
      }
      panel["id"] = next_id++;
      panels.push_back(std::move(panel));
    }
  }
  json dashboard = {
      {"id", nullptr},
      {"uid", "inferscope-" + std::string(dialect::to_string(id))},
      {"title", "inferscope: " + std::string(d.title)},
      {"description", "Where inference latency goes (generated by inferscope up --export-grafana). " + std::string(d.note)},
      {"tags", json::array({"inferscope", "llm", std::string(dialect::to_string(id))})},
      {"timezone", "browser"},
      {"editable", true},
      {"graphTooltip", 1},  // shared crosshair across panels
      {"schemaVersion", 39},
      {"version", 1},
      {"refresh", "30s"},
      {"time", {{"from", "now-1h"}, {"to", "now"}}},
      {"timepicker", {{"refresh_intervals", json::array({"10s", "30s", "1m", "5m"})}}},
      {"templating", {{"list", variables(id, queue_row)}}},
      {"annotations", {{"list", json::array()}}},
      {"links", json::array()},
      {"panels", panels},
  };
  return dashboard.dump(2);
}

std::vector<std::string> grafana_expressions(const std::string& dashboard_json) {
  std::vector<std::string> out;
  const json d = json::parse(dashboard_json, nullptr, false);
  if (d.is_discarded()) return out;
  for (const auto& p : d.value("panels", json::array())) {
    for (const auto& t : p.value("targets", json::array())) {
      if (t.contains("expr")) out.push_back(t["expr"].get<std::string>());
    }
  }
  // Query variables: label_values(<selector>, label) is Grafana's; the selector is PromQL.
  static const std::regex label_values(R"(^label_values\((.*),\s*[A-Za-z_][A-Za-z0-9_]*\)$)");
  for (const auto& v : d["templating"].value("list", json::array())) {
    if (v.value("type", "") != "query") continue;
    const std::string q = v["query"].is_object() ? v["query"].value("query", "") : v.value("query", "");
    std::smatch m;
    out.push_back(std::regex_match(q, m, label_values) ? m[1].str() : q);
  }
  return out;
}

Result<std::vector<std::string>> write_grafana_export(const GrafanaExportOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root = fs::absolute(options.directory, ec);
  const fs::path dashboards = root / "dashboards";
  for (const fs::path& dir : {dashboards, root / "provisioning" / "dashboards", root / "provisioning" / "datasources"}) {
    fs::create_directories(dir, ec);
    if (ec) return make_error("cannot create " + dir.string() + ": " + ec.message());
  }
  std::vector<std::string> written;
  auto write = [&written](const fs::path& path, const std::string& text) -> Result<void> {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << text;
    file.close();
    if (!file) return make_error("cannot write " + path.string() + ": " + std::strerror(errno));
    written.push_back(path.string());
    return {};
  };
  for (DialectId id : grafana_dialects()) {
    auto r = write(dashboards / ("inferscope-" + std::string(dialect::to_string(id)) + ".json"), grafana_dashboard_json(id, options.queue_row));
    if (!r) return r.error();
  }
  const json path_text = dashboards.string();  // JSON string quoting is valid YAML
  auto r = write(root / "provisioning" / "dashboards" / "inferscope.yaml",
                 "# Grafana dashboard provider generated by inferscope up --export-grafana.\n"
                 "apiVersion: 1\nproviders:\n  - name: inferscope\n    folder: inferscope\n    type: file\n"
                 "    disableDeletion: false\n    updateIntervalSeconds: 30\n    allowUiUpdates: true\n"
                 "    options:\n      path: " + path_text.dump() + "\n      foldersFromFilesStructure: false\n");
  if (!r) return r.error();
  const json url_text = options.prometheus_url;
  r = write(root / "provisioning" / "datasources" / "inferscope.yaml",
            "# The Prometheus of inferscope up, as a Grafana datasource (generated by --export-grafana).\n"
            "apiVersion: 1\ndatasources:\n  - name: inferscope Prometheus\n    type: prometheus\n"
            "    uid: inferscope-prometheus\n    access: proxy\n    url: " + url_text.dump() + "\n    isDefault: true\n"
            "    jsonData:\n      timeInterval: 5s\n");
  if (!r) return r.error();
  return written;
}

}  // namespace inferscope::dashboard
