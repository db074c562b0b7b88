// File: serve_metrics.h
// ServeMetrics registers every metric `inferscope serve` exposes (inferscope_*, vllm:*, gen_ai_*,
// simulated DCGM_FI_*) and feeds them: record_request() per finished request, on_step() per engine
// step, and a collect hook that copies EngineStats into gauges at scrape time (docs/metrics-reference.md).
// Example: ServeMetrics m(registry, options); m.record_request(timeline, {"sim-8b", "/v1/completions", 200});
// Thread-safe. Never labels anything with unconfigured names, prompts or request ids; never throws
// after construction.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/common/result.h>
#include <inferscope/metrics/registry.h>
#include <inferscope/timeline/request_timeline.h>
#include <inferscope/timeline/timeline_summary.h>

#include "serve/engine/engine_types.h"

namespace inferscope::serve {

// ServeMetricsOptions selects the dialects and the bounded label values.
struct ServeMetricsOptions {
  std::vector<std::string> model_names;                      // served names; [0] labels engine-level series
  std::vector<std::string> dialects{"inferscope", "vllm"};   // any of "inferscope", "vllm", "gen_ai"
  // LoRA (serve --lora-modules, --max-loras): adapter names in order (adapter a = lora_names[a-1])
  // and the slots; non-empty: vllm:lora_requests_info and the inferscope_lora_* series.
  std::vector<std::string> lora_names;
  std::uint32_t max_loras = 0;
  std::uint32_t data_parallel_size = 1;  // ranks: vLLM's `engine` label "0".."N-1", one DCGM gpu each
  std::vector<std::string> routes{"/v1/chat/completions", "/v1/completions"};
  std::vector<std::string> dependency_names{"embedding", "rerank", "guardrail", "retrieval"};
  std::uint32_t max_model_len = 8192;   // vLLM token histograms: 1-2-5 buckets up to this
  std::uint32_t speculative_tokens = 0; // > 0: the spec-decode series, per position 0..K-1 (as vLLM, only when on)
  bool vllm_legacy_aliases = false;     // also vllm:time_per_output_token_seconds, vllm:gpu_cache_usage_perc
  bool simulated_gpu = true;            // DCGM_FI_* gauges, labelled simulated="true"
  double time_scale = 1.0;              // engine model seconds / time_scale = real seconds
  std::string hostname = "localhost";   // DCGM `Hostname` label
};

// validate_dialects checks dialect names; "cannot use metric dialect from <where>: <cause>".
Result<void> validate_dialects(const std::vector<std::string>& dialects, std::string_view where);

// RequestOutcome is the bounded facts about a finished request that are not in its timeline.
struct RequestOutcome {
  std::string_view model;       // served name; anything else becomes "other"
  std::string_view route;       // request path, e.g. "/v1/chat/completions"
  int http_status = 200;        // 0 = no status reached the client
  std::uint32_t max_tokens = 0; // request's max_tokens (0 = not given: vllm:request_params_max_tokens skipped)
  std::uint32_t n = 1;          // request's n
  std::uint32_t engine = 0;     // data-parallel rank that ran it (vllm:* engine label)
  bool stream = false;          // streamed (Dynamo's request_type "stream" vs "unary")
  // trace_id: the exported trace's id (32 hex) or empty; the inferscope_* latency histograms then
  // carry it as an exemplar stamped exemplar_time (timeline::RequestLabels).
  std::string_view trace_id{};
  std::chrono::system_clock::time_point exemplar_time{};
};


// ServeMetrics owns the cached handles of every serve metric in one registry.
class ServeMetrics {
 public:
  // ServeMetrics registers the families of the enabled dialects in `registry` (which must outlive
  // it) and pre-creates every vllm:request_success_total{finished_reason} child at 0. Throws
  // std::invalid_argument on an empty model list, an unknown dialect or a name clash (setup misuse).
  ServeMetrics(metrics::Registry& registry, ServeMetricsOptions options);
  ~ServeMetrics();
  ServeMetrics(const ServeMetrics&) = delete;
  ServeMetrics& operator=(const ServeMetrics&) = delete;

  // begin_request counts `timeline` in inferscope_requests_in_flight until record_request.
  void begin_request(timeline::RequestTimeline& timeline) noexcept;

  // record_request observes one finished request in every enabled dialect. Call exactly once per
  // request, after timeline.finish(). O(stages + output events); never throws.
  void record_request(const timeline::RequestTimeline& timeline, const RequestOutcome& outcome) noexcept;
  // The same with the timeline's summary already computed (timeline::summarize).
  void record_request(const timeline::RequestTimeline& timeline, const timeline::TimelineSummary& summary,
                      const RequestOutcome& outcome) noexcept;

  // on_step observes one step of data-parallel rank `engine` (step duration, batch tokens). Runs
  // on that engine's thread: a few histogram writes, no lock.
  void on_step(const StepInfo& step, std::uint32_t engine = 0) noexcept;

  // set_engine_stats_source installs the function the collect hook calls before each scrape
  // to refresh the engine gauges and counters (an empty function detaches). The source must be
  // thread-safe. Thread-safe; the hook keeps working (as a no-op) after ServeMetrics is destroyed.
  void set_engine_stats_source(std::function<EngineStats()> source);
  // EngineStatsSource appends one EngineStats per data-parallel rank, rank order.
  using EngineStatsSource = std::function<void(std::vector<EngineStats>&)>;
  // set_engine_stats_sources is set_engine_stats_source for a data-parallel server: vllm:* and
  // DCGM series per rank, inferscope_* ones summed over the ranks.
  void set_engine_stats_sources(EngineStatsSource source);

  // refresh_engine_stats runs the collect hook's work now (tests; the hook calls it per render).
  void refresh_engine_stats();

  // requests_recorded returns how many record_request calls have completed (one mutex).
  std::uint64_t requests_recorded() const;
  // wait_requests_recorded blocks until at least `at_least` requests are recorded (true) or
  // `limit` of real time passes (false), so tests wait on the event instead of polling scrapes.
  bool wait_requests_recorded(std::uint64_t at_least, std::chrono::milliseconds limit) const;

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the registry's collect hook
};

}  // namespace inferscope::serve
