// File: request_recording.h
// begin_request/record_request bracket one generation request for ServeMetrics (all dialects):
// in-flight count at the start, the timeline plus its bounded label facts at the end. Example:
//   begin_request(state, t); ... record_request(state, t, {"sim-8b", "/v1/completions", 200});
// Thread-safe (ServeMetrics is). outcome.model must be a served name or empty, never the raw request.
#pragma once

#include <inferscope/timeline/request_timeline.h>

#include "serve/serve_metrics.h"

namespace inferscope::serve {

struct ServerState;

// begin_request counts `timeline` as in flight; pair it with exactly one record_request.
void begin_request(ServerState& state, timeline::RequestTimeline& timeline);

// record_request finishes `timeline` as kAbort when it is still open (the request ended without a
// finish, e.g. the server stopped), then records it. http_status 0: no status reached the client.
void record_request(ServerState& state, timeline::RequestTimeline& timeline, const RequestOutcome& outcome);

}  // namespace inferscope::serve
