// File: trace_settings.h
// The tracing settings `serve` and `gateway` share: where spans go (--otlp-endpoint), head
// sampling (--trace-sample) and the slow-request tail rule (--trace-slow), one validation for
// both, and the exporter they start from them. The flags themselves: trace_flags.h.
// Example: auto exporter = start_trace_exporter(options.tracing, "inferscope-gateway", &registry);
// Pure apart from start_trace_exporter (starts the exporter's thread); thread-compatible.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <inferscope/common/result.h>
#include <inferscope/metrics/registry.h>

#include "trace/request_spans.h"
#include "trace/span_exporter.h"

namespace inferscope::trace {

// TraceSettings: tracing is on when otlp_endpoint is set; then every request is timed and its
// spans exported when the policy keeps it.
struct TraceSettings {
  std::string otlp_endpoint;  // full URL, e.g. http://127.0.0.1:4318/v1/traces; empty: off
  TracePolicy policy;         // --trace-sample, --trace-slow
  bool enabled() const noexcept { return !otlp_endpoint.empty(); }
};

// validate_trace_settings checks the ratio (0..1) and the slow threshold (> 0); errors name the flag.
Result<void> validate_trace_settings(const TraceSettings& settings);

// start_trace_exporter starts the exporter for enabled settings (resource service.name =
// `service_name`; its counters in `registry`); nullptr when tracing is off. Errors name
// --otlp-endpoint.
Result<std::unique_ptr<SpanExporter>> start_trace_exporter(const TraceSettings& settings, std::string_view service_name,
                                                          metrics::Registry* registry);

}  // namespace inferscope::trace
