// File: metric_options.h
// Registration options for metric families and the registry.
// Example: MetricOptions o{.name = "app_requests_total", .help = "Requests.", .label_names = {"route"}};
// Plain value types (thread-compatible), validated by Registry at registration (std::invalid_argument
// on misuse), never consulted on the hot path. Every member has a default initializer so that
// designated initializers compile cleanly under -Wextra (-Wmissing-field-initializers).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace inferscope::metrics {

// MetricOptions describes a counter or gauge family (and the common part of a histogram family).
struct MetricOptions {
  std::string name{};                       // [a-zA-Z_:][a-zA-Z0-9_:]*; counters MUST end in "_total"
  std::string help{};                       // any UTF-8; escaped on output; empty = no HELP line
  std::vector<std::string> label_names{};  // [a-zA-Z_][a-zA-Z0-9_]*, no "__" prefix, not le/quantile,
                                            // unique, at most 32; fixed at registration
  std::string unit{};                       // optional OpenMetrics UNIT ("seconds"); must be the
                                            // family name's suffix ("_seconds")
  std::optional<std::size_t> max_series{};  // per-family limit; default RegistryOptions (1,000)
  // foreign_name: the name belongs to another system whose dashboards query it verbatim, so it is
  // kept even where it breaks this registry's own naming rule that only counters end in "_total"
  // (vLLM's vllm:iteration_tokens_total is a histogram; llm-d dashboards read its _bucket series).
  // Everything else is still checked: the character set, reserved suffixes, a counter's "_total",
  // clashes between exposition names. Never set it for names you define.
  bool foreign_name = false;
};

// HistogramOptions adds bucket bounds and the le dialect.
struct HistogramOptions : MetricOptions {
  std::vector<double> buckets{};  // strictly increasing finite bounds; +Inf implicit
  bool decimal_le = false;        // print le like Python floats ("1.0") in 0.0.4 too - vllm: dialect
};

// RegistryOptions bounds the number of series (overflow series and self-metrics excluded from the
// per-family limit; every live series counts towards the total, the self-metrics' excepted).
struct RegistryOptions {
  std::size_t max_series_per_family = 1000;
  std::size_t max_series_total = 100000;
};

}  // namespace inferscope::metrics
