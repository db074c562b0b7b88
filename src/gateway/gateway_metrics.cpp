// File: gateway_metrics.cpp
// Every series a request can touch is created here, once: recording is then index arithmetic.
#include "gateway/gateway_metrics.h"

#include <inferscope/metrics/buckets.h>
#include <inferscope/timeline/timeline_summary.h>

namespace inferscope::gateway {

namespace {
constexpr std::array<std::string_view, 2> kOperations = {"chat", "text_completion"};
constexpr std::array<std::string_view, 5> kErrorTypes = {"", "4xx", "5xx", "abort", "error"};
// OTel GenAI recommended bounds for gen_ai.client.operation.duration and token usage.
const std::vector<double> kDurationBuckets = {0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12,
                                              10.24, 20.48, 40.96, 81.92};
const std::vector<double> kChunkBuckets = {0.001, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2,
                                           0.3, 0.4, 0.5, 0.75, 1.0, 2.5};
const std::vector<double> kTokenBuckets = {1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144,
                                           1048576, 4194304, 16777216, 67108864};
}  // namespace

std::string_view to_string(ErrorKind kind) noexcept {
  static constexpr std::array<std::string_view, kErrorKindCount> kNames = {
      "connect_refused", "connect_timeout", "tls",          "reset",        "header_timeout",
      "idle_timeout",    "upstream_4xx",    "upstream_5xx", "malformed_stream", "truncated_stream",
      "queue_full",      "queue_timeout",   "client_disconnect", "bad_request", "unauthorized"};
  return kNames[static_cast<std::size_t>(kind)];
}

GatewayMetrics::GatewayMetrics(metrics::Registry& registry, const GatewayConfig& config) {
  timeline::TimelineRecorderOptions ro;
  for (const auto& [model, names] : config.models) ro.model_names.push_back(model);
  ro.routes = {"/v1/chat/completions", "/v1/completions"};
  models_ = ro.model_names;
  models_.emplace_back(timeline::kOtherLabel);
  recorder_ = std::make_unique<timeline::TimelineRecorder>(registry, ro);

  auto& in_flight = registry.gauge({.name = "inferscope_gateway_upstream_in_flight",
                                    .help = "Requests the gateway has in flight to each upstream.",
                                    .label_names = {"upstream"}});
  auto& queued = registry.gauge({.name = "inferscope_gateway_queued_requests",
                                 .help = "Requests waiting in the gateway's admission queue of each upstream.",
                                 .label_names = {"upstream"}});
  auto& healthy = registry.gauge({.name = "inferscope_gateway_upstream_healthy",
                                  .help = "1 when the upstream is in rotation, 0 while passive health skips it.",
                                  .label_names = {"upstream"}});
  auto& connections = registry.counter({.name = "inferscope_gateway_upstream_connections_total",
                                        .help = "Upstream requests by connection: a new one or a reused keep-alive one.",
                                        .label_names = {"upstream", "connection"}});
  auto& errors = registry.counter({.name = "inferscope_gateway_errors_total",
                                   .help = "Failed requests by upstream and kind (upstream \"none\": the gateway's own).",
                                   .label_names = {"upstream", "kind"}});
  for (const auto& u : config.upstreams) {
    UpstreamGauges g;
    g.in_flight = in_flight.with({u.name});
    g.queued = queued.with({u.name});
    g.healthy = healthy.with({u.name});
    g.healthy.set(1);
    g.connections_new = connections.with({u.name, "new"});
    g.connections_reused = connections.with({u.name, "reused"});
    for (std::size_t k = 0; k < kErrorKindCount; ++k) {
      g.errors.push_back(errors.with({u.name, to_string(static_cast<ErrorKind>(k))}));
    }
    upstreams_.push_back(std::move(g));
  }
  for (std::size_t k = 0; k < kErrorKindCount; ++k) {
    gateway_errors_.push_back(errors.with({"none", to_string(static_cast<ErrorKind>(k))}));
  }
  usage_estimated_ = registry
                         .counter({.name = "inferscope_gateway_usage_estimated_total",
                                   .help = "Responses without upstream usage whose output tokens are the count of "
                                           "content events (an estimate)."})
                         .with({});

  auto& duration = registry.histogram({{.name = "gen_ai_client_operation_duration_seconds",
                                        .help = "GenAI operation duration as the gateway's clients saw it.",
                                        .label_names = {"gen_ai_operation_name", "gen_ai_request_model", "error_type"},
                                        .unit = "seconds"},
                                       kDurationBuckets});
  auto& ttfc = registry.histogram({{.name = "gen_ai_client_operation_time_to_first_chunk_seconds",
                                    .help = "Time to the first content chunk of a streamed GenAI response.",
                                    .label_names = {"gen_ai_operation_name", "gen_ai_request_model"},
                                    .unit = "seconds"},
                                   kDurationBuckets});
  auto& tpoc = registry.histogram({{.name = "gen_ai_client_operation_time_per_output_chunk_seconds",
                                    .help = "Time per output chunk after the first of a streamed GenAI response.",
                                    .label_names = {"gen_ai_operation_name", "gen_ai_request_model"},
                                    .unit = "seconds"},
                                   kChunkBuckets});
  auto& tokens = registry.histogram({{.name = "gen_ai_client_token_usage",
                                      .help = "Tokens per GenAI operation by type (input, output).",
                                      .label_names = {"gen_ai_operation_name", "gen_ai_request_model", "gen_ai_token_type"}},
                                     kTokenBuckets});
  for (std::string_view op : kOperations) {
    for (const std::string& model : models_) {
      for (std::string_view error : kErrorTypes) gen_ai_duration_.push_back(duration.with({op, model, error}));
      gen_ai_ttfc_.push_back(ttfc.with({op, model}));
      gen_ai_tpoc_.push_back(tpoc.with({op, model}));
      gen_ai_input_.push_back(tokens.with({op, model, "input"}));
      gen_ai_output_.push_back(tokens.with({op, model, "output"}));
    }
  }
}

GatewayMetrics::~GatewayMetrics() = default;

void GatewayMetrics::begin(timeline::RequestTimeline& timeline) noexcept { recorder_->begin(timeline); }

void GatewayMetrics::gateway_error(ErrorKind kind) noexcept { gateway_errors_[static_cast<std::size_t>(kind)].inc(); }

void GatewayMetrics::record(const timeline::RequestTimeline& timeline, const timeline::RequestLabels& labels) noexcept {
  const timeline::TimelineSummary s = timeline::summarize(timeline);
  const std::size_t op = labels.route == "/v1/completions" ? 1 : 0;
  const std::size_t m = recorder_->model_index(labels.model);
  const std::size_t cell = op * models_.size() + m;
  std::size_t error = 0;
  if (s.reason == timeline::FinishReason::kAbort) {
    error = 3;
  } else if (labels.http_status >= 500) {
    error = 2;
  } else if (labels.http_status >= 400) {
    error = 1;
  } else if (s.reason == timeline::FinishReason::kError) {
    error = 4;
  }
  // The OpenTelemetry latency histograms lead to the same trace as inferscope_*'s (one
  // observation each per request; the per-chunk and token histograms stay plain).
  const timeline::LatencyObserver latencies(labels);
  latencies.observe(gen_ai_duration_[cell * kErrorTypes.size() + error], s.e2e_seconds);
  if (error == 0) {
    if (s.ttft_seconds) latencies.observe(gen_ai_ttfc_[cell], *s.ttft_seconds);
    timeline::for_each_output_gap(timeline, [&](double gap, std::uint32_t) { gen_ai_tpoc_[cell].observe(gap); });
    if (s.prompt_tokens > 0) gen_ai_input_[cell].observe(s.prompt_tokens);
    gen_ai_output_[cell].observe(s.output_tokens);
  }
  // Last: it counts the request in inferscope_requests_total once every other family has it.
  recorder_->record(timeline, s, labels);
}

}  // namespace inferscope::gateway
