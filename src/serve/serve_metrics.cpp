// ServeMetrics: registration of the four metric dialects of `inferscope serve` and the mapping of
// one request's TimelineSummary onto each. Exact vLLM names, labels and buckets come from
// shared/reference/metric-dialects.md §2-3 (vllm/v1/metrics/loggers.py, buckets.py); the table of
// everything registered here is docs/metrics-reference.md. Keep the three in sync.
#include "serve/serve_metrics.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include <inferscope/metrics/buckets.h>
#include <inferscope/metrics/lazy_series.h>
#include <inferscope/timeline/timeline_recorder.h>
#include <inferscope/timeline/timeline_summary.h>

namespace inferscope::serve {
namespace {

using metrics::Counter;
using metrics::Gauge;
using metrics::Histogram;
using timeline::Stage;
using timeline::TimelineSummary;
using Labels = std::vector<std::string>;

// vLLM bucket families (vllm/v1/metrics/buckets.py).
const std::vector<double> kVllmRequestLatency = {0.3,  0.5,  0.8,  1.0,  1.5,  2.0,   2.5,   5.0,   10.0,  15.0, 20.0,
                                                 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
const std::vector<double> kVllmTtft = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
                                       1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
const std::vector<double> kVllmItl = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                      0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
const std::vector<double> kVllmParamsN = {1, 2, 5, 10, 20};
const std::vector<double> kVllmIterationTokens = {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
// vLLM's FINISH_REASON_STRINGS (newest), all pre-created at 0.
constexpr std::array<std::string_view, 5> kVllmFinishReasons = {"stop", "length", "abort", "error", "repetition"};

// OpenTelemetry GenAI recommended buckets (semconv gen-ai-metrics.md).
const std::vector<double> kGenAiDuration = {0.01, 0.02, 0.04, 0.08, 0.16,  0.32,  0.64,
                                            1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92};
const std::vector<double> kGenAiTtft = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
                                        0.25,  0.5,   0.75, 1.0,  2.5,  5.0,  7.5,  10.0};
const std::vector<double> kGenAiTpot = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5};
const std::vector<double> kStepTokens = {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
constexpr double kMiB = 1024.0 * 1024.0;


// Registration helpers: the registry throws std::invalid_argument on a clash, which ServeMetrics'
// constructor lets through (setup misuse).
struct Registrar {
  metrics::Registry& r;
  bool decimal_le = false;

  metrics::CounterFamily& counter(std::string name, std::string help, Labels labels) const {
    metrics::MetricOptions o;
    o.name = std::move(name);
    o.help = std::move(help);
    o.label_names = std::move(labels);
    return r.counter(o);
  }
  metrics::GaugeFamily& gauge(std::string name, std::string help, Labels labels) const {
    metrics::MetricOptions o;
    o.name = std::move(name);
    o.help = std::move(help);
    o.label_names = std::move(labels);
    return r.gauge(o);
  }
  metrics::HistogramFamily& histogram(std::string name, std::string help, Labels labels,
                                      std::vector<double> buckets, std::string unit = "",
                                      bool foreign_name = false) const {
    metrics::HistogramOptions o;
    o.foreign_name = foreign_name;
    o.name = std::move(name);
    o.help = std::move(help);
    o.label_names = std::move(labels);
    o.buckets = std::move(buckets);
    o.decimal_le = decimal_le;
    o.unit = std::move(unit);
    return r.histogram(o);
  }
};

// gen_ai_operation maps a route onto an OTel gen_ai.operation.name.
std::size_t gen_ai_operation(std::string_view route) noexcept {
  if (route.find("chat") != std::string_view::npos) return 0;         // "chat"
  if (route.find("completions") != std::string_view::npos) return 1;  // "text_completion"
  return 2;                                                           // "_OTHER"
}

// gen_ai_error maps an outcome onto error.type: "" (success), "abort", "4xx", "5xx" or "error".
std::size_t gen_ai_error(const TimelineSummary& s, int http_status) noexcept {
  if (s.reason == timeline::FinishReason::kAbort) return 1;
  if (http_status >= 400 && http_status < 500) return 2;
  if (http_status >= 500 && http_status < 600) return 3;
  if (s.reason == timeline::FinishReason::kError || http_status < 200 || http_status >= 300) return 4;
  return 0;
}

bool reached_engine(const timeline::RequestTimeline& t) {
  return t.moment(timeline::Moment::kEnqueued) || t.moment(timeline::Moment::kScheduled) || t.first_output();
}

void observe_if(Histogram& h, const std::optional<double>& v) {
  if (v) h.observe(*v);
}

}  // namespace

Result<void> validate_dialects(const std::vector<std::string>& dialects, std::string_view where) {
  for (const std::string& d : dialects) {
    if (d != "inferscope" && d != "vllm" && d != "gen_ai") {
      return make_error("cannot use metric dialect from " + std::string(where) + ": unknown dialect \"" + d +
                        "\" (known: inferscope, vllm, gen_ai)");
    }
  }
  return {};
}

// ---- inferscope_* engine-level series (the request-level ones are the TimelineRecorder's).
struct InferscopeEngine {
  Gauge running, waiting, kv_usage, kv_blocks_used, kv_blocks_capacity, busy;
  Counter preemptions, prefix_queries, prefix_hits, held;
  Counter spec_drafts, spec_draft_tokens, spec_accepted_tokens;  // only with speculative decoding on
  Histogram step_duration, step_tokens;

