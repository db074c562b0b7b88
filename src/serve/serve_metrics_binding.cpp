// File: serve_metrics_binding.cpp
#include "serve/serve_metrics_binding.h"

#include <chrono>
#include <stdexcept>
#include <string>

#include <inferscope/timeline/timeline_summary.h>

#include "serve/disagg_fleet.h"
#include "serve/engine/engine.h"
#include "serve/request_recording.h"
#include "serve/serve_metrics.h"
#include "serve/server_state.h"

namespace inferscope::serve {

Result<void> bind_serve_metrics(ServerState& state) {
  const ServerOptions& o = state.options;
  if (auto valid = validate_dialects(o.dialects, "--dialects"); !valid) return valid;
  ServeMetricsOptions options;
  options.model_names = o.model_names;
  // Adapters are served names too: requests naming one are labelled with it (bounded: configured).
  options.model_names.insert(options.model_names.end(), o.lora_modules.begin(), o.lora_modules.end());
  options.lora_names = o.lora_modules;
  options.max_loras = o.lora_modules.empty() ? 0 : o.engine.max_loras;
  options.dialects = o.dialects;
  // A disaggregated server is a Dynamo-like frontend: no vllm:* (its workers would be separate
  // targets), so `up` reads it as an inferscope target (docs/disaggregation.md).
  if (o.disagg.enabled()) std::erase(options.dialects, std::string("vllm"));
  options.max_model_len = o.engine.max_model_len;
  options.speculative_tokens = o.engine.speculative_tokens;
  options.data_parallel_size = o.disagg.enabled() ? o.disagg.prefill_workers + o.disagg.decode_workers
                                                  : o.data_parallel_size;
  options.time_scale = o.engine.time_scale;
  options.simulated_gpu = o.simulated_gpu;
  try {
    state.metrics = std::make_unique<ServeMetrics>(state.registry, std::move(options));
  } catch (const std::invalid_argument& e) {
    return make_error(std::string("cannot register serve metrics: ") + e.what());
  }
  return {};
}

void attach_engine_metrics(ServerState& state) {
  ServeMetrics* metrics = state.metrics.get();
  std::vector<Engine*> engines;
  for (std::uint32_t rank = 0; rank < state.engines.size(); ++rank) {
    Engine* engine = state.engines[rank].get();
    engine->set_step_listener([metrics, rank](const StepInfo& step) { metrics->on_step(step, rank); });
    engines.push_back(engine);
  }
  metrics->set_engine_stats_sources([engines = std::move(engines)](std::vector<EngineStats>& out) {
    for (Engine* engine : engines) out.push_back(engine->stats());
  });
}

namespace {

// submit_spans hands the request's spans to the exporter when the trace policy keeps them
// (head-sampled, failed or slow); true when the exporter took them.
bool submit_spans(ServerState& state, const timeline::RequestTimeline& timeline,
                  const timeline::StageIntervals& intervals, const timeline::TimelineSummary& summary,
                  const RequestOutcome& outcome, const trace::RequestTrace* trace) {
  if (state.tracer == nullptr || trace == nullptr) return false;
  const double e2e = timeline::seconds_between(*timeline.moment(timeline::Moment::kArrival), timeline.end());
  if (!state.options.tracing.policy.keep(*trace, trace::is_failed_request(timeline, outcome.http_status), e2e)) {
    return false;
  }
  trace::RequestFacts facts;
  facts.operation = outcome.route == "/v1/chat/completions" ? "chat" : "text_completion";
  facts.request_model = outcome.model;  // the served name, never the raw request text
  facts.response_model = outcome.model;
  facts.route = outcome.route;
  facts.http_status = outcome.http_status;
  facts.max_tokens = outcome.max_tokens;
  trace::SpanWriter writer(trace::thread_span_buffer());
  trace::write_request_spans(writer, *trace, timeline, intervals, summary, facts);
  return state.tracer->submit_encoded(writer.bytes(), writer.spans());
}

}  // namespace

void begin_request(ServerState& state, timeline::RequestTimeline& timeline) {
  state.metrics->begin_request(timeline);
}

void record_request(ServerState& state, timeline::RequestTimeline& timeline, const RequestOutcome& outcome,
                    const trace::RequestTrace* trace) {
  if (!timeline.finished()) timeline.finish(timeline::FinishReason::kAbort, timeline::Clock::now());
  // The spans go first: only a request whose spans the exporter took gets exemplars, so every
  // trace id on /metrics names a trace that was sent.
  // One summary for both, so the spans and the histograms cannot disagree and it is computed once.
  const timeline::StageIntervals intervals = timeline::stage_intervals(timeline);
  const timeline::TimelineSummary summary = timeline::summarize(timeline, intervals);
  RequestOutcome recorded = outcome;
  trace::TraceIdHex trace_hex;
  if (submit_spans(state, timeline, intervals, summary, outcome, trace)) {
    trace_hex = trace::trace_id_hex(trace->trace_id);
    recorded.trace_id = trace_hex.view();
    recorded.exemplar_time = trace::wall_time(timeline.end());
  }
  state.metrics->record_request(timeline, summary, recorded);
  if (state.disagg) state.disagg->record_request(timeline, summary, recorded, outcome.stream);
}

std::optional<trace::RequestTrace> begin_request_trace(const ServerState& state, std::string_view traceparent) {
  if (state.tracer == nullptr) return std::nullopt;
  return trace::RequestTrace::begin(trace::parse_traceparent(traceparent), state.options.tracing.policy.sample_ratio);
}

}  // namespace inferscope::serve
