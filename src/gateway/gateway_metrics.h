// File: gateway_metrics.h
// GatewayMetrics owns the gateway's metric handles: the inferscope_* request families through the
// timeline library (stages gateway_queue, preprocess, upstream_connect, upstream_ttft, stream,
// send; e2e, TTFT, TPOT, ITL, tokens, requests by status class and finish reason), the gateway's
// own inferscope_gateway_* families (errors by kind, in-flight and queued per upstream, upstream
// connections new/reused, upstream health, usage estimated from events, admission rejections) and
// OpenTelemetry GenAI client families (gen_ai_*). Never vllm:*. Labels are bounded: model is a
// configured name or "other", upstream a configured name. Example:
//   GatewayMetrics m(registry, config); m.record(timeline, {"llama", "/v1/chat/completions", 200});
// Thread-safe: handles are created at construction; recording never looks a series up by string
// except the upstream/kind error counters, which are pre-created too.
#pragma once

#include <inferscope/metrics/counter.h>
#include <inferscope/metrics/gauge.h>
#include <inferscope/metrics/histogram.h>
#include <inferscope/metrics/registry.h>
#include <inferscope/timeline/timeline_recorder.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/gateway_config.h"

namespace inferscope::gateway {

// ErrorKind is the bounded `kind` label of inferscope_gateway_errors_total.
enum class ErrorKind : std::uint8_t {
  kConnectRefused, kConnectTimeout, kTls, kReset, kHeaderTimeout, kIdleTimeout, kUpstream4xx, kUpstream5xx,
  kMalformedStream, kTruncatedStream, kQueueFull, kQueueTimeout, kClientDisconnect, kBadRequest, kUnauthorized,
};
inline constexpr std::size_t kErrorKindCount = 15;
std::string_view to_string(ErrorKind kind) noexcept;

// UpstreamGauges are one upstream's live handles.
struct UpstreamGauges {
  metrics::Gauge in_flight, queued, healthy;
  metrics::Counter connections_new, connections_reused;
  std::vector<metrics::Counter> errors;  // indexed by ErrorKind
};

class GatewayMetrics {
 public:
  // GatewayMetrics registers every family in `registry` (which must outlive it).
  GatewayMetrics(metrics::Registry& registry, const GatewayConfig& config);
  ~GatewayMetrics();

  // begin counts a request in inferscope_requests_in_flight.
  void begin(timeline::RequestTimeline& timeline) noexcept;
  // record observes a finished request (every family fed from its timeline). With
  // `labels.trace_id` set (the request's exported trace, as serve does it) the latency
  // observations carry it as a `trace_id` exemplar stamped `labels.exemplar_time`: the inferscope_*
  // e2e, TTFT and stage histograms, gen_ai_client_operation_duration_seconds and
  // gen_ai_client_operation_time_to_first_chunk_seconds (OpenMetrics exposition only).
  void record(const timeline::RequestTimeline& timeline, const timeline::RequestLabels& labels) noexcept;
  // upstream returns the handles of upstream number `index` (config order).
  UpstreamGauges& upstream(std::size_t index) { return upstreams_[index]; }
  // usage_estimated counts responses whose token count came from counting content events.
  void usage_estimated() noexcept { usage_estimated_.inc(); }
  // gateway_error counts an error that belongs to no upstream (queue, auth, bad request).
  void gateway_error(ErrorKind kind) noexcept;

 private:
  std::unique_ptr<timeline::TimelineRecorder> recorder_;
  std::vector<UpstreamGauges> upstreams_;
  std::vector<metrics::Counter> gateway_errors_;
  metrics::Counter usage_estimated_;
  std::vector<std::string> models_;  // configured names, then "other"
  // gen_ai_* handles, pre-created: [operation][model] (duration also by error type).
  std::vector<metrics::Histogram> gen_ai_duration_;  // [(op * models + model) * errors + error]
  std::vector<metrics::Histogram> gen_ai_ttfc_, gen_ai_tpoc_, gen_ai_input_, gen_ai_output_;
};

}  // namespace inferscope::gateway