  InferscopeEngine(const Registrar& reg, std::string_view model, std::uint32_t speculative_tokens) {
    const Labels m = {"model"};
    running = reg.gauge("inferscope_engine_requests_running", "Sequences in the engine's running batch.", m).with({model});
    waiting = reg.gauge("inferscope_engine_requests_waiting", "Sequences waiting in the engine queue.", m).with({model});
    kv_usage = reg.gauge("inferscope_kv_cache_usage_ratio", "KV cache in use, 0..1 of capacity.", m).with({model});
    auto& blocks = reg.gauge("inferscope_kv_cache_blocks", "KV cache blocks by state (used, capacity).",
                             {"model", "state"});
    kv_blocks_used = blocks.with({model, "used"});
    kv_blocks_capacity = blocks.with({model, "capacity"});
    busy = reg.gauge("inferscope_engine_busy_ratio", "Share of recent wall time the engine spent in steps.", m)
               .with({model});
    preemptions = reg.counter("inferscope_engine_preemptions_total", "Sequences preempted (KV taken back).", m)
                      .with({model});
    held = reg.counter("inferscope_engine_held_seconds_total",
                       "Seconds the engine took no step while it had requests to run (a stopped scheduler), "
                       "summed over data-parallel ranks.",
                       m)
               .with({model});
    prefix_queries = reg.counter("inferscope_prefix_cache_queried_tokens_total",
                                 "Prompt tokens looked up in the prefix cache.", m)
                         .with({model});
    prefix_hits = reg.counter("inferscope_prefix_cache_hit_tokens_total", "Prompt tokens found in the prefix cache.", m)
                      .with({model});
    if (speculative_tokens > 0) {
      spec_drafts = reg.counter("inferscope_spec_decode_drafts_total",
                                "Draft rounds verified (speculative decoding; one per decoding sequence and step).", m)
                        .with({model});
      spec_draft_tokens = reg.counter("inferscope_spec_decode_draft_tokens_total",
                                      "Draft tokens proposed for verification (speculative decoding).", m)
                              .with({model});
      spec_accepted_tokens = reg.counter("inferscope_spec_decode_accepted_tokens_total",
                                         "Draft tokens accepted by verification (speculative decoding).", m)
                                 .with({model});
    }
    step_duration = reg.histogram("inferscope_engine_step_duration_seconds",
                                  "Engine step time (model seconds / time_scale).", m,
                                  metrics::default_latency_buckets(), "seconds")
                        .with({model});
    step_tokens = reg.histogram("inferscope_engine_step_tokens", "Tokens computed per engine step (prefill + decode).",
                                m, kStepTokens)
                      .with({model});
  }
};

// ---- vllm:* series, labels {model_name, engine}; exact names and buckets of vLLM V1. Each
// family is registered once and holds one child per data-parallel rank (engine="0".."N-1"), as
// vLLM's PrometheusStatLogger labels every series of a DP server. The constructor is one
// registration per family: long, but a flat list is easiest to check against the reference tables.
struct Vllm {
  // Rank is one engine's children.
  struct Rank {
    Gauge running, waiting, kv_usage, gpu_cache_usage;
    Counter prompt_tokens, generation_tokens, preemptions, prefix_queries, prefix_hits;
    std::array<Counter, kVllmFinishReasons.size()> success;
    Histogram ttft, itl, tpot, e2e, queue, prefill, decode, inference;
    Histogram prompt_len, generation_len, max_generation_len, params_max_tokens, params_n, legacy_tpot;
    Histogram iteration_tokens;
    // Speculative decoding, only when on (vLLM registers them with a speculative config).
    Counter spec_drafts, spec_draft_tokens, spec_accepted_tokens;
    std::vector<Counter> spec_accepted_per_position;  // position "0" .. K-1
  };
  std::vector<Rank> ranks;
  bool legacy = false;

