// File: dialect/dialect.h
// The one dialect table: for each kind of server inferscope understands (inferscope serve and
// gateway, vLLM V1, llama.cpp, TGI, Triton, SGLang, LiteLLM proxy, NVIDIA Dynamo, llm-d's router,
// DCGM exporter, node-exporter) which
// exposed metric plays
// each role (e2e, TTFT, queue, KV usage, ...), with its kind, unit and the older names it had.
// Example: const MetricBinding* e2e = find_binding(DialectId::kVllm, Role::kE2e);
// Thread-safe: immutable constant data. Never add a binding that is not in the server's real
// exposition (../shared/reference/metric-dialects.md): rules, the doctor and dashboards trust it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace inferscope::dialect {

// DialectId names one server kind. The config kinds of `inferscope up` map onto these.
enum class DialectId : std::uint8_t {
  kInferscope,  // inferscope serve: inferscope_* (and, switchable, vllm:*, gen_ai_*, DCGM_FI_*)
  kGateway,     // inferscope gateway: inferscope_* without engine gauges, gateway stages
  kVllm,        // vLLM V1 (vllm:*), with the V0 / early-V1 names it renamed
  kLlamaCpp,    // llama.cpp llama-server (llamacpp:*), older (b4748) and newer sets
  kTgi,         // Hugging Face TGI (tgi_*)
  kTriton,      // NVIDIA Triton Inference Server (nv_inference_*, nv_gpu_*)
  kSglang,      // SGLang (sglang:*), with the v0.3.5 / 0.4 names it renamed
  kLitellm,     // LiteLLM proxy (litellm_*): a gateway, no engine metrics
  kDynamo,      // NVIDIA Dynamo (dynamo_*): frontend, KV router and workers of a disaggregated fleet
  kLlmd,        // llm-d's router / endpoint picker (llm_d_router_epp_*, older inference_pool_* ...)
  // Exporters last: detection and every consumer rank serving software above them in this order.
  kDcgm,        // NVIDIA dcgm-exporter (DCGM_FI_*)
  kNode,        // prometheus-node-exporter (node_*)
  // Not in kAllDialects (never detected): a target whose roles are mapped to its own names in
  // up's config (custom_dialect.h). dialect(kCustom) is an empty entry; the mapping's own table
  // carries the bindings.
  kCustom,
};

inline constexpr std::array<DialectId, 12> kAllDialects = {
    DialectId::kInferscope, DialectId::kGateway, DialectId::kVllm,    DialectId::kLlamaCpp,
    DialectId::kTgi,        DialectId::kTriton,  DialectId::kSglang,  DialectId::kLitellm,
    DialectId::kDynamo,     DialectId::kLlmd,    DialectId::kDcgm,    DialectId::kNode};

// is_exporter reports whether `id` is an exporter (DCGM, node) rather than serving software.
inline constexpr bool is_exporter(DialectId id) noexcept { return id == DialectId::kDcgm || id == DialectId::kNode; }

// to_string returns the config spelling: "inferscope", "gateway", "vllm", "llamacpp", "tgi",
// "triton", "sglang", "litellm", "dynamo", "llm-d", "dcgm", "node", "custom". Never fails.
std::string_view to_string(DialectId id) noexcept;

// parse_dialect maps a config spelling (or a common alias: "llama.cpp", "node-exporter",
// "dcgm-exporter", "inferscope-gateway", "litellm-proxy", "llmd", "llm_d") to a DialectId; nullopt for anything else ("auto"
// too, and "custom": a custom target is nothing without its mapping, see custom_dialect.h).
std::optional<DialectId> parse_dialect(std::string_view name) noexcept;

