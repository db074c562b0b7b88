// File: request_recording.h
// begin_request/record_request bracket one generation request for ServeMetrics (all dialects):
// in-flight count at the start, the timeline plus its bounded label facts at the end, and, with
// --otlp-endpoint, the request's spans cut from that same finished timeline. Example:
//   begin_request(state, t); ... record_request(state, t, {"sim-8b", "/v1/completions", 200}, &trace);
// Thread-safe (ServeMetrics is). outcome.model must be a served name or empty, never the raw request.
#pragma once

#include <inferscope/timeline/request_timeline.h>

#include <optional>
#include <string_view>

#include "serve/serve_metrics.h"
#include "trace/request_spans.h"

namespace inferscope::serve {

struct ServerState;

// begin_request counts `timeline` as in flight; pair it with exactly one record_request.
void begin_request(ServerState& state, timeline::RequestTimeline& timeline);

// record_request finishes `timeline` as kAbort when it is still open (the request ended without a
// finish, e.g. the server stopped), then records it. http_status 0: no status reached the client.
// With a tracer and `trace`, the request's spans go to the exporter when the trace policy keeps
// them (head-sampled, failed or slow); the exporter's queue never makes this wait.
void record_request(ServerState& state, timeline::RequestTimeline& timeline, const RequestOutcome& outcome,
                    const trace::RequestTrace* trace = nullptr);

// begin_request_trace starts the request's trace from its `traceparent` header value (an invalid
// one starts a new trace); nullopt when tracing is off.
std::optional<trace::RequestTrace> begin_request_trace(const ServerState& state, std::string_view traceparent);

}  // namespace inferscope::serve