  Vllm(const Registrar& reg, std::string_view model, std::uint32_t engines, double max_model_len, bool with_legacy,
       std::uint32_t speculative_tokens)
      : ranks(std::max<std::uint32_t>(engines, 1)), legacy(with_legacy) {
    const Labels l = {"model_name", "engine"};
    // Each helper registers one family and sets `member` of every rank to its child.
    const auto gauge = [&](Gauge Rank::*member, std::string name, std::string help) {
      auto& family = reg.gauge(std::move(name), std::move(help), l);
      for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r].*member = family.with({model, std::to_string(r)});
    };
    const auto counter = [&](Counter Rank::*member, std::string name, std::string help) {
      auto& family = reg.counter(std::move(name), std::move(help), l);
      for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r].*member = family.with({model, std::to_string(r)});
    };
    const auto hist = [&](Histogram Rank::*member, std::string name, std::string help, const std::vector<double>& buckets) {
      auto& family = reg.histogram(std::move(name), std::move(help), l, buckets);
      for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r].*member = family.with({model, std::to_string(r)});
    };
    gauge(&Rank::running, "vllm:num_requests_running", "Number of requests in model execution batches.");
    gauge(&Rank::waiting, "vllm:num_requests_waiting", "Number of requests waiting to be processed.");
    gauge(&Rank::kv_usage, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.");
    if (legacy) {
      gauge(&Rank::gpu_cache_usage, "vllm:gpu_cache_usage_perc",
            "DEPRECATED: use vllm:kv_cache_usage_perc. GPU KV-cache usage. 1 means 100 percent usage.");
    }
    counter(&Rank::prompt_tokens, "vllm:prompt_tokens_total", "Number of prefill tokens processed.");
    counter(&Rank::generation_tokens, "vllm:generation_tokens_total", "Number of generation tokens processed.");
    counter(&Rank::preemptions, "vllm:num_preemptions_total", "Cumulative number of preemption from the engine.");
    counter(&Rank::prefix_queries, "vllm:prefix_cache_queries_total",
            "Prefix cache queries, in terms of number of queried tokens.");
    counter(&Rank::prefix_hits, "vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.");
    auto& success_family = reg.counter("vllm:request_success_total", "Count of successfully processed requests.",
                                       {"model_name", "engine", "finished_reason"});
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      for (std::size_t i = 0; i < kVllmFinishReasons.size(); ++i) {
        ranks[r].success[i] = success_family.with({model, std::to_string(r), kVllmFinishReasons[i]});
      }
    }
    hist(&Rank::ttft, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", kVllmTtft);
    hist(&Rank::itl, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", kVllmItl);
    hist(&Rank::tpot, "vllm:request_time_per_output_token_seconds",
         "Histogram of time_per_output_token_seconds per request.", kVllmItl);
    if (legacy) {
      hist(&Rank::legacy_tpot, "vllm:time_per_output_token_seconds",
           "DEPRECATED: use vllm:inter_token_latency_seconds. Histogram of time per output token in seconds.", kVllmItl);
    }
    hist(&Rank::e2e, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
         kVllmRequestLatency);
    hist(&Rank::queue, "vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
         kVllmRequestLatency);
    hist(&Rank::prefill, "vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
         kVllmRequestLatency);
    hist(&Rank::decode, "vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
         kVllmRequestLatency);
    hist(&Rank::inference, "vllm:request_inference_time_seconds",
         "Histogram of time spent in RUNNING phase for request.", kVllmRequestLatency);
    const auto token_buckets = metrics::one_two_five_buckets(max_model_len);
    hist(&Rank::prompt_len, "vllm:request_prompt_tokens", "Number of prefill tokens processed.", token_buckets);
    hist(&Rank::generation_len, "vllm:request_generation_tokens", "Number of generation tokens processed.",
         token_buckets);
    hist(&Rank::max_generation_len, "vllm:request_max_num_generation_tokens",
         "Histogram of maximum number of requested generation tokens.", token_buckets);
    hist(&Rank::params_max_tokens, "vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.",
         token_buckets);
    hist(&Rank::params_n, "vllm:request_params_n", "Histogram of the n request parameter.", kVllmParamsN);
    // A histogram whose name ends in _total: vLLM's own name, which dashboards query verbatim.
    auto& iteration_family = reg.histogram("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.",
                                           l, kVllmIterationTokens, "", /*foreign_name=*/true);
    for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r].iteration_tokens = iteration_family.with({model, std::to_string(r)});
    if (speculative_tokens > 0) {
      counter(&Rank::spec_drafts, "vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.");
      counter(&Rank::spec_draft_tokens, "vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.");
      counter(&Rank::spec_accepted_tokens, "vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.");
      auto& per_position = reg.counter("vllm:spec_decode_num_accepted_tokens_per_pos_total",
                                       "Accepted tokens per draft position.", {"model_name", "engine", "position"});
      for (std::size_t r = 0; r < ranks.size(); ++r) {
        for (std::uint32_t j = 0; j < speculative_tokens; ++j)
          ranks[r].spec_accepted_per_position.push_back(per_position.with({model, std::to_string(r), std::to_string(j)}));
      }
    }
  }
};