// Role is what a metric means, independent of how a server spells it.
enum class Role : std::uint8_t {
  // Latency, seconds per request unless noted.
  kE2e,              // arrival -> last byte / last token
  kTtft,             // arrival -> first content token
  kQueue,            // waiting in the engine queue
  kPrefill,          // scheduled -> first token
  kDecode,           // first -> last token
  kInference,        // prefill + decode
  kItl,              // between output events (per event or per token, see the binding's note)
  kTpot,             // per-request mean time per output token
  kPrefillPerToken,  // mean prefill seconds per prompt token (llama.cpp's only prefill signal)
  kPreprocess,       // parse, validate, template, tokenize
  kPostprocess,      // last token -> response built
  kDependency,       // outbound calls made by the server
  kSend,             // response built -> written
  kGatewayQueue,     // waiting for admission at a gateway
  kUpstreamConnect,  // gateway: connecting to the upstream
  kUpstreamTtft,     // gateway: request written upstream -> first content event
  kStream,           // gateway: first -> last content event
  kStage,            // per-stage histogram with a `stage` label (kind_label)
  // Load and capacity.
  kWaiting,          // requests waiting to be scheduled (gauge)
  kRunning,          // requests in the running batch (gauge)
  kKvUsage,          // KV-cache usage, 0..1
  kPreemptions,      // preemptions (counter)
  kPrefixCacheQueries,  // prompt tokens looked up in the prefix cache (counter)
  kPrefixCacheHits,     // prompt tokens found in the prefix cache (counter)
  // Traffic.
  kRequests,         // finished requests (counter; every outcome unless the dialect says otherwise)
  kErrors,           // failed requests (counter), split by kind_label where the server has one
  kPromptTokens,     // prompt tokens processed (counter)
  kGenerationTokens, // output tokens generated (counter)
  kPromptLength,     // prompt tokens per request (histogram)
  kGenerationLength, // output tokens per request (histogram)
  // GPU and host.
  kGpuUtilization,   // 0..1
  kGpuMemoryUsed,    // bytes
  kGpuMemoryTotal,   // bytes
  kGpuTemperature,   // degrees Celsius
  kGpuPower,         // watts
  kHostCpuBusy,      // 0..1 of all cores
  kHostMemoryUsed,   // bytes
  kHostMemoryTotal,  // bytes
  // Engine internals and request accounting (appended: ids above keep their values).
  kEngineStep,       // seconds per engine step/iteration (histogram, per_batch)
  kEngineBusy,       // 0..1 share of wall time the engine spends in steps
  kInFlight,         // requests received and not yet finished (gauge)
  kDependencyCall,   // seconds per outbound dependency call (histogram, kind_label names it)
  kClientErrors,     // requests rejected as the client's fault (4xx), a counter
  // The Redis job queue in front of a server (queue_bindings(): up's queue collector, not a server).
  kQueueWait,        // enqueue -> a worker starts the job (histogram, per job)
  kQueueRun,         // a worker's start -> end of the job (histogram, per job)
  kQueueDepth,       // jobs waiting (gauge)
  kQueueOldestAge,   // age of the oldest waiting job, 0 when empty (gauge)
  kQueueInProgress,  // jobs taken by a worker and not finished (gauge)
  kQueueJobs,        // jobs ended, kind_label `outcome` = finished | failed (counter)
  kQueueWorkers,     // workers, kind_label `state` = busy | idle | stale (gauge)
  // Engine features (appended), exposed only while the feature is on (Presence::kFeature).
  kSpecDrafts,         // speculative decoding: draft rounds (counter)
  kSpecDraftTokens,    // draft tokens proposed (counter)
  kSpecAcceptedTokens, // draft tokens accepted (counter)
  // Disaggregated fleets (appended): a router in front, prefill and decode pools behind it.
  kRoute,              // the router's choice of a worker, seconds per request (a stage: latency role)
  kKvTransfer,         // prefill worker -> decode worker KV-cache transfer, seconds (a stage: latency role)
  kKvTransferBytes,    // KV bytes per transfer (histogram)
  kRoutePrefixHit,     // share of the prompt's prefix the chosen worker holds, per routing decision (histogram, 0..1)
  kPoolWaiting,        // requests waiting per pool (gauge; kind_label names the pool label)
  kEndpointLoad,       // load per worker/endpoint (gauge; kind_label names the endpoint label; unit varies)
  // LoRA adapters (appended), exposed only with adapters configured (Presence::kFeature).
  kLoraAdaptersLoaded,  // adapters held in GPU slots (gauge)
  kLoraSlots,           // adapter slots (--max-loras; gauge)
  kLoraWaitingRequests, // requests passed over because their adapter has no slot (gauge)
  kLoraLoads,           // adapter loads into a slot (counter)
  // Appended: seconds the engine took no step while it had work (counter; its rate is the share
  // of wall time a stopped scheduler held requests).
  kEngineHeld,
};

inline constexpr std::size_t kRoleCount = 64;

// to_string returns the role's snake_case id ("e2e", "ttft", "kv_usage", "gpu_memory_used", ...),
// the same id the doctor's JSON and the README use. Never fails.
std::string_view to_string(Role role) noexcept;

// parse_role is the inverse of to_string; nullopt for an unknown id.
std::optional<Role> parse_role(std::string_view name) noexcept;

// is_latency_role reports whether `role` is a time per request/event/token (kE2e .. kStage, and
// the disaggregated stages kRoute and kKvTransfer).
bool is_latency_role(Role role) noexcept;

// MetricKind says how the series behind a role are read.
enum class MetricKind : std::uint8_t {
  kHistogram,         // `metric` is the base name: _bucket{le}, _sum, _count
  kCounter,           // `metric` is the exposed counter series (with _total where the server prints it)
  kGauge,             // `metric` is the gauge
  kCounterRatio,      // mean = rate(metric) / rate(denominator): llama.cpp, Triton latency counters
  kGaugeSum,          // value = metric + operand (DCGM: framebuffer used + free = total)
  kGaugeDifference,   // value = metric - operand (node: MemTotal - MemAvailable = used)
  kBusyFromIdle,      // value = 1 - avg(rate(metric)) over CPUs; metric counts idle seconds per CPU
};

// to_string returns "histogram", "counter", "gauge", "counter_ratio", "gauge_sum",
// "gauge_difference" or "busy_from_idle".
std::string_view to_string(MetricKind kind) noexcept;

