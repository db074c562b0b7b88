// File: serve_metrics_binding.h
// Glue between Server and ServeMetrics (serve_metrics.h): create the metric families for the
// configured models and dialects, and feed them engine steps and engine stats at scrape time.
// Example: if (auto r = bind_serve_metrics(state); !r) fail(r.error()); ... attach_engine_metrics(state);
// Setup code: call once from Server::start, before any request.
#pragma once

#include <inferscope/common/result.h>

namespace inferscope::serve {

struct ServerState;

// bind_serve_metrics creates state.metrics in state.registry. Fails (instead of throwing) on an
// unknown dialect or a registration conflict.
Result<void> bind_serve_metrics(ServerState& state);

// attach_engine_metrics installs the engine step listener and the stats source (state.engines set).
void attach_engine_metrics(ServerState& state);

}  // namespace inferscope::serve