// ---- gen_ai_* (OpenTelemetry GenAI server metrics, Prometheus-translated names).
struct GenAi {
  metrics::LazySeries<Histogram> duration, ttft, tpot;

  GenAi(const Registrar& reg, const Labels& models)
      : duration(reg.histogram("gen_ai_server_request_duration_seconds", "GenAI server request duration.",
                               {"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model",
                                "gen_ai_response_model", "error_type"},
                               kGenAiDuration, "seconds"),
                 {operations(), {"inferscope"}, models, models, {"", "abort", "4xx", "5xx", "error"}}),
        ttft(reg.histogram("gen_ai_server_time_to_first_token_seconds",
                           "Time to generate the first token for successful responses.", base_labels(), kGenAiTtft, "seconds"),
             {operations(), {"inferscope"}, models, models}),
        tpot(reg.histogram("gen_ai_server_time_per_output_token_seconds",
                           "Time per output token after the first, for successful responses.", base_labels(),
                           kGenAiTpot, "seconds"),
             {operations(), {"inferscope"}, models, models}) {}

  static Labels operations() { return {"chat", "text_completion", "_OTHER"}; }
  static Labels base_labels() {
    return {"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "gen_ai_response_model"};
  }
};

// ---- DCGM exporter field names over the engine's simulated GPU: one GPU per data-parallel rank
// (gpu="<rank>", device nvidia<rank>), as a DP server runs each engine on its own device.
struct Dcgm {
  struct Gpu {
    Gauge util, fb_used, fb_free, power, temp, sm_clock, energy, gr_active;
  };
  std::vector<Gpu> gpus;

  Dcgm(const Registrar& reg, std::string_view hostname, std::uint32_t engines) : gpus(std::max<std::uint32_t>(engines, 1)) {
    const Labels l = {"gpu", "UUID", "device", "modelName", "Hostname", "simulated"};
    const auto gauge = [&](Gauge Gpu::*member, std::string name, std::string help) {
      auto& family = reg.gauge(std::move(name), "SIMULATED by inferscope serve (no GPU): " + help, l);
      for (std::size_t g = 0; g < gpus.size(); ++g) {
        const std::string uuid = fmt::format("GPU-00000000-0000-0000-0000-{:012d}", g);
        gpus[g].*member = family.with({std::to_string(g), uuid, "nvidia" + std::to_string(g), "inferscope-simulated",
                                       hostname, "true"});
      }
    };
    gauge(&Gpu::util, "DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).");
    gauge(&Gpu::fb_used, "DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).");
    gauge(&Gpu::fb_free, "DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).");
    gauge(&Gpu::power, "DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).");
    gauge(&Gpu::temp, "DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).");
    gauge(&Gpu::sm_clock, "DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).");
    gauge(&Gpu::energy, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
          "Total energy consumption since boot (in mJ); a counter in DCGM, a gauge here.");
    gauge(&Gpu::gr_active, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.");
  }
};

// ---- LoRA: vLLM's vllm:lora_requests_info (labels only, the value a timestamp: one series per
// label combination ever seen, consumers take the newest) and inferscope's own counts.
struct Lora {
  metrics::GaugeFamily* info = nullptr;  // null without the vllm dialect
  Gauge loaded, waiting_requests, slots;
  Counter loads, load_seconds;
  bool inferscope = false;

