// File: gateway_trace.cpp
// Names: the CLIENT span follows the OpenTelemetry GenAI client span ("{operation} {model}",
// gen_ai.operation.name, gen_ai.request.model) and the HTTP client conventions (server.address,
// server.port, http.request.method, http.response.status_code, error.type):
// ../shared/reference/tracing.md. llama.cpp's timings: prompt_ms is its prompt processing (up to
// the first token), predicted_ms its token generation after it.
#include "gateway/gateway_trace.h"

#include <charconv>
#include <chrono>

namespace inferscope::gateway {

using trace::SpanKind;

std::optional<GatewayTrace> GatewayTrace::begin(const trace::TraceSettings& settings, std::string_view traceparent) {
  if (!settings.enabled()) return std::nullopt;
  GatewayTrace t;
  t.request_ = trace::RequestTrace::begin(trace::parse_traceparent(traceparent), settings.policy.sample_ratio);
  t.upstream_span_id_ = trace::random_span_id();
  return t;
}

std::string GatewayTrace::upstream_traceparent() const {
  return trace::format_traceparent(request_.trace_id, upstream_span_id_, request_.trace_flags);
}

namespace {

timeline::Clock::duration milliseconds(double ms) {
  return std::chrono::duration_cast<timeline::Clock::duration>(std::chrono::duration<double, std::milli>(ms));
}

// write_engine_spans derives prefill and decode children of the CLIENT span from llama.cpp's
// timings: decode ends when the event carrying them was read, prefill ends where decode starts;
// neither starts before the upstream call did.
void write_engine_spans(trace::SpanWriter& out, const GatewayTrace& trace, const UpstreamCallFacts& call) {
  const EngineTimings& t = *call.timings;
  const timeline::TimePoint earliest = *call.start;
  const trace::TraceId& trace_id = trace.request().trace_id;
  timeline::TimePoint decode_start = call.timings_read;
  if (t.predicted_ms && *t.predicted_ms >= 0) {
    decode_start = std::max(earliest, call.timings_read - milliseconds(*t.predicted_ms));
    out.open(trace_id, trace::random_span_id(), trace.upstream_span_id(), "decode", SpanKind::kInternal,
             trace::unix_nanos(decode_start), trace::unix_nanos(std::max(decode_start, call.timings_read)));
    out.string_attribute("inferscope.stage", "decode");
    out.bool_attribute("inferscope.derived", true);
    if (t.predicted_n) out.int_attribute("gen_ai.usage.output_tokens", static_cast<std::int64_t>(*t.predicted_n));
    out.close(trace::StatusCode::kUnset, {}, trace::kRecordedSpanFlags);
  }
  if (t.prompt_ms && *t.prompt_ms >= 0) {
    const timeline::TimePoint prefill_start = std::max(earliest, decode_start - milliseconds(*t.prompt_ms));
    out.open(trace_id, trace::random_span_id(), trace.upstream_span_id(), "prefill", SpanKind::kInternal,
             trace::unix_nanos(prefill_start), trace::unix_nanos(std::max(prefill_start, decode_start)));
    out.string_attribute("inferscope.stage", "prefill");
    out.bool_attribute("inferscope.derived", true);
    if (t.prompt_n) out.int_attribute("gen_ai.usage.input_tokens", static_cast<std::int64_t>(*t.prompt_n));
    out.close(trace::StatusCode::kUnset, {}, trace::kRecordedSpanFlags);
  }
}

}  // namespace

void write_gateway_spans(trace::SpanWriter& out, const GatewayTrace& trace, const timeline::RequestTimeline& timeline,
                         const trace::RequestFacts& facts, const UpstreamCallFacts& call) {
  trace::write_request_spans(out, trace.request(), timeline, facts);
  if (!call.start) return;
  thread_local std::string name;
  name.assign(facts.operation);
  if (!facts.request_model.empty()) name.append(" ").append(facts.request_model);
  const std::uint64_t start = trace::unix_nanos(*call.start);
  out.open(trace.request().trace_id, trace.upstream_span_id(), trace.request().root_span_id, name, SpanKind::kClient,
           start, trace::unix_nanos(std::max(*call.start, call.end)));
  out.string_attribute("gen_ai.operation.name", facts.operation);
  if (!facts.request_model.empty()) out.string_attribute("gen_ai.request.model", facts.request_model);
  out.string_attribute("http.request.method", "POST");
  out.string_attribute("server.address", call.server_address);
  std::int64_t port = 0;
  std::from_chars(call.server_port.data(), call.server_port.data() + call.server_port.size(), port);
  if (port > 0) out.int_attribute("server.port", port);
  out.string_attribute("inferscope.upstream", call.upstream);
  if (call.http_status > 0) out.int_attribute("http.response.status_code", call.http_status);
  if (!call.error_type.empty()) out.string_attribute("error.type", call.error_type);
  out.close(call.error_type.empty() ? trace::StatusCode::kUnset : trace::StatusCode::kError, call.error_type,
            trace::kRecordedSpanFlags);
  if (call.timings) write_engine_spans(out, trace, call);
}

}  // namespace inferscope::gateway
