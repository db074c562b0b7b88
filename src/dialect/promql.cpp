// PromQL text builders. Plain string assembly: the output is checked by promtool in the tests
// (tests/dialect/promql_integration_test.cpp) rather than by a PromQL parser of our own.
#include "dialect/promql.h"

#include <charconv>
#include <cmath>

#include "metrics/detail/text_format.h"  // is_valid_utf8 (the one UTF-8 check of the project)

namespace inferscope::dialect {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

// aggregate wraps `inner` in `op by (labels) (inner)`, or `op(inner)` when there is no grouping.
std::string aggregate(std::string_view op, const std::vector<std::string>& by, const std::string& inner) {
  std::string out(op);
  if (!by.empty()) out += " by (" + join(by) + ") ";
  out += "(" + inner + ")";
  return out;
}

std::string rate_of(std::string_view series, const MetricBinding& b, const QueryScope& s) {
  return "rate(" + series_selector(series, b.matchers, s.matchers) + "[" + s.window + "])";
}

std::string scaled(std::string expr, double scale) {
  if (scale == 1) return expr;
  return "(" + expr + ") * " + format_number(scale);
}

std::string_view aggregation_op(Aggregation a) {
  switch (a) {
    case Aggregation::kSum: return "sum";
    case Aggregation::kAvg: return "avg";
    case Aggregation::kMax: return "max";
  }
  return "sum";
}

}  // namespace

std::string format_number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

std::string promql_string(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  const bool utf8 = metrics::detail::is_valid_utf8(text);
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8)) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  out += '"';
  return out;
}

std::string series_selector(std::string_view name, std::string_view fixed, std::string_view extra) {
  std::string out(name);
  if (fixed.empty() && extra.empty()) return out;
  out += "{";
  out += fixed;
  if (!fixed.empty() && !extra.empty()) out += ",";
  out += extra;
  out += "}";
  return out;
}

std::string presence_series(MetricKind kind, std::string_view metric) {
  std::string name(metric);
  if (kind == MetricKind::kHistogram) name += "_count";
  return name;
}

std::optional<std::string> rate_expr(const MetricBinding& b, const QueryScope& s) {
  if (b.kind == MetricKind::kCounter) return scaled(aggregate("sum", s.by, rate_of(b.metric, b, s)), b.scale);
  if (b.kind == MetricKind::kHistogram) {
    return aggregate("sum", s.by, rate_of(std::string(b.metric) + "_count", b, s));
  }
  return std::nullopt;
}

std::optional<std::string> mean_expr(const MetricBinding& b, const QueryScope& s) {
  switch (b.kind) {
    case MetricKind::kHistogram: {
      const std::string base(b.metric);
      return scaled(aggregate("sum", s.by, rate_of(base + "_sum", b, s)) + " / " +
                        aggregate("sum", s.by, rate_of(base + "_count", b, s)),
                    b.scale);
    }
    case MetricKind::kCounterRatio:
      return scaled(aggregate("sum", s.by, rate_of(b.metric, b, s)) + " / " +
                        aggregate("sum", s.by, rate_of(b.operand, b, s)),
                    b.scale);
    case MetricKind::kGauge:
    case MetricKind::kGaugeSum:
    case MetricKind::kGaugeDifference:
    case MetricKind::kBusyFromIdle:
      return value_expr(b, s);
    case MetricKind::kCounter:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> quantile_expr(const MetricBinding& b, double q, const QueryScope& s) {
  if (b.kind != MetricKind::kHistogram) return std::nullopt;
  std::vector<std::string> by{"le"};
  by.insert(by.end(), s.by.begin(), s.by.end());
  const std::string buckets = aggregate("sum", by, rate_of(std::string(b.metric) + "_bucket", b, s));
  return scaled("histogram_quantile(" + format_number(q) + ", " + buckets + ")", b.scale);
}

std::optional<std::string> value_expr(const MetricBinding& b, const QueryScope& s) {
  const std::string_view op = aggregation_op(b.aggregation);
  const std::string main = series_selector(b.metric, b.matchers, s.matchers);
  switch (b.kind) {
    case MetricKind::kGauge:
      return scaled(aggregate(op, s.by, main), b.scale);
    case MetricKind::kGaugeSum:
    case MetricKind::kGaugeDifference: {
      // Both gauges carry the same labels (one exporter), so one-to-one matching pairs them up.
      const std::string other = series_selector(b.operand, b.matchers, s.matchers);
      const char* sign = b.kind == MetricKind::kGaugeSum ? " + " : " - ";
      return scaled(aggregate(op, s.by, main + sign + other), b.scale);
    }
    case MetricKind::kBusyFromIdle:
      return "1 - " + aggregate("avg", s.by, rate_of(b.metric, b, s));
    case MetricKind::kHistogram:
    case MetricKind::kCounter:
    case MetricKind::kCounterRatio:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> counter_share_expr(const MetricBinding& part, const MetricBinding& whole,
                                              const QueryScope& s, bool disjoint) {
  const auto part_rate = rate_expr(part, s);
  const auto whole_rate = rate_expr(whole, s);
  if (!part_rate || !whole_rate) return std::nullopt;
  const std::string numerator = "(" + *part_rate + " or " + *whole_rate + " * 0)";
  if (!disjoint) return numerator + " / " + *whole_rate;
  return numerator + " / (" + numerator + " + " + *whole_rate + ")";
}

std::optional<std::string> error_ratio_expr(const Dialect& table, const QueryScope& scope) {
  const MetricBinding* errors = find_binding(table, Role::kErrors);
  const MetricBinding* requests = find_binding(table, Role::kRequests);
  if (errors == nullptr || requests == nullptr) return std::nullopt;
  return counter_share_expr(*errors, *requests, scope,
                            table.error_accounting == ErrorAccounting::kDisjointFromRequests);
}

std::optional<std::string> error_ratio_expr(DialectId id, const QueryScope& scope) {
  return error_ratio_expr(dialect(id), scope);
}

std::string presence_expr(const MetricBinding& b, const QueryScope& s, bool include_legacy) {
  std::string out = aggregate("count", s.by, series_selector(presence_series(b.kind, b.metric), b.matchers, s.matchers));
  if (include_legacy) {
    for (const LegacyName& legacy : b.legacy) {
      out += " or " + aggregate("count", s.by,
                                series_selector(presence_series(b.kind, legacy.name), b.matchers, s.matchers));
    }
  }
  return out;
}

MetricBinding with_metric(const MetricBinding& binding, std::string_view name) {
  MetricBinding copy = binding;
  copy.metric = name;
  return copy;
}

}  // namespace inferscope::dialect
