// File: server_options.h
// ServerOptions configures one `inferscope serve` HTTP server (listen address, served model names,
// metric dialects, admin API, limits) and the engine and faults it starts with. Example:
//   ServerOptions o; o.port = 0; o.engine.time_scale = 20; auto server = Server::start(o);
// Plain value type. Defaults bind 127.0.0.1 and never expose /admin.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "serve/engine/engine_types.h"
#include "serve/engine/faults.h"
#include "trace/trace_settings.h"

namespace inferscope::serve {

// StreamShape selects how a streamed response carries finish_reason (see ServerOptions).
enum class StreamShape { kOpenAi, kVllm };

// DisaggOptions turns serve into a disaggregated prefill/decode fleet behind one router
// (--prefill-workers N --decode-workers M, both >= 1; docs/disaggregation.md).
struct DisaggOptions {
  std::uint32_t prefill_workers = 0, decode_workers = 0;
  double kv_link_gb_per_s = 25;    // KV link bandwidth, GB/s (1e9 bytes per second)
  double kv_link_latency_ms = 2;   // per transfer, model milliseconds
  double route_overhead_ms = 0.2;  // the router's own work per request, model milliseconds
  bool enabled() const { return prefill_workers > 0 || decode_workers > 0; }
};

// ServerOptions holds every knob of Server::start; Server::start validates them.
struct ServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8000;                  // 0 = ephemeral; Server::port() tells the real one
  std::optional<std::uint16_t> metrics_port;  // also serve /metrics here (MetricsServer)
  std::vector<std::string> model_names{"inferscope-sim-8b"};  // first = default for a missing model
  std::vector<std::string> dialects{"inferscope", "vllm"};     // of inferscope, vllm, gen_ai
  EngineOptions engine;
  // data_parallel_size: engines (ranks) behind this one API server, as vLLM's
  // --data-parallel-size; each has its own simulated GPU, KV cache and steps, and every vllm:*
  // series carries engine="<rank>". A request goes to the least loaded rank (waiting*4+running).
  std::uint32_t data_parallel_size = 1;
  DisaggOptions disagg;  // prefill and decode pools instead of data-parallel ranks
  // lora_modules: LoRA adapter names (vLLM's --lora-modules), served beside the base model: a
  // request whose `model` names one runs with that adapter, which must hold one of
  // engine.max_loras GPU slots (vLLM's --max-loras) while it runs.
  std::vector<std::string> lora_modules;
  FaultSet faults;
  bool enable_admin = false;                  // /admin/faults exists only then (loopback peers)
  // The simulated GPU's DCGM_FI_* gauges: off, a scraper sees what a CPU backend (llama.cpp's) shows.
  bool simulated_gpu = true;
  std::size_t max_body_bytes = 1 << 20;       // larger request bodies get 413
  std::uint64_t seed = 0;                     // seeds per-request generation when a request has none
  unsigned io_threads = 1;                    // one io_context per thread; connections spread over them
  std::uint32_t idle_timeout_ms = 60000;      // keep-alive idle and per-read/per-write deadline
  // stream_shape: where a stream says it is done. kOpenAi: a last chunk with an empty delta and
  // finish_reason (OpenAI's API). kVllm: finish_reason on the chunk that carries the last content,
  // as vLLM's server writes it.
  StreamShape stream_shape = StreamShape::kOpenAi;
  // Per-request traces (src/trace): OTLP/HTTP protobuf to tracing.otlp_endpoint (empty: tracing
  // off), head sampling unless a traceparent says otherwise, and every failed request and every
  // request of at least the slow threshold exported whatever the sampling said.
  trace::TraceSettings tracing;
};

}  // namespace inferscope::serve
