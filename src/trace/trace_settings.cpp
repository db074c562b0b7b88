// File: trace_settings.cpp
#include "trace/trace_settings.h"

namespace inferscope::trace {

Result<void> validate_trace_settings(const TraceSettings& s) {
  if (!(s.policy.sample_ratio >= 0 && s.policy.sample_ratio <= 1)) return make_error("--trace-sample must be in 0..1");
  if (s.policy.slow_seconds && !(*s.policy.slow_seconds > 0)) return make_error("--trace-slow must be positive");
  return {};
}

Result<std::unique_ptr<SpanExporter>> start_trace_exporter(const TraceSettings& settings, std::string_view service_name,
                                                          metrics::Registry* registry) {
  if (!settings.enabled()) return std::unique_ptr<SpanExporter>();
  SpanExporterOptions options;
  options.endpoint = settings.otlp_endpoint;
  options.resource_attributes = {{"service.name", std::string(service_name)}};
  return SpanExporter::start(std::move(options), registry);
}

}  // namespace inferscope::trace