  Lora(const Registrar& reg, std::string_view model, bool with_vllm, bool with_inferscope) : inferscope(with_inferscope) {
    if (with_vllm)
      info = &reg.gauge("vllm:lora_requests_info", "Running stats on lora requests.",
                        {"max_lora", "waiting_lora_adapters", "running_lora_adapters"});
    if (!with_inferscope) return;
    const Labels m = {"model"};
    loaded = reg.gauge("inferscope_lora_adapters_loaded", "LoRA adapters held in GPU slots (sum over ranks).", m)
                 .with({model});
    slots = reg.gauge("inferscope_lora_slots", "LoRA adapter slots (--max-loras, or the max_loras fault's cut; sum over ranks).",
                      m).with({model});
    waiting_requests = reg.gauge("inferscope_lora_waiting_requests",
                                 "Waiting requests whose LoRA adapter is not loaded (waiting for a slot).", m)
                           .with({model});
    loads = reg.counter("inferscope_lora_loads_total", "LoRA adapter loads into a GPU slot.", m).with({model});
    load_seconds = reg.counter("inferscope_lora_load_seconds_total",
                               "Seconds spent loading LoRA adapters (model seconds / time_scale).", m)
                       .with({model});
  }
};

// lora_names_of joins the names of the adapters in `mask` (bit a-1: adapter a) with commas.
std::string lora_names_of(std::uint64_t mask, const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t a = 0; a < names.size() && a < 64; ++a)
    if (mask & (std::uint64_t{1} << a)) out += (out.empty() ? "" : ",") + names[a];
  return out;
}

struct ServeMetrics::State {
  ServeMetricsOptions options;
  Labels models;  // configured names + "other"
  std::unique_ptr<timeline::TimelineRecorder> recorder;
  std::unique_ptr<InferscopeEngine> engine;
  std::unique_ptr<Vllm> vllm;
  std::unique_ptr<GenAi> gen_ai;
  std::unique_ptr<Dcgm> dcgm;
  std::unique_ptr<Lora> lora;  // with --lora-modules only

  std::mutex mu;                        // guards source and last
  EngineStatsSource source;             // empty: no engine attached
  std::vector<EngineStats> now, last;   // per rank: this refresh's stats, the totals already counted
  std::atomic<bool> tokens_from_engine{false};

  std::mutex recorded_mu;  // guards recorded; once per request, never per token
  std::condition_variable recorded_cv;
  std::uint64_t recorded = 0;  // record_request calls so far

