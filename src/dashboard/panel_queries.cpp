#include "dashboard/panel_queries.h"

#include "dialect/promql.h"

namespace inferscope::dashboard {
namespace {

using dialect::DialectId;
using dialect::MetricBinding;
using dialect::Role;

std::string role_text(Role role) { return std::string(dialect::to_string(role)); }

void note_metrics(const MetricBinding& binding, PanelQuery& query) {
  if (query.metrics.empty()) query.fixed_matchers = std::string(binding.matchers);
  query.metrics.push_back(dialect::presence_series(binding.kind, binding.metric));
  if (!binding.operand.empty()) query.metrics.push_back(std::string(binding.operand));
  for (const auto& old : binding.legacy) query.legacy.push_back(dialect::presence_series(binding.kind, old.name));
}

std::string missing_reason(const dialect::Dialect& d, Role role) {
  std::string text = std::string(d.title) + " exposes no " + role_text(role) + " metric";
  if (!d.note.empty()) text += " (" + std::string(d.note) + ")";
  return text;
}

// expression_for applies `statistic` to `binding`; nullopt when the metric kind cannot answer it
// (a quantile of a counter ratio), with `why` saying so.
std::optional<std::string> expression_for(const MetricBinding& binding, Statistic statistic,
                                          const dialect::QueryScope& scope, std::string& why) {
  std::optional<std::string> expr;
  switch (statistic) {
    case Statistic::kRate: expr = dialect::rate_expr(binding, scope); break;
    case Statistic::kMean: case Statistic::kStageMean: expr = dialect::mean_expr(binding, scope); break;
    case Statistic::kValue: expr = dialect::value_expr(binding, scope); break;
    case Statistic::kP50: expr = dialect::quantile_expr(binding, 0.5, scope); break;
    case Statistic::kP95: expr = dialect::quantile_expr(binding, 0.95, scope); break;
    case Statistic::kP99: expr = dialect::quantile_expr(binding, 0.99, scope); break;
    case Statistic::kErrorRatio: case Statistic::kSuccessRatio: case Statistic::kRecorded: break;  // by the caller
  }
  if (!expr) {
    why = std::string(binding.metric) + " is a " + std::string(dialect::to_string(binding.kind)) +
          ", which has no " + (statistic == Statistic::kRate ? "rate" : "distribution") + " to read this from";
  }
  return expr;
}

dialect::QueryScope scope_for(const SeriesSpec& spec, const Selection& selection) {
  dialect::QueryScope scope;
  scope.matchers = selection_matchers(spec.source, selection);
  scope.window = selection.window;
  if (!spec.by.empty()) scope.by.emplace_back(spec.by);
  for (std::string_view shown : spec.shown) {
    if (!shown.empty()) scope.by.emplace_back(shown);
  }
  return scope;
}

// regex_alternation matches exactly one of `names` (regex metacharacters escaped), for `job=~`.
std::string regex_alternation(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    if (!out.empty()) out += '|';
    for (char c : name) {
      if (std::string_view(".+*?()[]{}|^$\\").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
  return out;
}

DialectId dialect_of(Source source, const Selection& selection) noexcept {
  switch (source) {
    case Source::kSelected: return selection.dialect;
    case Source::kRanks:
      // vLLM's families carry the engine label; inferscope serve exposes them beside its own.
      return selection.dialect == DialectId::kInferscope ? DialectId::kVllm : selection.dialect;
    case Source::kGateway: return DialectId::kGateway;
    case Source::kGpu: return DialectId::kDcgm;
    case Source::kHost: return DialectId::kNode;
    case Source::kQueue: break;  // no server dialect: table_of answers queue_table()
  }
  return selection.dialect;
}

void add_stage_means(const SeriesSpec& spec, const Selection& selection, std::vector<PanelQuery>& out) {
  const dialect::Dialect& table = table_of(spec.source, selection);
  dialect::QueryScope scope = scope_for(spec, selection);
  if (const MetricBinding* staged = dialect::find_binding(table, Role::kStage); staged && !staged->kind_label.empty()) {
    PanelQuery q;
    q.split_label = std::string(staged->kind_label);
    q.dialect_title = std::string(table.title);
    scope.by.push_back(q.split_label);
    q.expr = dialect::mean_expr(*staged, scope);
    note_metrics(*staged, q);
    out.push_back(std::move(q));
    return;
  }
  bool any = false;
  for (Role role : stage_roles()) {
    const MetricBinding* binding = dialect::find_binding(table, role);
    if (binding == nullptr) continue;
    PanelQuery q;
    q.label = role_text(role);
    q.dialect_title = std::string(table.title);
    std::string why;
    q.expr = expression_for(*binding, Statistic::kMean, scope, why);
    if (!q.expr) continue;
    note_metrics(*binding, q);
    out.push_back(std::move(q));
    any = true;
  }
  if (!any) {
    PanelQuery q;
    q.dialect_title = std::string(table.title);
    q.missing = std::string(table.title) + " exposes no per-request stage durations (" +
                std::string(table.note) + ")";
    out.push_back(std::move(q));
  }
}

// has_ranks: the selected target's series carry vLLM's per-rank `engine` label (vLLM, and inferscope
// serve's vllm:* families); up records inferscope:engine_e2e_seconds:p99 for no other dialect.
bool has_ranks(const Selection& selection) noexcept {
  return !selection.custom && (selection.dialect == DialectId::kVllm || selection.dialect == DialectId::kInferscope);
}

// recorded_query reads the series up's recording rules keep (target_rules.cpp) for `binding`:
// restricted to the job and, where the recorded series carries it (a per-model record, split by
// `model`, of a metric with the model label), the model (normalised to `model` by the rules), one
// series per `by`/`shown` label. Per-pool, per-endpoint and per-rank records have no model label.
void recorded_query(const SeriesSpec& spec, const dialect::Dialect& table, const MetricBinding& binding,
                    const Selection& selection, PanelQuery& q) {
  std::string matchers;
  const bool model = spec.by == "model" && !table.model_label.empty() && !binding.no_model_label;
  if (selection.grafana) {
    matchers = R"(job=~"$job")";
    if (model) matchers += R"(,model=~"$model")";
  } else {
    if (!selection.job.empty()) matchers = "job=" + dialect::promql_string(selection.job);
    if (model && !selection.model.empty()) {
      matchers += (matchers.empty() ? "" : ",") + std::string("model=") + dialect::promql_string(selection.model);
    }
  }
  std::string by;
  for (std::string_view label : {spec.by, spec.shown[0], spec.shown[1]}) {
    if (!label.empty()) by += (by.empty() ? "" : ", ") + std::string(label);
  }
  // max: one series per label set even where several jobs match (Grafana's "All").
  q.expr = (by.empty() ? std::string("max") : "max by (" + by + ")") + " (" + std::string(spec.recorded) + "{" +
           matchers + "})";
  q.recorded = std::string(spec.recorded);
}

}  // namespace

const dialect::Dialect& queue_table() noexcept {
  static const dialect::Dialect table{.id = DialectId::kCustom,
                                      .title = "inferscope up's Redis queue collector",
                                      .bindings = dialect::queue_bindings(),
                                      .note = "a redis target of up (docs/queues.md); a quantity its queue system "
                                              "cannot tell has no series"};
  return table;
}

const dialect::Dialect& table_of(Source source, const Selection& selection) noexcept {
  if (source == Source::kSelected && selection.custom) return selection.custom->table();
  if (source == Source::kQueue) return queue_table();
  return dialect::dialect(dialect_of(source, selection));
}

std::string series_label(const PanelQuery& query, const std::map<std::string, std::string>& labels) {
  auto value_of = [&labels](const std::string& name) {
    const auto it = labels.find(name);
    return it == labels.end() ? std::string() : it->second;
  };
  std::string text = query.label;
  if (!query.split_label.empty()) {
    const std::string value = value_of(query.split_label);  // absent (no model label): the label alone
    text = text.empty() ? value : value.empty() ? text : text + " " + value;
  }
  std::string shown;
  for (const std::string& name : query.shown_labels) {
    const std::string value = value_of(name);
    if (!value.empty()) shown += (shown.empty() ? "" : ", ") + value;
  }
  return shown.empty() ? text : text + " (" + shown + ")";
}

std::string selection_matchers(Source source, const Selection& selection) {
  std::string out;
  auto add = [&out](std::string_view name, std::string_view value) {
    if (!out.empty()) out += ',';
    out += std::string(name) + "=" + dialect::promql_string(value);
  };
  if (source == Source::kQueue) {
    if (selection.grafana) return R"(job=~"$queue_job")";
    if (selection.queue_jobs.empty()) return out;
    return "job=~" + dialect::promql_string(regex_alternation(selection.queue_jobs));
  }
  if (source == Source::kRanks) {  // recorded by (job, engine): no model label
    if (selection.grafana) return R"(job=~"$job")";
    if (!selection.job.empty()) add("job", selection.job);
    return out;
  }
  const auto& d = table_of(source, selection);
  if (selection.grafana) {
    if (source == Source::kSelected) out = R"(job=~"$job")";
    if ((source == Source::kSelected || source == Source::kGateway) && !d.model_label.empty()) {
      if (!out.empty()) out += ',';
      out.append(d.model_label).append(R"(=~"$model")");
    }
    return out;
  }
  if (source == Source::kSelected && !selection.job.empty()) add("job", selection.job);
  if ((source == Source::kSelected || source == Source::kGateway) && !selection.model.empty() &&
      !d.model_label.empty()) {
    add(d.model_label, selection.model);
  }
  return out;
}

std::vector<PanelQuery> build_panel_queries(const PanelSpec& panel, const Selection& selection) {
  std::vector<PanelQuery> out;
  if (panel.kind != PanelKind::kTimeseries && panel.kind != PanelKind::kStacked) return out;
  for (const SeriesSpec& spec : panel.series) {
    if (spec.statistic == Statistic::kStageMean) {
      add_stage_means(spec, selection, out);
      continue;
    }
    const dialect::Dialect& table = table_of(spec.source, selection);
    PanelQuery q;
    q.label = std::string(spec.label);
    q.split_label = std::string(spec.by);
    for (std::string_view shown : spec.shown) {
      if (!shown.empty()) q.shown_labels.emplace_back(shown);
    }
    q.right_axis = spec.right_axis;
    q.dialect_title = std::string(table.title);
    const dialect::QueryScope scope = scope_for(spec, selection);
    if (spec.statistic == Statistic::kErrorRatio || spec.statistic == Statistic::kSuccessRatio) {
      const MetricBinding* errors = dialect::find_binding(table, Role::kErrors);
      const MetricBinding* requests = dialect::find_binding(table, Role::kRequests);
      if (errors == nullptr || requests == nullptr) {
        q.missing = missing_reason(table, errors == nullptr ? Role::kErrors : Role::kRequests);
      } else {
        auto ratio = dialect::error_ratio_expr(table, scope);
        if (ratio) q.expr = spec.statistic == Statistic::kErrorRatio ? *ratio : "1 - (" + *ratio + ")";
        note_metrics(*requests, q);
      }
      out.push_back(std::move(q));
      continue;
    }
    if (spec.source == Source::kRanks && !has_ranks(selection)) {
      const dialect::Dialect& selected = table_of(Source::kSelected, selection);
      q.dialect_title = std::string(selected.title);
      q.missing = std::string(selected.title) + " exposes no per-rank series (vLLM's engine label; vLLM and "
                  "inferscope serve's vllm:* families have it)";
      out.push_back(std::move(q));
      continue;
    }
    if (spec.source == Source::kRanks) q.dialect_title = std::string(table_of(Source::kSelected, selection).title);
    const MetricBinding* binding = dialect::find_binding(table, spec.role);
    if (binding == nullptr) {
      q.missing = missing_reason(table, spec.role);
    } else if (spec.statistic == Statistic::kRecorded) {
      recorded_query(spec, table, *binding, selection, q);
      note_metrics(*binding, q);
    } else {
      q.expr = expression_for(*binding, spec.statistic, scope, q.missing);
      if (!q.expr && (spec.statistic == Statistic::kP95 || spec.statistic == Statistic::kP50 ||
                      spec.statistic == Statistic::kP99)) {
        // Counter-ratio dialects (llama.cpp, Triton) have means but no distribution: show the mean
        // under a label that says so rather than leaving the panel empty (once per panel and role).
        std::string ignored;
        q.expr = expression_for(*binding, Statistic::kMean, scope, ignored);
        const auto space = spec.label.find(' ');
        q.label = (space == std::string_view::npos ? std::string() : std::string(spec.label.substr(0, space)) + " ") +
                  "mean (no histogram)";
        bool duplicate = false;
        for (const PanelQuery& earlier : out) duplicate = duplicate || (earlier.expr && earlier.expr == q.expr);
        if (duplicate) continue;
      }
      note_metrics(*binding, q);
    }
    out.push_back(std::move(q));
  }
  return out;
}

StageTable build_stage_table_queries(const Selection& selection, std::string_view now_window,
                                     std::string_view baseline_window) {
  StageTable out;
  const dialect::Dialect& table = table_of(Source::kSelected, selection);
  dialect::QueryScope now_scope;
  now_scope.matchers = selection_matchers(Source::kSelected, selection);
  now_scope.window = std::string(now_window);
  dialect::QueryScope base_scope = now_scope;
  base_scope.window = std::string(baseline_window);
  auto fill = [&](const MetricBinding& binding, std::string stage, std::string split) {
    dialect::QueryScope n = now_scope, b = base_scope;
    if (!split.empty()) { n.by.push_back(split); b.by.push_back(split); }
    StageTableQuery q;
    q.stage = std::move(stage);
    q.split_label = std::move(split);
    q.mean_now = dialect::mean_expr(binding, n).value_or("");
    q.mean_baseline = dialect::mean_expr(binding, b).value_or("");
    q.p95_now = dialect::quantile_expr(binding, 0.95, n).value_or("");
    q.p95_baseline = dialect::quantile_expr(binding, 0.95, b).value_or("");
    if (q.mean_now.empty() && q.p95_now.empty()) return;
    out.metrics.push_back(dialect::presence_series(binding.kind, binding.metric));
    out.queries.push_back(std::move(q));
  };
  if (const MetricBinding* staged = dialect::find_binding(table, Role::kStage); staged && !staged->kind_label.empty()) {
    fill(*staged, "", std::string(staged->kind_label));
  } else {
    for (Role role : stage_roles()) {
      if (const MetricBinding* binding = dialect::find_binding(table, role)) fill(*binding, role_text(role), "");
    }
  }
  if (out.queries.empty()) {
    out.missing = std::string(table.title) + " exposes no per-request stage durations (" +
                    std::string(table.note) + ")";
  }
  return out;
}

}  // namespace inferscope::dashboard
