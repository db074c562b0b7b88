// The rows of issue 11, top to bottom: overview, where the time goes, first token and decode,
// request mix, queue and capacity (each with e2e p99 on the right axis: "p99 up with the queue up"
// and "p99 up with the queue flat" mean different things), engine features (issue 28), the
// disaggregated fleet's pools, endpoints, KV transfers and router (issue 29), the job queue in front of the server
// (issue 17: only with a queue target; depth beside e2e p99 tells queueing from slowness, the GPU
// beside the workers tells "workers down" from "server saturated"), GPU, host, alerts, doctor.
#include "dashboard/panel_catalog.h"

namespace inferscope::dashboard {
namespace {

using dialect::Role;
using S = Statistic;

constexpr SeriesSpec kRequestRate[] = {
    {"requests/s", Role::kRequests, S::kRate},
    {"errors/s", Role::kErrors, S::kRate},
};
constexpr SeriesSpec kSuccessError[] = {
    {"success", Role::kRequests, S::kSuccessRatio},
    {"error", Role::kErrors, S::kErrorRatio},
};
constexpr SeriesSpec kE2eQuantiles[] = {
    {"p50", Role::kE2e, S::kP50},
    {"p95", Role::kE2e, S::kP95},
    {"p99", Role::kE2e, S::kP99},
};
constexpr SeriesSpec kStageMeans[] = {
    {"", Role::kStage, S::kStageMean},
};
constexpr SeriesSpec kTtftQuantiles[] = {
    {"p50", Role::kTtft, S::kP50},
    {"p95", Role::kTtft, S::kP95},
    {"p99", Role::kTtft, S::kP99},
};
constexpr SeriesSpec kTpotItl[] = {
    {"TPOT p95", Role::kTpot, S::kP95},
    {"ITL p95", Role::kItl, S::kP95},
};
constexpr SeriesSpec kPromptLength[] = {
    {"input p50", Role::kPromptLength, S::kP50},
    {"input p95", Role::kPromptLength, S::kP95},
};
constexpr SeriesSpec kOutputLength[] = {
    {"output p50", Role::kGenerationLength, S::kP50},
    {"output p95", Role::kGenerationLength, S::kP95},
};
constexpr SeriesSpec kTokenThroughput[] = {
    {"input tokens/s", Role::kPromptTokens, S::kRate},
    {"output tokens/s", Role::kGenerationTokens, S::kRate},
};
constexpr SeriesSpec kQueueDepth[] = {
    {"waiting", Role::kWaiting, S::kValue},
    {"running", Role::kRunning, S::kValue},
    {"e2e p99", Role::kE2e, S::kP99, Source::kSelected, true},
};
constexpr SeriesSpec kKvUsage[] = {
    {"KV cache usage", Role::kKvUsage, S::kValue},
    {"e2e p99", Role::kE2e, S::kP99, Source::kSelected, true},
};
constexpr SeriesSpec kPreemptions[] = {
    {"preemptions/s", Role::kPreemptions, S::kRate},
    {"e2e p99", Role::kE2e, S::kP99, Source::kSelected, true},
};
constexpr SeriesSpec kGatewayQueue[] = {
    {"gateway queued", Role::kWaiting, S::kValue, Source::kGateway},
    {"gateway in flight", Role::kRunning, S::kValue, Source::kGateway},
    {"e2e p99", Role::kE2e, S::kP99, Source::kSelected, true},
};
// Engine features (issue 28): what the prefix cache and speculative decoding save, as two rates
// whose ratio is the hit rate and the acceptance (the doctor's prefix_cache_miss and
// spec_decode_acceptance_drop read the same counters).
constexpr SeriesSpec kPrefixCache[] = {
    {"looked up", Role::kPrefixCacheQueries, S::kRate},
    {"found (hits)", Role::kPrefixCacheHits, S::kRate},
};
constexpr SeriesSpec kSpecDecode[] = {
    {"drafts proposed", Role::kSpecDraftTokens, S::kRate},
    {"drafts accepted", Role::kSpecAcceptedTokens, S::kRate},
};
// Their ratios and the other feature series, as up's rules record them (target_rules.cpp,
// record_engine_features): per model, absent while nothing is asked (never 0/0).
constexpr SeriesSpec kPrefixHitRate[] = {
    {"hit rate", Role::kPrefixCacheHits, S::kRecorded, Source::kSelected, false, "model", {},
     "inferscope:prefix_cache_hit:ratio"},
};
constexpr SeriesSpec kSpecAcceptance[] = {
    {"acceptance", Role::kSpecAcceptedTokens, S::kRecorded, Source::kSelected, false, "model", {},
     "inferscope:spec_decode_acceptance:ratio"},
};
constexpr SeriesSpec kLora[] = {
    {"adapters loaded", Role::kLoraAdaptersLoaded, S::kValue},
    {"slots", Role::kLoraSlots, S::kValue},
    {"requests waiting for a slot", Role::kLoraWaitingRequests, S::kValue},
};
// One series per data-parallel rank (vLLM's engine label): one rank's tail above its peers' is
// what InferscopeEngineRankSlow alerts on.
constexpr SeriesSpec kRankE2e[] = {
    {"rank", Role::kE2e, S::kRecorded, Source::kRanks, false, "engine", {}, "inferscope:engine_e2e_seconds:p99"},
};
// Disaggregated fleets (issue 29), from record_disaggregation's series: `pool` and `endpoint` are
// the recorded labels whatever the dialect calls them (Dynamo's worker_type and worker_id, llm-d's
// name and model_server_pod).
constexpr std::array<std::string_view, 2> kPoolShown = {"pool", ""};
constexpr SeriesSpec kPoolWaiting[] = {
    {"waiting", Role::kPoolWaiting, S::kRecorded, Source::kSelected, false, "pool", {}, "inferscope:pool_waiting"},
};
constexpr SeriesSpec kEndpointLoad[] = {
    {"", Role::kEndpointLoad, S::kRecorded, Source::kSelected, false, "endpoint", kPoolShown, "inferscope:endpoint_load"},
};
constexpr SeriesSpec kKvTransferTime[] = {
    {"p50", Role::kKvTransfer, S::kRecorded, Source::kSelected, false, "model", {}, "inferscope:kv_transfer_seconds:p50"},
    {"p95", Role::kKvTransfer, S::kRecorded, Source::kSelected, false, "model", {}, "inferscope:kv_transfer_seconds:p95"},
    {"transfers/s", Role::kKvTransfer, S::kRate, Source::kSelected, true},
};
constexpr SeriesSpec kKvTransferBandwidth[] = {
    {"bytes/s", Role::kKvTransferBytes, S::kRecorded, Source::kSelected, false, "model", {},
     "inferscope:kv_transfer_bytes_per_second:mean"},
};
constexpr SeriesSpec kRoutePrefixHit[] = {
    {"prefix hit (mean)", Role::kRoutePrefixHit, S::kRecorded, Source::kSelected, false, "model", {},
     "inferscope:route_prefix_hit:mean"},
};
constexpr SeriesSpec kGpuUtil[] = {{"GPU", Role::kGpuUtilization, S::kValue, Source::kGpu, false, "gpu"}};
constexpr SeriesSpec kGpuMemory[] = {
    {"used", Role::kGpuMemoryUsed, S::kValue, Source::kGpu, false, "gpu"},
    {"total", Role::kGpuMemoryTotal, S::kValue, Source::kGpu, false, "gpu"},
};
constexpr SeriesSpec kGpuTemp[] = {{"GPU", Role::kGpuTemperature, S::kValue, Source::kGpu, false, "gpu"}};
constexpr SeriesSpec kGpuPower[] = {{"GPU", Role::kGpuPower, S::kValue, Source::kGpu, false, "gpu"}};
constexpr SeriesSpec kHostCpu[] = {{"CPU busy", Role::kHostCpuBusy, S::kValue, Source::kHost, false, "instance"}};
constexpr SeriesSpec kHostMemory[] = {
    {"used", Role::kHostMemoryUsed, S::kValue, Source::kHost, false, "instance"},
    {"total", Role::kHostMemoryTotal, S::kValue, Source::kHost, false, "instance"},
};
constexpr SeriesSpec kStageTable[] = {{"", Role::kStage, S::kP95}};
// The job queue in front of the server (up's redis targets), per queue with its system and job.
constexpr std::array<std::string_view, 2> kQueueShown = {"system", "job"};
constexpr SeriesSpec kJobQueueDepth[] = {
    {"depth", Role::kQueueDepth, S::kValue, Source::kQueue, false, "queue", kQueueShown},
    {"e2e p99", Role::kE2e, S::kP99, Source::kSelected, true},
};
constexpr SeriesSpec kJobQueueAgeWait[] = {
    {"oldest age", Role::kQueueOldestAge, S::kValue, Source::kQueue, false, "queue", kQueueShown},
    {"wait p95", Role::kQueueWait, S::kP95, Source::kQueue, false, "queue", kQueueShown},
};
constexpr SeriesSpec kJobQueueWorkers[] = {
    {"", Role::kQueueWorkers, S::kValue, Source::kQueue, false, "state", kQueueShown},
};

constexpr PanelSpec kOverview[] = {
    {"request_rate", "Request rate", PanelKind::kTimeseries, "req/s", "", "finished requests and server-side errors per second", kRequestRate},
    {"success_error", "Success and error ratio", PanelKind::kTimeseries, "ratio", "", "share of finished requests", kSuccessError},
    {"e2e_latency", "End-to-end latency", PanelKind::kTimeseries, "s", "", "arrival to last token", kE2eQuantiles},
};
constexpr PanelSpec kTimeGoes[] = {
    {"stage_mean", "Where the time goes: mean per stage", PanelKind::kStacked, "s", "",
     "stacked means; the stack's height is the mean request time the server accounts for", kStageMeans},
    {"stage_p95", "Per-stage p95: baseline vs now", PanelKind::kTable, "s", "",
     "now = last 5 min; baseline = the 30 min before it", kStageTable},
};
constexpr PanelSpec kFirstToken[] = {
    {"ttft", "Time to first token", PanelKind::kTimeseries, "s", "", "arrival to first content token", kTtftQuantiles},
    {"tpot_itl", "Time per output token and inter-token latency", PanelKind::kTimeseries, "s", "",
     "TPOT per request; ITL between streamed tokens", kTpotItl},
};
constexpr PanelSpec kRequestMix[] = {
    {"input_tokens", "Input tokens per request", PanelKind::kTimeseries, "tokens", "", "", kPromptLength},
    {"output_tokens", "Output tokens per request", PanelKind::kTimeseries, "tokens", "", "", kOutputLength},
    {"token_throughput", "Token throughput", PanelKind::kTimeseries, "tokens/s", "", "", kTokenThroughput},
};
constexpr PanelSpec kQueueCapacity[] = {
    {"queue_depth", "Waiting and running vs e2e p99", PanelKind::kTimeseries, "requests", "s", "", kQueueDepth},
    {"kv_usage", "KV cache usage vs e2e p99", PanelKind::kTimeseries, "ratio", "s", "", kKvUsage},
    {"preemptions", "Preemptions vs e2e p99", PanelKind::kTimeseries, "events/s", "s", "", kPreemptions},
    {"gateway_queue", "Gateway queue vs e2e p99", PanelKind::kTimeseries, "requests", "s",
     "requests waiting for admission at inferscope gateway, and sent upstream", kGatewayQueue},
};
constexpr PanelSpec kEngineFeatures[] = {
    {"prefix_cache", "Prefix cache: prompt tokens looked up and found", PanelKind::kTimeseries, "tokens/s", "",
     "hit rate = found / looked up; a fall at the same prompt length and rate is a prefix-cache miss", kPrefixCache},
    {"prefix_hit_rate", "Prefix cache hit rate", PanelKind::kTimeseries, "ratio", "",
     "prompt tokens found / looked up, per model (InferscopePrefixCacheHitRateHalved watches it)", kPrefixHitRate},
    {"spec_decode", "Speculative decoding: draft tokens proposed and accepted", PanelKind::kTimeseries, "tokens/s", "",
     "only while speculation is on; acceptance = accepted / proposed, tokens per step = 1 + accepted / drafts",
     kSpecDecode},
    {"spec_acceptance", "Speculative decoding: draft acceptance", PanelKind::kTimeseries, "ratio", "",
     "draft tokens accepted / proposed, per model (InferscopeSpecDecodeAcceptanceFell watches it)", kSpecAcceptance},
    {"lora", "LoRA adapters", PanelKind::kTimeseries, "count", "",
     "adapters held in GPU slots, the slots, and requests passed over because their adapter has no slot",
     kLora},
    {"rank_e2e_p99", "e2e p99 per data-parallel rank", PanelKind::kTimeseries, "s", "",
     "vLLM's engine label: one rank's tail above its peers' is that rank's problem, not the load's", kRankE2e},
};
constexpr PanelSpec kDisaggregated[] = {
    {"pool_waiting", "Requests waiting per pool", PanelKind::kTimeseries, "requests", "",
     "one pool's queue growing while the other's stays flat is a prefill:decode imbalance", kPoolWaiting},
    {"endpoint_load", "Load per endpoint", PanelKind::kTimeseries, "load", "",
     "per worker (pool in parentheses): inferscope waiting + running requests, Dynamo active decode KV blocks, "
     "llm-d waiting requests; compare endpoints within a pool", kEndpointLoad},
    {"kv_transfer_time", "KV transfer time and rate", PanelKind::kTimeseries, "s", "events/s",
     "prefill worker -> decode worker, per model; transfers per second on the right axis", kKvTransferTime},
    {"kv_transfer_bandwidth", "KV transfer bytes per second", PanelKind::kTimeseries, "bytes/s", "",
     "mean bytes per transfer / mean transfer time: a degraded link shows here before TTFT does",
     kKvTransferBandwidth},
    {"route_prefix_hit", "Router prefix hit", PanelKind::kTimeseries, "ratio", "",
     "share of the prompt's prefix the chosen worker holds, mean per routing decision", kRoutePrefixHit},
};
constexpr PanelSpec kGpu[] = {
    {"gpu_util", "GPU utilization", PanelKind::kTimeseries, "ratio", "", "", kGpuUtil},
    {"gpu_memory", "GPU memory", PanelKind::kTimeseries, "bytes", "", "", kGpuMemory},
    {"gpu_temp", "GPU temperature", PanelKind::kTimeseries, "celsius", "", "", kGpuTemp},
    {"gpu_power", "GPU power", PanelKind::kTimeseries, "watts", "", "", kGpuPower},
};
constexpr PanelSpec kHost[] = {
    {"host_cpu", "Host CPU busy", PanelKind::kTimeseries, "ratio", "", "all cores, from node-exporter", kHostCpu},
    {"host_memory", "Host memory", PanelKind::kTimeseries, "bytes", "", "MemTotal - MemAvailable", kHostMemory},
};
constexpr PanelSpec kJobQueue[] = {
    {"jobqueue_depth", "Queue depth vs e2e p99", PanelKind::kTimeseries, "jobs", "s",
     "jobs waiting per queue, and the served model's e2e p99: depth up with p99 flat is queueing, both up is "
     "a slower server", kJobQueueDepth},
    {"jobqueue_wait", "Oldest job age and wait p95", PanelKind::kTimeseries, "s", "",
     "age of the oldest waiting job; enqueue to start, p95 of the jobs seen starting", kJobQueueAgeWait},
    {"jobqueue_workers", "Workers by state", PanelKind::kTimeseries, "workers", "",
     "busy, idle and stale workers per queue system", kJobQueueWorkers},
    {"jobqueue_gpu", "Model server GPU utilization", PanelKind::kTimeseries, "ratio", "",
     "idle GPUs beside waiting jobs: the workers are not calling the server", kGpuUtil},
};
constexpr PanelSpec kAlertsRow[] = {
    {"alerts", "Firing alerts", PanelKind::kAlerts, "", "", "", {}},
};
constexpr PanelSpec kDoctorRow[] = {
    {"doctor", "Doctor: current findings", PanelKind::kFindings, "", "", "last 5 min vs the 30 min before", {}},
};

constexpr RowSpec kRows[] = {
    {"overview", "Overview", kOverview},
    {"time", "Where the time goes", kTimeGoes},
    {"first_token", "First token and decode", kFirstToken},
    {"mix", "Request mix", kRequestMix},
    {"capacity", "Queue and capacity", kQueueCapacity},
    {"features", "Engine features", kEngineFeatures, false,
     "they appear only while a feature is on: prefix caching, speculative decoding (serve --speculative-tokens, "
     "vLLM's speculative config), LoRA adapters (--lora-modules), data-parallel ranks (vLLM's engine label)"},
    {"disagg", "Disaggregated fleet", kDisaggregated, false,
     "they come from a disaggregated prefill/decode fleet: inferscope serve --prefill-workers N --decode-workers M, "
     "NVIDIA Dynamo, llm-d (docs/disaggregation.md)"},
    {"jobqueue", "Queue", kJobQueue, true},
    {"gpu", "GPU", kGpu},
    {"host", "Host", kHost},
    {"alerts", "Alerts", kAlertsRow},
    {"doctor", "Doctor", kDoctorRow},
};

constexpr Role kStageRoles[] = {
    Role::kGatewayQueue, Role::kPreprocess, Role::kDependency, Role::kQueue,          Role::kPrefill,
    Role::kDecode,       Role::kPostprocess, Role::kSend,      Role::kUpstreamConnect, Role::kUpstreamTtft,
    Role::kStream,
};

}  // namespace

std::span<const RowSpec> dashboard_rows() noexcept { return kRows; }

const PanelSpec* find_panel(std::string_view id) noexcept {
  for (const RowSpec& row : kRows) {
    for (const PanelSpec& panel : row.panels) {
      if (panel.id == id) return &panel;
    }
  }
  return nullptr;
}

std::span<const Role> stage_roles() noexcept { return kStageRoles; }

std::string_view to_string(PanelKind kind) noexcept {
  switch (kind) {
    case PanelKind::kTimeseries: return "timeseries";
    case PanelKind::kStacked: return "stacked";
    case PanelKind::kTable: return "table";
    case PanelKind::kAlerts: return "alerts";
    case PanelKind::kFindings: return "findings";
  }
  return "timeseries";
}

}  // namespace inferscope::dashboard