  void refresh();
  void refresh_vllm(Vllm::Rank& v, const EngineStats& s, const EngineStats& before);
  void refresh_lora();
  void add_delta(Counter& c, std::uint64_t now, std::uint64_t before) {
    c.add(static_cast<double>(delta(now, before)));
  }
  static std::uint64_t delta(std::uint64_t now, std::uint64_t before) {
    return now >= before ? now - before : now;  // engine restart: count anew
  }
};

void ServeMetrics::State::refresh_vllm(Vllm::Rank& v, const EngineStats& s, const EngineStats& before) {
  v.running.set(s.running);
  v.waiting.set(s.waiting);
  v.kv_usage.set(s.kv_usage);
  v.gpu_cache_usage.set(s.kv_usage);
  add_delta(v.prompt_tokens, s.prompt_tokens_total, before.prompt_tokens_total);
  add_delta(v.generation_tokens, s.generation_tokens_total, before.generation_tokens_total);
  add_delta(v.preemptions, s.preemptions_total, before.preemptions_total);
  add_delta(v.prefix_queries, s.prefix_queries_tokens, before.prefix_queries_tokens);
  add_delta(v.prefix_hits, s.prefix_hit_tokens, before.prefix_hit_tokens);
  if (options.speculative_tokens > 0) {
    add_delta(v.spec_drafts, s.spec_drafts, before.spec_drafts);
    add_delta(v.spec_draft_tokens, s.spec_draft_tokens, before.spec_draft_tokens);
    add_delta(v.spec_accepted_tokens, s.spec_accepted_tokens, before.spec_accepted_tokens);
    for (std::size_t j = 0; j < std::min<std::size_t>(v.spec_accepted_per_position.size(), kMaxSpeculativeTokens); ++j)
      add_delta(v.spec_accepted_per_position[j], s.spec_accepted_per_position[j], before.spec_accepted_per_position[j]);
  }
}

// refresh_lora: vLLM's info series for the adapters running and waiting on any rank, stamped
// now (Unix seconds, as vLLM sets it), and inferscope's counts summed over the ranks.
void ServeMetrics::State::refresh_lora() {
  std::uint64_t running = 0, waiting = 0;
  double loaded = 0, waiting_requests = 0, slots = 0, loads = 0, load_seconds = 0;
  for (std::size_t r = 0; r < now.size(); ++r) {
    const EngineStats& s = now[r];
    running |= s.lora_running;
    waiting |= s.lora_waiting;
    loaded += static_cast<double>(std::popcount(s.lora_loaded));
    waiting_requests += s.lora_waiting_requests;
    slots += s.lora_slots;
    loads += static_cast<double>(delta(s.lora_loads_total, last[r].lora_loads_total));
    load_seconds += std::max(0.0, s.lora_load_seconds_total - last[r].lora_load_seconds_total);
  }
  if (lora->info) {
    const double stamp = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    lora->info->with({std::to_string(options.max_loras), lora_names_of(waiting, options.lora_names),
                      lora_names_of(running, options.lora_names)})
        .set(stamp);
  }
  if (!lora->inferscope) return;
  lora->loaded.set(loaded);
  lora->waiting_requests.set(waiting_requests);
  lora->slots.set(slots);
  lora->loads.add(loads);
  const double scale = options.time_scale > 0 ? options.time_scale : 1.0;
  lora->load_seconds.add(load_seconds / scale);
}

// refresh copies every rank's stats into its vllm:* and DCGM children and the SUM over ranks
// into the inferscope_* series (counts and token counters add up; kv usage is used/capacity of
// the sums; busy is the mean of the ranks' shares, a ratio per GPU).
void ServeMetrics::State::refresh() {
  std::lock_guard lock(mu);
  if (!source) return;
  now.clear();
  source(now);
  if (now.empty()) return;
  last.resize(now.size());
  if (lora) refresh_lora();
  if (engine) {
    double running = 0, waiting = 0, used = 0, capacity = 0, busy_sum = 0, held = 0;
    std::uint64_t preempted = 0, queried = 0, hits = 0, drafts = 0, draft_tokens = 0, accepted = 0;
    for (std::size_t r = 0; r < now.size(); ++r) {
      const EngineStats& s = now[r];
      const EngineStats& before = last[r];
      running += s.running;
      waiting += s.waiting;
      used += static_cast<double>(s.kv_blocks_used);
      capacity += static_cast<double>(s.kv_blocks_total);
      busy_sum += s.busy_fraction;
      held += std::max(0.0, s.held_seconds - before.held_seconds);
      preempted += delta(s.preemptions_total, before.preemptions_total);
      queried += delta(s.prefix_queries_tokens, before.prefix_queries_tokens);
      hits += delta(s.prefix_hit_tokens, before.prefix_hit_tokens);
      drafts += delta(s.spec_drafts, before.spec_drafts);
      draft_tokens += delta(s.spec_draft_tokens, before.spec_draft_tokens);
      accepted += delta(s.spec_accepted_tokens, before.spec_accepted_tokens);
    }
    engine->running.set(running);
    engine->waiting.set(waiting);
    // One rank: its own ratio exactly (the KV usage of a fault-reduced cache is not used/total).
    engine->kv_usage.set(now.size() == 1 ? now[0].kv_usage : (capacity > 0 ? used / capacity : 0));
    engine->kv_blocks_used.set(used);
    engine->kv_blocks_capacity.set(capacity);
    engine->busy.set(busy_sum / static_cast<double>(now.size()));
    engine->preemptions.add(static_cast<double>(preempted));
    engine->held.add(held);
    engine->prefix_queries.add(static_cast<double>(queried));
    engine->prefix_hits.add(static_cast<double>(hits));
    if (options.speculative_tokens > 0) {
      engine->spec_drafts.add(static_cast<double>(drafts));
      engine->spec_draft_tokens.add(static_cast<double>(draft_tokens));
      engine->spec_accepted_tokens.add(static_cast<double>(accepted));
    }
  }
  for (std::size_t r = 0; r < now.size(); ++r) {
    const EngineStats& s = now[r];
    if (vllm && r < vllm->ranks.size()) refresh_vllm(vllm->ranks[r], s, last[r]);
    if (dcgm && r < dcgm->gpus.size()) {
      Dcgm::Gpu& g = dcgm->gpus[r];
      g.util.set(std::clamp(s.busy_fraction, 0.0, 1.0) * 100.0);
      g.fb_used.set(s.gpu_memory_used_bytes / kMiB);
      g.fb_free.set(std::max(0.0, s.gpu_memory_total_bytes - s.gpu_memory_used_bytes) / kMiB);
      g.power.set(s.gpu_power_w);
      g.temp.set(s.gpu_temperature_c);
      g.sm_clock.set(s.busy_fraction > 0.0 ? 1980.0 : 345.0);  // H100 boost vs idle clock
      g.energy.set(s.gpu_energy_mj);
      g.gr_active.set(std::clamp(s.busy_fraction, 0.0, 1.0));
    }
    last[r] = s;
  }
}

ServeMetrics::ServeMetrics(metrics::Registry& registry, ServeMetricsOptions options)
    : state_(std::make_shared<State>()) {
  if (options.model_names.empty()) throw std::invalid_argument("ServeMetrics needs at least one model name");
  if (auto ok = validate_dialects(options.dialects, "ServeMetricsOptions"); !ok) {
    throw std::invalid_argument(ok.error().message);
  }
  const auto enabled = [&options](std::string_view d) {
    return std::find(options.dialects.begin(), options.dialects.end(), d) != options.dialects.end();
  };
  State& st = *state_;
  st.models = options.model_names;
  st.models.emplace_back(timeline::kOtherLabel);
  const std::string& primary = options.model_names.front();
  const Registrar plain{registry, false};
  if (enabled("inferscope")) {
    timeline::TimelineRecorderOptions ro;
    ro.model_names = options.model_names;
    ro.routes = options.routes;
    ro.dependency_names = options.dependency_names;
    st.recorder = std::make_unique<timeline::TimelineRecorder>(registry, std::move(ro));
    st.engine = std::make_unique<InferscopeEngine>(plain, primary, options.speculative_tokens);
  }
  if (enabled("vllm")) {
    st.vllm = std::make_unique<Vllm>(Registrar{registry, true}, primary, options.data_parallel_size,
                                     static_cast<double>(options.max_model_len), options.vllm_legacy_aliases,
                                     options.speculative_tokens);
  }
  if (enabled("gen_ai")) st.gen_ai = std::make_unique<GenAi>(plain, st.models);
  if (!options.lora_names.empty())
    st.lora = std::make_unique<Lora>(plain, primary, enabled("vllm"), enabled("inferscope"));
  if (options.simulated_gpu) st.dcgm = std::make_unique<Dcgm>(plain, options.hostname, options.data_parallel_size);
  st.options = std::move(options);
  // The hook holds the state, not `this`: a scrape after ~ServeMetrics finds no source and returns.
  registry.add_collect_hook([weak = std::weak_ptr<State>(state_)] {
    if (auto state = weak.lock()) state->refresh();
  });
}

ServeMetrics::~ServeMetrics() { set_engine_stats_sources({}); }

void ServeMetrics::begin_request(timeline::RequestTimeline& timeline) noexcept {
  if (state_->recorder) state_->recorder->begin(timeline);
}

// record_request maps one summary onto each enabled dialect in turn (one block per dialect).
void ServeMetrics::record_request(const timeline::RequestTimeline& t, const RequestOutcome& outcome) noexcept {
  record_request(t, timeline::summarize(t), outcome);
}

void ServeMetrics::record_request(const timeline::RequestTimeline& t, const TimelineSummary& s,
                                  const RequestOutcome& outcome) noexcept {
  State& st = *state_;
  if (st.recorder) {
    st.recorder->record(t, s, {.model = outcome.model, .route = outcome.route, .http_status = outcome.http_status,
                               .trace_id = outcome.trace_id, .exemplar_time = outcome.exemplar_time});
  }

  if (st.vllm && reached_engine(t)) {
    Vllm::Rank& v = st.vllm->ranks[std::min<std::size_t>(outcome.engine, st.vllm->ranks.size() - 1)];
    v.success[static_cast<std::size_t>(s.reason)].inc();  // FinishReason order = kVllmFinishReasons order
    v.e2e.observe(s.generation_seconds.value_or(s.e2e_seconds));
    observe_if(v.ttft, s.ttft_seconds);
    observe_if(v.tpot, s.tpot_seconds);
    observe_if(v.inference, s.inference_seconds);
    // vLLM's phase histograms only see phases that completed (no truncated stage).
    const auto complete = [&s](Stage stage) -> std::optional<double> {
      if (s.truncated_stage == stage) return std::nullopt;
      return s.stage_seconds[static_cast<std::size_t>(stage)];
    };
    observe_if(v.queue, complete(Stage::kQueue));
    observe_if(v.prefill, complete(Stage::kPrefill));
    observe_if(v.decode, complete(Stage::kDecode));
    const bool legacy = st.vllm->legacy;
    timeline::for_each_output_gap(t, [&v, legacy](double gap, std::uint32_t) {
      v.itl.observe(gap);  // vLLM: one observation per output event, whatever it carries
      if (legacy) v.legacy_tpot.observe(gap);
    });
    if (s.prompt_tokens > 0) v.prompt_len.observe(s.prompt_tokens);
    v.generation_len.observe(s.output_tokens);
    v.max_generation_len.observe(s.output_tokens);
    if (outcome.max_tokens > 0) v.params_max_tokens.observe(outcome.max_tokens);
    v.params_n.observe(outcome.n);
    if (!st.tokens_from_engine.load(std::memory_order_relaxed)) {
      v.prompt_tokens.add(s.prompt_tokens);
      v.generation_tokens.add(s.output_tokens);
    }
  }

  if (st.gen_ai) {
    const std::size_t op = gen_ai_operation(outcome.route);
    const std::size_t model = std::min(st.models.size() - 1, static_cast<std::size_t>(
        std::find(st.models.begin(), st.models.end() - 1, outcome.model) - st.models.begin()));
    const std::size_t error = gen_ai_error(s, outcome.http_status);
    st.gen_ai->duration.get({op, 0, model, model, error}).observe(s.e2e_seconds);
    if (error == 0) {  // the spec records TTFT and TPOT for successful responses only
      if (s.ttft_seconds) st.gen_ai->ttft.get({op, 0, model, model}).observe(*s.ttft_seconds);
      if (s.tpot_seconds) st.gen_ai->tpot.get({op, 0, model, model}).observe(*s.tpot_seconds);
    }
  }
  {
    std::lock_guard lock(st.recorded_mu);
    ++st.recorded;
  }
  st.recorded_cv.notify_all();
}

std::uint64_t ServeMetrics::requests_recorded() const {
  std::lock_guard lock(state_->recorded_mu);
  return state_->recorded;
}

bool ServeMetrics::wait_requests_recorded(std::uint64_t at_least, std::chrono::milliseconds limit) const {
  std::unique_lock lock(state_->recorded_mu);
  return state_->recorded_cv.wait_for(lock, limit, [&] { return state_->recorded >= at_least; });
}

void ServeMetrics::on_step(const StepInfo& step, std::uint32_t engine) noexcept {
  // vLLM counts every token scheduled in the step, verified drafts included.
  const double tokens = static_cast<double>(step.prefill_tokens) + step.decode_seqs + step.draft_tokens;
  if (state_->vllm) {
    auto& ranks = state_->vllm->ranks;
    ranks[std::min<std::size_t>(engine, ranks.size() - 1)].iteration_tokens.observe(tokens);
  }
  if (!state_->engine) return;
  const double scale = state_->options.time_scale > 0 ? state_->options.time_scale : 1.0;
  state_->engine->step_duration.observe(step.model_seconds / scale);
  state_->engine->step_tokens.observe(tokens);
}

void ServeMetrics::set_engine_stats_source(std::function<EngineStats()> source) {
  if (!source) return set_engine_stats_sources({});
  set_engine_stats_sources([source = std::move(source)](std::vector<EngineStats>& out) { out.push_back(source()); });
}

void ServeMetrics::set_engine_stats_sources(EngineStatsSource source) {
  std::lock_guard lock(state_->mu);
  state_->tokens_from_engine.store(static_cast<bool>(source), std::memory_order_relaxed);
  state_->source = std::move(source);
  state_->last.clear();
  if (state_->source) state_->source(state_->last);  // counters count from attachment on
}

void ServeMetrics::refresh_engine_stats() { state_->refresh(); }

}  // namespace inferscope::serve
