// File: gateway_trace.h
// The spans of one proxied request (docs/tracing.md, "The gateway"): the root SERVER span and one
// child per gateway stage from trace::write_request_spans (the timeline the stage histograms observe),
// a CLIENT span for the upstream call, whose id the upstream receives in `traceparent` so that a
// serve or a vLLM exporting traces joins the same trace, and, when llama.cpp's final event carried
// `timings`, prefill and decode children of the CLIENT span derived from them
// (`inferscope.derived = true`).
// Example: auto t = GatewayTrace::begin(config.tracing, request["traceparent"]);
//          upstream_request.set("traceparent", t->upstream_traceparent());
//          ... SpanWriter w(bytes); write_gateway_spans(w, *t, timeline, facts, call);
//              exporter.submit_encoded(bytes, w.spans());
// Plain values and pure functions (thread-compatible); never the prompt or the output text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/timeline/request_timeline.h>

#include "gateway/completion_scan.h"
#include "trace/request_spans.h"
#include "trace/trace_settings.h"

namespace inferscope::gateway {

// GatewayTrace is one request's place in its trace: the trace (continued from a valid incoming
// `traceparent`, else new), its root span and the span id of its upstream call.
class GatewayTrace {
 public:
  // begin returns nullopt when tracing is off. An invalid `traceparent` starts a new trace.
  static std::optional<GatewayTrace> begin(const trace::TraceSettings& settings, std::string_view traceparent);

  // request is the trace, the root span id and the head decision (exemplars read trace_id here).
  const trace::RequestTrace& request() const noexcept { return request_; }
  const trace::SpanId& upstream_span_id() const noexcept { return upstream_span_id_; }
  // upstream_traceparent names the CLIENT span, with the random bit kept and sampled as decided.
  std::string upstream_traceparent() const;
  // continued: a valid traceparent came in (its tracestate may then travel on).
  bool continued() const noexcept { return request_.remote_parent.has_value(); }

 private:
  trace::RequestTrace request_;
  trace::SpanId upstream_span_id_{};
};

// UpstreamCallFacts is what the CLIENT span says about the upstream call.
struct UpstreamCallFacts {
  std::string_view upstream;        // the configured name: inferscope.upstream
  std::string_view server_address;  // server.address, server.port of the upstream URL
  std::string_view server_port;
  std::optional<timeline::TimePoint> start;  // began connecting; nullopt: no upstream call was made
  timeline::TimePoint end{};        // last upstream byte read, or the call given up
  int http_status = 0;              // the upstream's status; 0: no response head
  std::string_view error_type;      // why the call failed (upstream_5xx's "500", "connect_refused"); empty: ok
  std::optional<EngineTimings> timings;  // llama.cpp's timings ...
  timeline::TimePoint timings_read{};    // ... and when the event carrying them was read
};

// write_gateway_spans writes the request's spans: write_request_spans() (root, stage children),
// the CLIENT span (when an upstream call was made) and the derived engine spans. `timeline` must
// be finished.
void write_gateway_spans(trace::SpanWriter& out, const GatewayTrace& trace, const timeline::RequestTimeline& timeline,
                         const trace::RequestFacts& facts, const UpstreamCallFacts& call);

}  // namespace inferscope::gateway
