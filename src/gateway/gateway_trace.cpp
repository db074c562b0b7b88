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

using trace::Span;
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

void add(std::vector<trace::Attribute>& out, trace::AttributeKey key, trace::AttributeValue value) {
  out.push_back(trace::Attribute{std::move(key), std::move(value)});
}

// add_engine_spans derives prefill and decode children of the CLIENT span from llama.cpp's
// timings: decode ends when the event carrying them was read, prefill ends where decode starts;
// neither starts before the upstream call did.
void add_engine_spans(std::vector<Span>& spans, const GatewayTrace& trace, const UpstreamCallFacts& call) {
  const EngineTimings& t = *call.timings;
  const auto span_of = [](double ms) {
    return std::chrono::duration_cast<timeline::Clock::duration>(std::chrono::duration<double, std::milli>(ms));
  };
  const timeline::TimePoint earliest = *call.start;
  timeline::TimePoint decode_start = call.timings_read;
  if (t.predicted_ms && *t.predicted_ms >= 0) {
    decode_start = std::max(earliest, call.timings_read - span_of(*t.predicted_ms));
    Span& decode = spans.emplace_back(trace::child_span(trace.request(), trace.upstream_span_id(), "decode",
                                                        SpanKind::kInternal, decode_start, call.timings_read));
    add(decode.attributes, "inferscope.stage", std::string("decode"));
    add(decode.attributes, "inferscope.derived", true);
    if (t.predicted_n) add(decode.attributes, "gen_ai.usage.output_tokens", static_cast<std::int64_t>(*t.predicted_n));
  }
  if (t.prompt_ms && *t.prompt_ms >= 0) {
    const timeline::TimePoint prefill_start = std::max(earliest, decode_start - span_of(*t.prompt_ms));
    Span& prefill = spans.emplace_back(trace::child_span(trace.request(), trace.upstream_span_id(), "prefill",
                                                         SpanKind::kInternal, prefill_start, decode_start));
    add(prefill.attributes, "inferscope.stage", std::string("prefill"));
    add(prefill.attributes, "inferscope.derived", true);
    if (t.prompt_n) add(prefill.attributes, "gen_ai.usage.input_tokens", static_cast<std::int64_t>(*t.prompt_n));
  }
}

}  // namespace

std::vector<Span> gateway_spans(const GatewayTrace& trace, const timeline::RequestTimeline& timeline,
                                const trace::RequestFacts& facts, const UpstreamCallFacts& call) {
  std::vector<Span> spans = trace::request_spans(trace.request(), timeline, facts);
  if (!call.start) return spans;
  const std::string name = facts.request_model.empty()
                               ? std::string(facts.operation)
                               : std::string(facts.operation) + " " + std::string(facts.request_model);
  Span& client = spans.emplace_back(trace::child_span(trace.request(), trace.request().root_span_id, name,
                                                      SpanKind::kClient, *call.start, call.end));
  client.span_id = trace.upstream_span_id();
  auto& a = client.attributes;
  a.reserve(8);
  add(a, "gen_ai.operation.name", std::string(facts.operation));
  if (!facts.request_model.empty()) add(a, "gen_ai.request.model", std::string(facts.request_model));
  add(a, "http.request.method", std::string("POST"));
  add(a, "server.address", std::string(call.server_address));
  std::int64_t port = 0;
  std::from_chars(call.server_port.data(), call.server_port.data() + call.server_port.size(), port);
  if (port > 0) add(a, "server.port", port);
  add(a, "inferscope.upstream", std::string(call.upstream));
  if (call.http_status > 0) add(a, "http.response.status_code", std::int64_t{call.http_status});
  if (!call.error_type.empty()) {
    add(a, "error.type", std::string(call.error_type));
    client.status = trace::SpanStatus{trace::StatusCode::kError, std::string(call.error_type)};
  }
  if (call.timings) add_engine_spans(spans, trace, call);
  return spans;
}

}  // namespace inferscope::gateway