// Unit is the unit of what the PromQL builders return (after `scale`).
enum class Unit : std::uint8_t { kSeconds, kSecondsPerToken, kRatio, kRequests, kTokens, kBytes, kCelsius, kWatts, kEvents,
                             kBlocks /* KV-cache blocks (Dynamo's per-worker decode load) */ };

// to_string returns "seconds", "seconds_per_token", "ratio", "requests", "tokens", "bytes",
// "celsius", "watts", "events" or "blocks".
std::string_view to_string(Unit unit) noexcept;

// Presence says when a target of this dialect exposes the metric.
enum class Presence : std::uint8_t {
  kAlways,    // from startup, every version in the table (missing means renamed or broken)
  kLazy,      // the family appears (HELP/TYPE) at once, its series only after the first request
  kOptional,  // opt-in flag, version-dependent or removed in newer versions
  kFeature,   // only while an engine feature is on (speculative decoding): absent is not missing
};

// Aggregation is how series of a gauge combine across a grouping (sum waiting, max KV usage).
enum class Aggregation : std::uint8_t { kSum, kAvg, kMax };

// LegacyName is an older name that carried the same data with the same kind.
struct LegacyName {
  std::string_view name;  // as exposed (histograms: base name)
  std::string_view note;  // when and why it changed, e.g. "deprecated 0.9 (PR #18354), off by 0.11"
};

// MetricBinding maps one role of one dialect onto exposed series.
struct MetricBinding {
  Role role = Role::kE2e;
  MetricKind kind = MetricKind::kHistogram;
  std::string_view metric = {};    // exposed name; histograms: base name without _bucket/_sum/_count
  std::string_view operand = {};   // kCounterRatio: denominator counter; kGaugeSum/Difference: other gauge
  std::string_view matchers = {};  // fixed PromQL matchers without braces (`stage="prefill"`), or empty
  Unit unit = Unit::kSeconds;                  // unit of the built expressions
  double scale = 1;           // raw value * scale = value in `unit` (Triton µs: 1e-6, DCGM MiB: 1048576)
  Presence presence = Presence::kAlways;
  Aggregation aggregation = Aggregation::kSum;  // gauges: how series combine
  std::string_view kind_label = {};                   // label splitting the metric by kind (errors, stage)
  std::span<const LegacyName> legacy = {};            // older names of the same data (newest first)
  std::string_view note = {};                         // semantics worth knowing (per event vs per token ...)
  bool per_batch = false;  // measured per engine batch/step, not per request: not a request stage
  bool no_model_label = false;  // the series carry no model label even where the dialect has one
};

// DeprecatedName is a name not to rely on: dropped without a same-kind successor, or misleading
// (llama.cpp's throughput gauges reset by every scrape), with what to use instead.
struct DeprecatedName {
  std::string_view name;
  std::string_view instead;  // e.g. "rate(vllm:generation_tokens_total[5m])"
};

// ErrorAccounting says how kErrors relates to kRequests in this dialect.
enum class ErrorAccounting : std::uint8_t {
  kSubsetOfRequests,    // requests counts every outcome; errors are a subset (ratio = e / r)
  kDisjointFromRequests,  // requests counts successes only (Triton); ratio = e / (e + r)
};

// Dialect is one server kind with all its bindings.
struct Dialect {
  DialectId id = DialectId::kInferscope;
  std::string_view title = {};                       // "vLLM V1", "llama.cpp llama-server", ...
  std::string_view model_label = {};                 // label naming the model ("model_name"), "" if none
  std::string_view device_label = {};                // label naming the GPU on GPU metrics ("gpu"), "" if none
  std::span<const std::string_view> prefixes = {};   // family-name prefixes that identify the dialect
  std::span<const MetricBinding> bindings = {};      // at most one per role
  std::span<const DeprecatedName> deprecated = {};
  // Label that names a worker pool (Dynamo's worker_type, llm-d's InferencePool `name`), "" if none:
  // per-endpoint load is compared only among endpoints of the same pool.
  std::string_view pool_label = {};
  ErrorAccounting error_accounting = ErrorAccounting::kSubsetOfRequests;
  std::string_view note = {};
};

// dialect returns the table entry of `id`. Never fails; the reference lives forever.
// dialect(kCustom) has no bindings: a custom target's table is its CustomDialect's.
const Dialect& dialect(DialectId id) noexcept;

// find_binding returns the binding of `role` in dialect `id`, or nullptr when the dialect has no
// metric for that role (llama.cpp has no e2e, vLLM no GPU metrics, ...).
const MetricBinding* find_binding(DialectId id, Role role) noexcept;

// find_binding over a table in hand (a custom target's mapping, or dialect(id)).
const MetricBinding* find_binding(const Dialect& table, Role role) noexcept;

// queue_bindings lists the series of up's Redis queue collector (docs/queues.md), one per queue
// role. They belong to no server dialect: a redis target's registry is its own scrape job.
std::span<const MetricBinding> queue_bindings() noexcept;

// supports reports whether dialect `id` has a binding for `role`.
inline bool supports(DialectId id, Role role) noexcept { return find_binding(id, role) != nullptr; }
inline bool supports(const Dialect& table, Role role) noexcept { return find_binding(table, role) != nullptr; }

}  // namespace inferscope::dialect
