// File: dialect/promql.h
// PromQL builders over the dialect table, shared by the rules generator, the doctor and the
// dashboard so that "mean TTFT" or "p95 e2e" means the same query everywhere.
// Example: QueryScope s{.matchers = R"(job="vllm")", .by = {"model_name"}, .window = "5m"};
//          auto p95 = quantile_expr(*find_binding(DialectId::kVllm, Role::kE2e), 0.95, s);
// Thread-safe (pure functions). Every expression returns values in the binding's `unit`
// (scale applied); an expression that a metric kind cannot answer is nullopt, never a guess.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dialect/dialect.h"

namespace inferscope::dialect {

// QueryScope restricts and groups a query.
struct QueryScope {
  std::string matchers;         // extra matchers without braces (`job="vllm",model_name="m1"`), or empty
  std::vector<std::string> by;  // labels kept by the aggregation; empty = aggregate to one series
  std::string window = "5m";    // rate() range; keep >= 3 scrape intervals (rate over one sample is empty)
};

// format_number prints a PromQL number literal: shortest round-trip form ("0.95", "1e-06", "+Inf").
std::string format_number(double value);

// promql_string returns `text` as a double-quoted PromQL string literal, the one escape of the
// project for label values in matchers (`job=` + promql_string(job)): \ and " are escaped, newline,
// CR and tab as \n \r \t, other control bytes (and every byte >= 0x80 when `text` is not valid
// UTF-8) as \xNN; valid UTF-8 passes through. Prometheus decodes it back to exactly `text`.
std::string promql_string(std::string_view text);

// series_selector returns `name{fixed,extra}` (or `name` when both are empty).
std::string series_selector(std::string_view name, std::string_view fixed, std::string_view extra);

// rate_expr: events per second. Counter: sum by (...) (rate(metric[w])) * scale; histogram: rate of
// _count (observations per second). nullopt for gauges and counter ratios.
std::optional<std::string> rate_expr(const MetricBinding& binding, const QueryScope& scope);

// mean_expr: mean per observation. Histogram: rate(_sum) / rate(_count); counter ratio:
// rate(metric) / rate(operand); gauge kinds: value_expr. NaN when nothing was observed in the
// window (0/0), which compares false in alerts. nullopt for plain counters.
std::optional<std::string> mean_expr(const MetricBinding& binding, const QueryScope& scope);

// quantile_expr: histogram_quantile(q, sum by (le, ...) (rate(_bucket[w]))) * scale. Histograms
// only (nullopt otherwise: counters and gauges have no distribution). q in [0, 1].
std::optional<std::string> quantile_expr(const MetricBinding& binding, double q, const QueryScope& scope);

// value_expr: the current value of a gauge kind, aggregated with the binding's aggregation
// (sum/avg/max by ...); kBusyFromIdle gives 1 - avg(rate(idle seconds)). nullopt for histograms,
// counters and counter ratios.
std::optional<std::string> value_expr(const MetricBinding& binding, const QueryScope& scope);

// increase_ratio_expr: share of `part` in `whole` over the window, e.g. errors / requests:
// (sum by (...) (rate(part)) or sum by (...) (rate(whole)) * 0) / sum by (...) (rate(whole)).
// The `or` gives 0 (not an empty result) while `whole` has traffic and `part` has no series yet.
// When `disjoint`, the denominator is part + whole (Triton counts successes and failures apart).
std::optional<std::string> counter_share_expr(const MetricBinding& part, const MetricBinding& whole,
                                              const QueryScope& scope, bool disjoint);

// error_ratio_expr: failed / all requests of dialect `id` (counter_share_expr of kErrors in
// kRequests, honouring the dialect's ErrorAccounting). nullopt when the dialect lacks either.
std::optional<std::string> error_ratio_expr(DialectId id, const QueryScope& scope);
std::optional<std::string> error_ratio_expr(const Dialect& table, const QueryScope& scope);

// presence_expr: `count by (...) (<one series name of the binding>{...})`, counting the series
// that prove the metric is exposed (histograms: _count). With `include_legacy`, legacy names are
// or-ed in, so a target still on an old name counts as having the data.
std::string presence_expr(const MetricBinding& binding, const QueryScope& scope, bool include_legacy);

// with_metric returns a copy of `binding` reading `name` instead (e.g. one of its legacy names),
// so every builder above works on the old name too.
MetricBinding with_metric(const MetricBinding& binding, std::string_view name);

// presence_series returns the series name that proves `metric` of `kind` is exposed: the name
// itself, or name + "_count" for histograms.
std::string presence_series(MetricKind kind, std::string_view metric);

}  // namespace inferscope::dialect
