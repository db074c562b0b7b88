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
#include <vector>

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

// resource_attributes is the resource every exported span names, as OpenTelemetry SDKs build it
// from their environment: the pairs of `otel_resource_attributes` (OTEL_RESOURCE_ATTRIBUTES:
// key=value,key=value, values percent-encoded, spaces around either trimmed), then service.name
// from `otel_service_name` (OTEL_SERVICE_NAME) when not empty, else from those pairs, else
// `default_service_name`. Either may be null (unset). up's trace store files traces under
// service.name as their job, so OTEL_SERVICE_NAME=<scrape job> makes /api/traces?job= match the
// job's metrics. A malformed entry is an error naming the variable and the entry's position (not
// its text: it may hold anything).
Result<std::vector<Attribute>> resource_attributes(std::string_view default_service_name, const char* otel_service_name,
                                                   const char* otel_resource_attributes);

// start_trace_exporter starts the exporter for enabled settings (resource: resource_attributes of
// `service_name` and the process's environment; its counters in `registry`); nullptr when tracing
// is off. Errors name --otlp-endpoint or the environment variable.
Result<std::unique_ptr<SpanExporter>> start_trace_exporter(const TraceSettings& settings, std::string_view service_name,
                                                          metrics::Registry* registry);

}  // namespace inferscope::trace
