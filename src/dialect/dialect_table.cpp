// The dialect table itself. Every name, kind, unit and label below comes from
// ../shared/reference/metric-dialects.md (sections named per dialect),
// ../shared/reference/dialects-sglang-litellm.md (SGLang, LiteLLM),
// ../shared/reference/serving-topologies.md (vLLM's NIXL connector, Dynamo, llm-d) or, for inferscope's own
// families, from docs/metrics-reference.md. Kept as constant data so it can be read top to bottom.
#include "dialect/dialect.h"

namespace inferscope::dialect {
namespace {

using A = Aggregation;
using K = MetricKind;
using P = Presence;
using R = Role;
using U = Unit;

// ---- inferscope serve (docs/metrics-reference.md) ------------------------------------------
constexpr std::string_view kInferscopePrefixes[] = {"inferscope_"};

constexpr MetricBinding kInferscopeBindings[] = {
    {.role = R::kE2e, .kind = K::kHistogram, .metric = "inferscope_request_duration_seconds",
     .unit = U::kSeconds, .presence = P::kLazy, .note = "arrival -> response fully sent (or abort/error)"},
    {.role = R::kTtft, .kind = K::kHistogram, .metric = "inferscope_time_to_first_token_seconds",
     .unit = U::kSeconds, .presence = P::kLazy, .note = "arrival -> first content-bearing event"},
    {.role = R::kQueue, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="queue")", .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kPrefill, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="prefill")", .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kDecode, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="decode")", .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kItl, .kind = K::kHistogram, .metric = "inferscope_inter_token_latency_seconds",
     .unit = U::kSeconds, .presence = P::kLazy,
     .note = "per token: event gap / tokens of the later event, observed once per token"},
    {.role = R::kTpot, .kind = K::kHistogram, .metric = "inferscope_time_per_output_token_seconds",
     .unit = U::kSeconds, .presence = P::kLazy, .note = "per request: (last - first token) / (tokens - 1)"},
    {.role = R::kPreprocess, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="preprocess")", .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kPostprocess, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="postprocess")", .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kDependency, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="dependency")", .unit = U::kSeconds, .presence = P::kLazy,
     .note = "sum of the request's dependency calls; per call: inferscope_dependency_duration_seconds{dependency}"},
    {.role = R::kSend, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="send")", .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kStage, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .unit = U::kSeconds, .presence = P::kLazy, .kind_label = "stage"},
    {.role = R::kWaiting, .kind = K::kGauge, .metric = "inferscope_engine_requests_waiting",
     .unit = U::kRequests},
    {.role = R::kRunning, .kind = K::kGauge, .metric = "inferscope_engine_requests_running",
     .unit = U::kRequests},
    {.role = R::kKvUsage, .kind = K::kGauge, .metric = "inferscope_kv_cache_usage_ratio", .unit = U::kRatio,
     .aggregation = A::kMax},
    {.role = R::kPreemptions, .kind = K::kCounter, .metric = "inferscope_engine_preemptions_total",
     .unit = U::kEvents},
    {.role = R::kPrefixCacheQueries, .kind = K::kCounter, .metric = "inferscope_prefix_cache_queried_tokens_total",
     .unit = U::kTokens},
    {.role = R::kPrefixCacheHits, .kind = K::kCounter, .metric = "inferscope_prefix_cache_hit_tokens_total",
     .unit = U::kTokens},
    {.role = R::kSpecDrafts, .kind = K::kCounter, .metric = "inferscope_spec_decode_drafts_total",
     .unit = U::kEvents, .presence = P::kFeature, .note = "with --speculative-tokens only"},
    {.role = R::kSpecDraftTokens, .kind = K::kCounter, .metric = "inferscope_spec_decode_draft_tokens_total",
     .unit = U::kTokens, .presence = P::kFeature},
    {.role = R::kSpecAcceptedTokens, .kind = K::kCounter, .metric = "inferscope_spec_decode_accepted_tokens_total",
     .unit = U::kTokens, .presence = P::kFeature},
    {.role = R::kLoraAdaptersLoaded, .kind = K::kGauge, .metric = "inferscope_lora_adapters_loaded",
     .unit = U::kEvents, .presence = P::kFeature, .note = "with --lora-modules only; sum over ranks"},
    {.role = R::kLoraSlots, .kind = K::kGauge, .metric = "inferscope_lora_slots", .unit = U::kEvents,
     .presence = P::kFeature, .note = "--max-loras, or the max_loras fault's cut"},
    {.role = R::kLoraWaitingRequests, .kind = K::kGauge, .metric = "inferscope_lora_waiting_requests",
     .unit = U::kRequests, .presence = P::kFeature, .note = "requests whose adapter has no free slot"},
    {.role = R::kLoraLoads, .kind = K::kCounter, .metric = "inferscope_lora_loads_total", .unit = U::kEvents,
     .presence = P::kFeature, .note = "time spent: inferscope_lora_load_seconds_total"},
    // Disaggregated mode only (serve --prefill-workers N --decode-workers M, docs/disaggregation.md):
    // absent from a plain serve, so never missing there.
    {.role = R::kRoute, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="route")", .unit = U::kSeconds, .presence = P::kFeature,
     .note = "the router's choice of a prefill and a decode worker; disaggregated mode only"},
    {.role = R::kKvTransfer, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="kv_transfer")", .unit = U::kSeconds, .presence = P::kFeature,
     .note = "prefill worker -> decode worker KV transfer, failed attempts and their retries included"},
    {.role = R::kKvTransferBytes, .kind = K::kHistogram, .metric = "inferscope_kv_transfer_bytes", .unit = U::kBytes,
     .presence = P::kFeature, .note = "bytes per transfer; failed attempts: inferscope_kv_transfer_failures_total",
     .no_model_label = true},
    {.role = R::kRoutePrefixHit, .kind = K::kHistogram, .metric = "inferscope_router_prefix_hit_ratio",
     .unit = U::kRatio, .presence = P::kFeature,
     .note = "per routing decision: share of the prompt's blocks cached on the chosen decode worker; decisions: "
             "inferscope_router_decisions_total{pool,endpoint}", .no_model_label = true},
    {.role = R::kPoolWaiting, .kind = K::kGauge, .metric = "inferscope_pool_requests_waiting", .unit = U::kRequests,
     .presence = P::kFeature, .kind_label = "pool",
     .note = "waiting in each pool (prefill, decode), router-side pending included; workers taking requests: "
             "inferscope_pool_workers{pool}", .no_model_label = true},
    {.role = R::kEndpointLoad, .kind = K::kGauge, .metric = "inferscope_endpoint_requests", .unit = U::kRequests,
     .presence = P::kFeature, .kind_label = "endpoint",
     .note = "waiting + running on one worker (labels pool, endpoint: prefill-0, decode-1 ...)", .no_model_label = true},
    {.role = R::kRequests, .kind = K::kCounter, .metric = "inferscope_requests_total", .unit = U::kRequests,
     .presence = P::kLazy, .note = "every finished request, labels route, status_class, finish_reason"},
    {.role = R::kErrors, .kind = K::kCounter, .metric = "inferscope_requests_total",
     .matchers = R"(finish_reason="error",status_class!="4xx")", .unit = U::kRequests, .presence = P::kLazy,
     .kind_label = "status_class", .note = "server-side failures: 5xx and errors inside a 200 stream; 4xx excluded"},
    {.role = R::kPromptTokens, .kind = K::kCounter, .metric = "inferscope_prompt_tokens_total",
     .unit = U::kTokens, .presence = P::kLazy},
    {.role = R::kGenerationTokens, .kind = K::kCounter, .metric = "inferscope_generation_tokens_total",
     .unit = U::kTokens, .presence = P::kLazy},
    {.role = R::kPromptLength, .kind = K::kHistogram, .metric = "inferscope_request_prompt_tokens",
     .unit = U::kTokens, .presence = P::kLazy},
    {.role = R::kGenerationLength, .kind = K::kHistogram, .metric = "inferscope_request_generation_tokens",
     .unit = U::kTokens, .presence = P::kLazy},
    {.role = R::kEngineStep, .kind = K::kHistogram, .metric = "inferscope_engine_step_duration_seconds",
     .unit = U::kSeconds, .note = "one observation per engine step (model seconds / time_scale)", .per_batch = true},
    {.role = R::kEngineBusy, .kind = K::kGauge, .metric = "inferscope_engine_busy_ratio", .unit = U::kRatio,
     .aggregation = A::kAvg},
    {.role = R::kEngineHeld, .kind = K::kCounter, .metric = "inferscope_engine_held_seconds_total", .unit = U::kRatio,
     .presence = P::kOptional,
     .note = "rate = share of wall time the scheduler held work without a step (summed over ranks); serve builds "
             "before it lack it"},
    {.role = R::kInFlight, .kind = K::kGauge, .metric = "inferscope_requests_in_flight", .unit = U::kRequests,
     .note = "no model label", .no_model_label = true},
    {.role = R::kDependencyCall, .kind = K::kHistogram, .metric = "inferscope_dependency_duration_seconds",
     .unit = U::kSeconds, .presence = P::kOptional, .kind_label = "dependency",
     .note = "only when the server calls dependencies"},
    {.role = R::kClientErrors, .kind = K::kCounter, .metric = "inferscope_requests_total",
     .matchers = R"(status_class="4xx")", .unit = U::kRequests, .presence = P::kLazy},
};

// ---- inferscope gateway (issue 9: same inferscope_* request families, gateway stages) --------
constexpr MetricBinding kGatewayBindings[] = {
    {.role = R::kE2e, .kind = K::kHistogram, .metric = "inferscope_request_duration_seconds",
     .unit = U::kSeconds, .presence = P::kLazy, .note = "client arrival -> response fully sent"},
    {.role = R::kTtft, .kind = K::kHistogram, .metric = "inferscope_time_to_first_token_seconds",
     .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kItl, .kind = K::kHistogram, .metric = "inferscope_inter_token_latency_seconds",
     .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kTpot, .kind = K::kHistogram, .metric = "inferscope_time_per_output_token_seconds",
     .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kPreprocess, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="preprocess")", .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kSend, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="send")", .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kGatewayQueue, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="gateway_queue")", .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kUpstreamConnect, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="upstream_connect")", .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kUpstreamTtft, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="upstream_ttft")", .unit = U::kSeconds, .presence = P::kLazy,
     .note = "request written upstream -> first content event: the upstream's queue + prefill"},
    {.role = R::kStream, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .matchers = R"(stage="stream")", .unit = U::kSeconds, .presence = P::kLazy,
     .note = "first -> last content event: the upstream's decode as seen through the network"},
    {.role = R::kStage, .kind = K::kHistogram, .metric = "inferscope_stage_duration_seconds",
     .unit = U::kSeconds, .presence = P::kLazy, .kind_label = "stage"},
    {.role = R::kWaiting, .kind = K::kGauge, .metric = "inferscope_gateway_queued_requests", .unit = U::kRequests,
     .note = "admission queue per upstream (label upstream, no model)"},
    {.role = R::kRunning, .kind = K::kGauge, .metric = "inferscope_gateway_upstream_in_flight",
     .unit = U::kRequests, .note = "requests in flight to each upstream (label upstream, no model)"},
    {.role = R::kRequests, .kind = K::kCounter, .metric = "inferscope_requests_total", .unit = U::kRequests,
     .presence = P::kLazy},
    {.role = R::kErrors, .kind = K::kCounter, .metric = "inferscope_requests_total",
     .matchers = R"(finish_reason="error",status_class!="4xx")", .unit = U::kRequests, .presence = P::kLazy,
     .kind_label = "status_class", .note = "by kind: inferscope_gateway_errors_total{upstream,kind}"},
    {.role = R::kPromptTokens, .kind = K::kCounter, .metric = "inferscope_prompt_tokens_total",
     .unit = U::kTokens, .presence = P::kLazy},
    {.role = R::kGenerationTokens, .kind = K::kCounter, .metric = "inferscope_generation_tokens_total",
     .unit = U::kTokens, .presence = P::kLazy},
    {.role = R::kPromptLength, .kind = K::kHistogram, .metric = "inferscope_request_prompt_tokens",
     .unit = U::kTokens, .presence = P::kLazy},
    {.role = R::kGenerationLength, .kind = K::kHistogram, .metric = "inferscope_request_generation_tokens",
     .unit = U::kTokens, .presence = P::kLazy},
    {.role = R::kInFlight, .kind = K::kGauge, .metric = "inferscope_requests_in_flight", .unit = U::kRequests,
     .note = "no model label", .no_model_label = true},
    {.role = R::kClientErrors, .kind = K::kCounter, .metric = "inferscope_requests_total",
     .matchers = R"(status_class="4xx")", .unit = U::kRequests, .presence = P::kLazy},
};

// ---- vLLM V1 (metric-dialects.md §2, §3) -----------------------------------------------------
constexpr std::string_view kVllmPrefixes[] = {"vllm:"};
constexpr LegacyName kVllmItlLegacy[] = {
    {"vllm:time_per_output_token_seconds",
     "deprecated 0.11 (PR #24015), hidden 0.12, removed 0.13 (PR #32661); same data and buckets as ITL "
     "(production-stack#989 read it as TPOT instead)"}};
constexpr LegacyName kVllmKvLegacy[] = {
    {"vllm:gpu_cache_usage_perc", "deprecated 0.9 (PR #18354), off by default by 0.11; dashboards went flat (vllm#27133)"}};
constexpr LegacyName kVllmQueueLegacy[] = {{"vllm:time_in_queue_requests", "V0 duplicate, deprecated 0.8"}};
constexpr LegacyName kVllmPrefixQueriesLegacy[] = {{"vllm:gpu_prefix_cache_queries_total", "deprecated 0.9"}};
constexpr LegacyName kVllmPrefixHitsLegacy[] = {{"vllm:gpu_prefix_cache_hits_total", "deprecated 0.9"}};

constexpr MetricBinding kVllmBindings[] = {
    {.role = R::kE2e, .kind = K::kHistogram, .metric = "vllm:e2e_request_latency_seconds", .unit = U::kSeconds,
     .note = "frontend arrival -> last token; buckets start at 0.3 s"},
    {.role = R::kTtft, .kind = K::kHistogram, .metric = "vllm:time_to_first_token_seconds", .unit = U::kSeconds,
     .note = "arrival (input processing included) -> first token; no 2.0 bucket"},
    {.role = R::kQueue, .kind = K::kHistogram, .metric = "vllm:request_queue_time_seconds", .unit = U::kSeconds,
     .legacy = kVllmQueueLegacy, .note = "engine QUEUED -> most recent SCHEDULED; unresolved below 0.3 s"},
    {.role = R::kPrefill, .kind = K::kHistogram, .metric = "vllm:request_prefill_time_seconds",
     .unit = U::kSeconds},
    {.role = R::kDecode, .kind = K::kHistogram, .metric = "vllm:request_decode_time_seconds",
     .unit = U::kSeconds},
    {.role = R::kInference, .kind = K::kHistogram, .metric = "vllm:request_inference_time_seconds",
     .unit = U::kSeconds},
    {.role = R::kItl, .kind = K::kHistogram, .metric = "vllm:inter_token_latency_seconds", .unit = U::kSeconds,
     .legacy = kVllmItlLegacy,
     .note = "one observation per output event, not per token (speculative decoding inflates it)"},
    {.role = R::kTpot, .kind = K::kHistogram, .metric = "vllm:request_time_per_output_token_seconds",
     .unit = U::kSeconds, .presence = P::kOptional, .note = "per-request mean; added 0.11 with the ITL rename"},
    {.role = R::kWaiting, .kind = K::kGauge, .metric = "vllm:num_requests_waiting", .unit = U::kRequests},
    {.role = R::kRunning, .kind = K::kGauge, .metric = "vllm:num_requests_running", .unit = U::kRequests},
    {.role = R::kKvUsage, .kind = K::kGauge, .metric = "vllm:kv_cache_usage_perc", .unit = U::kRatio,
     .aggregation = A::kMax, .legacy = kVllmKvLegacy, .note = "0..1 fraction despite the name"},
    {.role = R::kPreemptions, .kind = K::kCounter, .metric = "vllm:num_preemptions_total", .unit = U::kEvents},
    {.role = R::kPrefixCacheQueries, .kind = K::kCounter, .metric = "vllm:prefix_cache_queries_total",
     .unit = U::kTokens, .legacy = kVllmPrefixQueriesLegacy},
    {.role = R::kPrefixCacheHits, .kind = K::kCounter, .metric = "vllm:prefix_cache_hits_total",
     .unit = U::kTokens, .legacy = kVllmPrefixHitsLegacy},
    {.role = R::kRequests, .kind = K::kCounter, .metric = "vllm:request_success_total", .unit = U::kRequests,
     .note = "every finished request, abort and error included, despite the name"},
    {.role = R::kErrors, .kind = K::kCounter, .metric = "vllm:request_success_total",
     .matchers = R"(finished_reason="error")", .unit = U::kRequests, .kind_label = "finished_reason",
     .note = "finished_reason=\"error\" exists in newer V1 only; older V1 shows stop/length/abort"},
    {.role = R::kPromptTokens, .kind = K::kCounter, .metric = "vllm:prompt_tokens_total", .unit = U::kTokens},
    {.role = R::kGenerationTokens, .kind = K::kCounter, .metric = "vllm:generation_tokens_total",
     .unit = U::kTokens},
    {.role = R::kPromptLength, .kind = K::kHistogram, .metric = "vllm:request_prompt_tokens", .unit = U::kTokens},
    {.role = R::kGenerationLength, .kind = K::kHistogram, .metric = "vllm:request_generation_tokens",
     .unit = U::kTokens},
    {.role = R::kSpecDrafts, .kind = K::kCounter, .metric = "vllm:spec_decode_num_drafts_total",
     .unit = U::kEvents, .presence = P::kFeature, .note = "with a speculative config only"},
    {.role = R::kSpecDraftTokens, .kind = K::kCounter, .metric = "vllm:spec_decode_num_draft_tokens_total",
     .unit = U::kTokens, .presence = P::kFeature},
    {.role = R::kSpecAcceptedTokens, .kind = K::kCounter, .metric = "vllm:spec_decode_num_accepted_tokens_total",
     .unit = U::kTokens, .presence = P::kFeature,
     .note = "per position: vllm:spec_decode_num_accepted_tokens_per_pos_total{position}"},
    // P/D disaggregation with the NIXL connector (serving-topologies.md §2.3): filled on the decode
    // instance, which pulls the KV; absent without a KV connector.
    {.role = R::kKvTransfer, .kind = K::kHistogram, .metric = "vllm:nixl_xfer_time_seconds", .unit = U::kSeconds,
     .presence = P::kFeature, .note = "per NIXL transfer (one per request in P/D), on the decode instance"},
    {.role = R::kKvTransferBytes, .kind = K::kHistogram, .metric = "vllm:nixl_bytes_transferred", .unit = U::kBytes,
     .presence = P::kFeature, .note = "bytes per NIXL transfer; failures: vllm:nixl_num_failed_transfers_total"},
};

constexpr DeprecatedName kVllmDeprecated[] = {
    {"vllm:avg_prompt_throughput_toks_per_s", "rate(vllm:prompt_tokens_total[5m]) (removed, PR #12383)"},
    {"vllm:avg_generation_throughput_toks_per_s", "rate(vllm:generation_tokens_total[5m]) (removed, PR #12383)"},
    {"vllm:gpu_prefix_cache_hit_rate",
     "rate(vllm:prefix_cache_hits_total[5m]) / rate(vllm:prefix_cache_queries_total[5m])"},
    {"vllm:cpu_prefix_cache_hit_rate", "nothing in V1"},
    {"vllm:num_requests_swapped", "nothing in V1 (no swapping)"},
    {"vllm:cpu_cache_usage_perc", "nothing in V1"},
    {"vllm:model_forward_time_milliseconds", "nothing in V1"},
    {"vllm:model_execute_time_milliseconds", "nothing in V1"},
};

// ---- llama.cpp llama-server (§4): counters only, no labels, no histograms -------------------
constexpr std::string_view kLlamaCppPrefixes[] = {"llamacpp:"};
constexpr MetricBinding kLlamaCppBindings[] = {
    {.role = R::kPrefillPerToken, .kind = K::kCounterRatio, .metric = "llamacpp:prompt_seconds_total",
     .operand = "llamacpp:prompt_tokens_total", .unit = U::kSecondsPerToken,
     .note = "slot-side prefill only (no HTTP, tokenisation or deferral); 1 ms resolution in older builds"},
    {.role = R::kTpot, .kind = K::kCounterRatio, .metric = "llamacpp:tokens_predicted_seconds_total",
     .operand = "llamacpp:tokens_predicted_total", .unit = U::kSecondsPerToken,
     .note = "mean decode time per generated token; added only when a request finishes (lags)"},
    {.role = R::kWaiting, .kind = K::kGauge, .metric = "llamacpp:requests_deferred", .unit = U::kRequests},
    {.role = R::kRunning, .kind = K::kGauge, .metric = "llamacpp:requests_processing", .unit = U::kRequests,
     .note = "busy slots"},
    {.role = R::kKvUsage, .kind = K::kGauge, .metric = "llamacpp:kv_cache_usage_ratio", .unit = U::kRatio,
     .presence = P::kOptional, .aggregation = A::kMax,
     .note = "older builds only (dropped in the newer set); counts cached prompts of idle slots"},
    {.role = R::kPromptTokens, .kind = K::kCounter, .metric = "llamacpp:prompt_tokens_total", .unit = U::kTokens,
     .note = "evaluated prompt tokens only (cached prefix excluded)"},
    {.role = R::kGenerationTokens, .kind = K::kCounter, .metric = "llamacpp:tokens_predicted_total",
     .unit = U::kTokens, .note = "added at request end; tokens of cancelled requests never counted"},
};
constexpr DeprecatedName kLlamaCppDeprecated[] = {
    {"llamacpp:prompt_tokens_seconds",
     "rate(llamacpp:prompt_tokens_total[5m]) (this gauge is reset by every scrape; two scrapers steal values)"},
    {"llamacpp:predicted_tokens_seconds",
     "rate(llamacpp:tokens_predicted_total[5m]) (this gauge is reset by every scrape)"},
    {"llamacpp:n_busy_slots_per_decode", "an average, not a counter: never rate() it"},
};

// ---- Hugging Face TGI (§5): unlabelled, seconds ----------------------------------------------
constexpr std::string_view kTgiPrefixes[] = {"tgi_"};
constexpr MetricBinding kTgiBindings[] = {
    {.role = R::kE2e, .kind = K::kHistogram, .metric = "tgi_request_duration", .unit = U::kSeconds,
     .presence = P::kLazy},
    {.role = R::kQueue, .kind = K::kHistogram, .metric = "tgi_request_queue_duration", .unit = U::kSeconds,
     .presence = P::kLazy},
    {.role = R::kPreprocess, .kind = K::kHistogram, .metric = "tgi_request_validation_duration",
     .unit = U::kSeconds, .presence = P::kLazy, .note = "validation and tokenisation"},
    {.role = R::kPrefill, .kind = K::kHistogram, .metric = "tgi_batch_forward_duration",
     .matchers = R"(method="prefill")", .unit = U::kSeconds, .presence = P::kLazy,
     .note = "per batch forward pass, not per request", .per_batch = true},
    {.role = R::kDecode, .kind = K::kHistogram, .metric = "tgi_batch_forward_duration",
     .matchers = R"(method="decode")", .unit = U::kSeconds, .presence = P::kLazy,
     .note = "per batch decode step, not per request", .per_batch = true},
    {.role = R::kInference, .kind = K::kHistogram, .metric = "tgi_request_inference_duration",
     .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kTpot, .kind = K::kHistogram, .metric = "tgi_request_mean_time_per_token_duration",
     .unit = U::kSeconds, .presence = P::kLazy,
     .note = "per-request mean (a TPOT, inference-perf#203); may include prefill (unconfirmed)"},
    {.role = R::kWaiting, .kind = K::kGauge, .metric = "tgi_queue_size", .unit = U::kRequests},
    {.role = R::kRunning, .kind = K::kGauge, .metric = "tgi_batch_current_size", .unit = U::kRequests},
    {.role = R::kRequests, .kind = K::kCounter, .metric = "tgi_request_count", .unit = U::kRequests,
     .presence = P::kLazy},
    {.role = R::kErrors, .kind = K::kCounter, .metric = "tgi_request_failure", .unit = U::kRequests,
     .presence = P::kLazy, .kind_label = "err"},
    {.role = R::kPromptTokens, .kind = K::kCounter, .metric = "tgi_request_input_length_sum",
     .unit = U::kTokens, .presence = P::kLazy, .note = "the _sum of the input-length histogram"},
    {.role = R::kGenerationTokens, .kind = K::kCounter, .metric = "tgi_request_generated_tokens_sum",
     .unit = U::kTokens, .presence = P::kLazy, .note = "the _sum of the generated-tokens histogram"},
    {.role = R::kPromptLength, .kind = K::kHistogram, .metric = "tgi_request_input_length", .unit = U::kTokens,
     .presence = P::kLazy},
    {.role = R::kGenerationLength, .kind = K::kHistogram, .metric = "tgi_request_generated_tokens",
     .unit = U::kTokens, .presence = P::kLazy},
};

// ---- NVIDIA Triton (§6): cumulative µs counters, label model -------------------------------
constexpr std::string_view kTritonPrefixes[] = {"nv_inference_"};
constexpr MetricBinding kTritonBindings[] = {
    {.role = R::kE2e, .kind = K::kCounterRatio, .metric = "nv_inference_request_duration_us",
     .operand = "nv_inference_request_success", .unit = U::kSeconds, .scale = 1e-6,
     .note = "mean only (cumulative µs counter); includes cached requests"},
    {.role = R::kTtft, .kind = K::kHistogram, .metric = "nv_inference_first_response_histogram_ms",
     .unit = U::kSeconds, .scale = 1e-3, .presence = P::kOptional,
     .note = "opt-in, decoupled models only; first response chunk, not the first decoded token; buckets 100 500 2000 5000 ms"},
    {.role = R::kQueue, .kind = K::kCounterRatio, .metric = "nv_inference_queue_duration_us",
     .operand = "nv_inference_request_success", .unit = U::kSeconds, .scale = 1e-6},
    {.role = R::kInference, .kind = K::kCounterRatio, .metric = "nv_inference_compute_infer_duration_us",
     .operand = "nv_inference_request_success", .unit = U::kSeconds, .scale = 1e-6},
    {.role = R::kPreprocess, .kind = K::kCounterRatio, .metric = "nv_inference_compute_input_duration_us",
     .operand = "nv_inference_request_success", .unit = U::kSeconds, .scale = 1e-6,
     .note = "input tensor copy, not tokenisation"},
    {.role = R::kPostprocess, .kind = K::kCounterRatio, .metric = "nv_inference_compute_output_duration_us",
     .operand = "nv_inference_request_success", .unit = U::kSeconds, .scale = 1e-6},
    {.role = R::kWaiting, .kind = K::kGauge, .metric = "nv_inference_pending_request_count",
     .unit = U::kRequests},
    {.role = R::kRequests, .kind = K::kCounter, .metric = "nv_inference_request_success", .unit = U::kRequests,
     .note = "successes only; failures are nv_inference_request_failure"},
    {.role = R::kErrors, .kind = K::kCounter, .metric = "nv_inference_request_failure", .unit = U::kRequests,
     .kind_label = "reason"},
    {.role = R::kGpuUtilization, .kind = K::kGauge, .metric = "nv_gpu_utilization", .unit = U::kRatio,
     .aggregation = A::kAvg},
    {.role = R::kGpuMemoryUsed, .kind = K::kGauge, .metric = "nv_gpu_memory_used_bytes", .unit = U::kBytes},
    {.role = R::kGpuMemoryTotal, .kind = K::kGauge, .metric = "nv_gpu_memory_total_bytes", .unit = U::kBytes},
    {.role = R::kGpuPower, .kind = K::kGauge, .metric = "nv_gpu_power_usage", .unit = U::kWatts},
    {.role = R::kHostCpuBusy, .kind = K::kGauge, .metric = "nv_cpu_utilization", .unit = U::kRatio,
     .aggregation = A::kAvg},
    {.role = R::kHostMemoryUsed, .kind = K::kGauge, .metric = "nv_cpu_memory_used_bytes", .unit = U::kBytes},
    {.role = R::kHostMemoryTotal, .kind = K::kGauge, .metric = "nv_cpu_memory_total_bytes", .unit = U::kBytes},
};

// ---- SGLang (../shared/reference/dialects-sglang-litellm.md, SGLang section) -----------------
// Request families carry model_name (v0.3.5: `name`); scheduler gauges one series per rank.
constexpr std::string_view kSglangPrefixes[] = {"sglang:"};
constexpr LegacyName kSglangQueueLegacy[] = {
    {"sglang:waiting_request_latency_seconds", "v0.3.5 name (#1853); queue_time_seconds succeeded it"}};
constexpr LegacyName kSglangItlLegacy[] = {
    {"sglang:time_per_output_token_seconds",
     "v0.3.5/0.4 name, also observed once per token; inter_token_latency_seconds added in #3988, this removed in #4914"}};
constexpr LegacyName kSglangWaitingLegacy[] = {
    {"sglang:num_requests_waiting", "v0.3.5 name; num_queue_reqs since #1981 (Nov 2024)"},
    {"sglang:queue_req", "v0.3.5 duplicate of num_requests_waiting"}};
constexpr LegacyName kSglangRunningLegacy[] = {
    {"sglang:num_requests_running", "v0.3.5 name; num_running_reqs since #1981 (Nov 2024)"}};
constexpr LegacyName kSglangPromptLengthLegacy[] = {
    {"sglang:request_prompt_tokens", "v0.3.5 name of the prompt-length histogram"}};
constexpr LegacyName kSglangGenerationLengthLegacy[] = {
    {"sglang:request_generation_tokens", "v0.3.5 name of the output-length histogram"}};

constexpr MetricBinding kSglangBindings[] = {
    {.role = R::kE2e, .kind = K::kHistogram, .metric = "sglang:e2e_request_latency_seconds", .unit = U::kSeconds,
     .presence = P::kLazy, .note = "buckets 0.1 .. 2400 s (v0.3.5: 1-2-5 steps from 1 s; 0.4: 0.3 .. 60 s)"},
    {.role = R::kTtft, .kind = K::kHistogram, .metric = "sglang:time_to_first_token_seconds", .unit = U::kSeconds,
     .presence = P::kLazy, .note = "buckets from 0.1 s (v0.3.5/0.4: from 0.001 s)"},
    {.role = R::kQueue, .kind = K::kHistogram, .metric = "sglang:queue_time_seconds", .unit = U::kSeconds,
     .presence = P::kOptional, .legacy = kSglangQueueLegacy,
     .note = "scheduler wait queue -> first forward; absent in 0.4 (when it appeared is not pinned)"},
    {.role = R::kItl, .kind = K::kHistogram, .metric = "sglang:inter_token_latency_seconds", .unit = U::kSeconds,
     .presence = P::kLazy, .legacy = kSglangItlLegacy,
     .note = "per token: a chunk's gap / its n tokens, observed n times (_count = output tokens)"},
    {.role = R::kStage, .kind = K::kHistogram, .metric = "sglang:per_stage_req_latency_seconds",
     .unit = U::kSeconds, .presence = P::kOptional, .kind_label = "stage",
     .note = "newer builds; stages such as request_process, prefill_forward, chunked_prefill"},
    {.role = R::kWaiting, .kind = K::kGauge, .metric = "sglang:num_queue_reqs", .unit = U::kRequests,
     .legacy = kSglangWaitingLegacy, .note = "one series per scheduler rank"},
    {.role = R::kRunning, .kind = K::kGauge, .metric = "sglang:num_running_reqs", .unit = U::kRequests,
     .legacy = kSglangRunningLegacy, .note = "one series per scheduler rank"},
    {.role = R::kKvUsage, .kind = K::kGauge, .metric = "sglang:token_usage", .unit = U::kRatio,
     .aggregation = A::kMax, .note = "KV-cache token pool in use, 0..1, per rank"},
    {.role = R::kRequests, .kind = K::kCounter, .metric = "sglang:num_requests_total", .unit = U::kRequests,
     .presence = P::kOptional, .note = "finished requests; absent in 0.4"},
    // No kErrors: the only error signal, sglang:http_responses_total{status_code=~"5.."} (2026 builds),
    // has no model_name, so an error ratio over num_requests_total by model would always read 0.
    {.role = R::kPromptTokens, .kind = K::kCounter, .metric = "sglang:prompt_tokens_total", .unit = U::kTokens},
    {.role = R::kGenerationTokens, .kind = K::kCounter, .metric = "sglang:generation_tokens_total",
     .unit = U::kTokens},
    {.role = R::kPromptLength, .kind = K::kHistogram, .metric = "sglang:prompt_tokens_histogram",
     .unit = U::kTokens, .presence = P::kOptional, .legacy = kSglangPromptLengthLegacy,
     .note = "opt-in in newer builds"},
    {.role = R::kGenerationLength, .kind = K::kHistogram, .metric = "sglang:generation_tokens_histogram",
     .unit = U::kTokens, .presence = P::kOptional, .legacy = kSglangGenerationLengthLegacy,
     .note = "opt-in in newer builds"},
    {.role = R::kInFlight, .kind = K::kGauge, .metric = "sglang:http_requests_active", .unit = U::kRequests,
     .presence = P::kOptional, .note = "2026 builds; HTTP requests being served (scrapes included), no model label",
     .no_model_label = true},
    {.role = R::kClientErrors, .kind = K::kCounter, .metric = "sglang:http_responses_total",
     .matchers = R"(status_code=~"4..")", .unit = U::kRequests, .presence = P::kOptional,
     .kind_label = "status_code", .note = "2026 builds only", .no_model_label = true},
};
constexpr DeprecatedName kSglangDeprecated[] = {
    {"sglang:gen_throughput", "rate(sglang:generation_tokens_total[5m]) (a gauge over the last log interval)"},
    {"sglang:cache_hit_rate",
     "a gauge over the last log interval, 0..1 now but a percentage in v0.3.5: compare versions before trusting it"},
    {"sglang:func_latency_seconds", "nothing (0.4 internal function timings, label name = function)"},
};

// ---- LiteLLM proxy (dialects-sglang-litellm.md, LiteLLM section): a gateway ------------------
// Health checks (hashed_api_key="litellm-internal-health-check") would inflate every count.
constexpr std::string_view kLitellmNoHealthChecks = R"(hashed_api_key!="litellm-internal-health-check")";
constexpr std::string_view kLitellmPrefixes[] = {"litellm_"};
constexpr MetricBinding kLitellmBindings[] = {
    {.role = R::kE2e, .kind = K::kHistogram, .metric = "litellm_request_total_latency_metric",
     .matchers = kLitellmNoHealthChecks, .unit = U::kSeconds, .presence = P::kLazy,
     .note = "proxy arrival -> response; buckets 0.005 .. 300 s (#5335)"},
    {.role = R::kPreprocess, .kind = K::kHistogram, .metric = "litellm_overhead_latency_metric",
     .matchers = kLitellmNoHealthChecks, .unit = U::kSeconds, .presence = P::kLazy,
     .note = "the proxy's own time (total - upstream call: auth, routing, callbacks); HELP says ms, values are "
             "seconds (#7913); labelled model_group, not model",
     .no_model_label = true},
    {.role = R::kGatewayQueue, .kind = K::kHistogram, .metric = "litellm_request_queue_time_seconds",
     .matchers = kLitellmNoHealthChecks, .unit = U::kSeconds, .presence = P::kOptional,
     .note = "arrival -> handler start (#17973, Dec 2025), always 0 before #21918 (Feb 2026); the uvicorn "
             "accept backlog stays invisible"},
    {.role = R::kInference, .kind = K::kHistogram, .metric = "litellm_llm_api_latency_metric",
     .matchers = kLitellmNoHealthChecks, .unit = U::kSeconds, .presence = P::kLazy,
     .note = "the whole upstream LLM API call: the model server's queue, prefill and decode plus the network"},
    {.role = R::kUpstreamTtft, .kind = K::kHistogram, .metric = "litellm_llm_api_time_to_first_token_metric",
     .matchers = kLitellmNoHealthChecks, .unit = U::kSeconds, .presence = P::kLazy,
     .note = "upstream call -> first chunk, streaming requests only (#6334, #7740)"},
    {.role = R::kRequests, .kind = K::kCounter, .metric = "litellm_proxy_total_requests_metric_total",
     .matchers = kLitellmNoHealthChecks, .unit = U::kRequests, .presence = P::kLazy,
     .note = "every outcome, labelled requested_model and status_code (no model label)", .no_model_label = true},
    {.role = R::kErrors, .kind = K::kCounter, .metric = "litellm_proxy_failed_requests_metric_total",
     .matchers = R"(exception_status=~"5..",hashed_api_key!="litellm-internal-health-check")",
     .unit = U::kRequests, .presence = P::kLazy, .kind_label = "exception_status",
     .note = "5xx failures (#5789), exception_class names the kind; 401s are never logged; labelled "
             "requested_model", .no_model_label = true},
    {.role = R::kPromptTokens, .kind = K::kCounter, .metric = "litellm_input_tokens_metric_total",
     .matchers = kLitellmNoHealthChecks, .unit = U::kTokens, .presence = P::kLazy},
    {.role = R::kGenerationTokens, .kind = K::kCounter, .metric = "litellm_output_tokens_metric_total",
     .matchers = kLitellmNoHealthChecks, .unit = U::kTokens, .presence = P::kLazy},
    {.role = R::kInFlight, .kind = K::kGauge, .metric = "litellm_in_flight_requests", .unit = U::kRequests,
     .presence = P::kOptional, .note = "per uvicorn worker, no labels (#22319, Feb 2026)", .no_model_label = true},
    {.role = R::kClientErrors, .kind = K::kCounter, .metric = "litellm_proxy_failed_requests_metric_total",
     .matchers = R"(exception_status=~"4..",hashed_api_key!="litellm-internal-health-check")",
     .unit = U::kRequests, .presence = P::kLazy, .kind_label = "exception_status", .no_model_label = true},
};
constexpr DeprecatedName kLitellmDeprecated[] = {
    {"litellm_requests_metric_total", "litellm_proxy_total_requests_metric_total (deprecated duplicate)"},
    {"litellm_llm_api_failed_requests_metric_total",
     "litellm_proxy_failed_requests_metric_total, or litellm_deployment_failure_responses_total for the upstream"},
    {"litellm_deployment_latency_per_output_token",
     "neither TPOT nor ITL: (TTFT if streaming, else total time) / output tokens; use "
     "litellm_llm_api_time_to_first_token_metric and litellm_llm_api_latency_metric"},
};

// ---- NVIDIA Dynamo (serving-topologies.md §4): frontend, KV router, workers ------------------
// A dynamo target is the frontend (dynamo_frontend_*, label model); the router and worker series
// (dynamo_component_*, per-worker gauges with worker_type/dp_rank/worker_id, TRT-LLM's KV transfer)
// are optional: they show where the frontend process also hosts the router, or when the workers
// are scraped as dynamo targets too.
constexpr std::string_view kDynamoPrefixes[] = {"dynamo_", "trtllm_kv_transfer_"};
constexpr std::string_view kDynamoStage = "dynamo_frontend_stage_duration_seconds";
constexpr MetricBinding kDynamoBindings[] = {
    {.role = R::kE2e, .kind = K::kHistogram, .metric = "dynamo_frontend_request_duration_seconds",
     .unit = U::kSeconds, .presence = P::kLazy, .note = "frontend E2E; buckets 0, 2, 4 ... 510 s (coarse)"},
    {.role = R::kTtft, .kind = K::kHistogram, .metric = "dynamo_frontend_time_to_first_token_seconds",
     .unit = U::kSeconds, .presence = P::kLazy, .note = "in P/D it includes remote prefill and the KV transfer"},
    {.role = R::kItl, .kind = K::kHistogram, .metric = "dynamo_frontend_inter_token_latency_seconds",
     .unit = U::kSeconds, .presence = P::kLazy},
    {.role = R::kPreprocess, .kind = K::kHistogram, .metric = kDynamoStage, .matchers = R"(stage="preprocess")",
     .unit = U::kSeconds, .presence = P::kOptional,
     .note = "frontend pipeline stage (label stage only); which builds first had it is not pinned",
     .no_model_label = true},
    {.role = R::kPostprocess, .kind = K::kHistogram, .metric = kDynamoStage, .matchers = R"(stage="postprocess")",
     .unit = U::kSeconds, .presence = P::kOptional, .no_model_label = true},
    {.role = R::kRoute, .kind = K::kHistogram, .metric = kDynamoStage, .matchers = R"(stage="route")",
     .unit = U::kSeconds, .presence = P::kOptional,
     .note = "the router's choice; its cost split: dynamo_router_overhead_*_ms{router_id}", .no_model_label = true},
    {.role = R::kKvTransfer, .kind = K::kHistogram, .metric = "trtllm_kv_transfer_latency_seconds",
     .unit = U::kSeconds, .presence = P::kFeature,
     .note = "TRT-LLM backend in disaggregated mode only, recorded when a transfer happened (labels model_name, "
             "disaggregation_mode, engine_type); vLLM backends: vllm:nixl_xfer_time_seconds on the decode worker",
     .no_model_label = true},
    {.role = R::kKvTransferBytes, .kind = K::kHistogram, .metric = "trtllm_kv_transfer_bytes", .unit = U::kBytes,
     .presence = P::kFeature, .note = "TRT-LLM backend; buckets 100 KB .. 5 GB", .no_model_label = true},
    {.role = R::kRoutePrefixHit, .kind = K::kHistogram, .metric = "dynamo_component_router_kv_hit_rate",
     .unit = U::kRatio, .presence = P::kOptional,
     .note = "KV router: predicted prefix overlap of the chosen worker at routing time (labels hierarchy, router_id)",
     .no_model_label = true},
    {.role = R::kPoolWaiting, .kind = K::kGauge, .metric = "dynamo_frontend_router_queue_pending_requests",
     .unit = U::kRequests, .presence = P::kOptional, .kind_label = "worker_type",
     .note = "router scheduler queue per worker_type (prefill, decode, aggregated); pending ISL tokens: "
             "dynamo_frontend_router_queue_pending_isl_tokens", .no_model_label = true},
    {.role = R::kEndpointLoad, .kind = K::kGauge, .metric = "dynamo_frontend_worker_active_decode_blocks",
     .unit = U::kBlocks, .presence = P::kOptional, .kind_label = "worker_id",
     .note = "active decode KV blocks per worker (labels worker_id, dp_rank, worker_type); queued prefill tokens: "
             "dynamo_frontend_worker_active_prefill_tokens", .no_model_label = true},
    {.role = R::kKvUsage, .kind = K::kGauge, .metric = "dynamo_component_gpu_cache_usage_percent", .unit = U::kRatio,
     .presence = P::kOptional, .aggregation = A::kMax,
     .note = "on workers: 0..1 per dynamo_component and dp_rank despite the name"},
    {.role = R::kRequests, .kind = K::kCounter, .metric = "dynamo_frontend_requests_total", .unit = U::kRequests,
     .presence = P::kLazy, .note = "every completed request, labels endpoint, request_type, status, error_type"},
    {.role = R::kErrors, .kind = K::kCounter, .metric = "dynamo_frontend_requests_total",
     .matchers = R"(status="error",error_type!~"validation|not_found|cancelled")", .unit = U::kRequests,
     .presence = P::kLazy, .kind_label = "error_type",
     .note = "server-side: overload (HTTP 529 rejections), response_timeout, internal, not_implemented"},
    {.role = R::kClientErrors, .kind = K::kCounter, .metric = "dynamo_frontend_requests_total",
     .matchers = R"(status="error",error_type=~"validation|not_found")", .unit = U::kRequests, .presence = P::kLazy,
     .kind_label = "error_type"},
    {.role = R::kGenerationTokens, .kind = K::kCounter, .metric = "dynamo_frontend_output_tokens_total",
     .unit = U::kTokens, .presence = P::kLazy},
    {.role = R::kPromptLength, .kind = K::kHistogram, .metric = "dynamo_frontend_input_sequence_tokens",
     .unit = U::kTokens, .presence = P::kLazy},
    {.role = R::kGenerationLength, .kind = K::kHistogram, .metric = "dynamo_frontend_output_sequence_tokens",
     .unit = U::kTokens, .presence = P::kLazy},
    {.role = R::kInFlight, .kind = K::kGauge, .metric = "dynamo_frontend_active_requests", .unit = U::kRequests,
     .note = "handler entry -> response done; engine-bound only: dynamo_frontend_inflight_requests"},
};

// ---- llm-d router / endpoint picker (serving-topologies.md §5) ---------------------------------
// Current names llm_d_router_epp_* (llm-d-router); the GIE-era names inference_objective_*,
// inference_pool_* are their legacy names. Names given there only in the old spelling
// (inference_extension_*, per-pod queue) are bound as they are.
constexpr std::string_view kLlmdPrefixes[] = {"llm_d_", "inference_objective_", "inference_pool_",
                                              "inference_extension_"};
constexpr LegacyName kLlmdE2eLegacy[] = {{"inference_objective_request_duration_seconds", "GIE-era EPP name"}};
constexpr LegacyName kLlmdTtftLegacy[] = {{"inference_objective_request_ttft_seconds", "GIE-era EPP name"}};
constexpr LegacyName kLlmdTpotLegacy[] = {{"inference_objective_request_tpot_seconds", "GIE-era EPP name"}};
constexpr LegacyName kLlmdRequestsLegacy[] = {{"inference_objective_request_total", "GIE-era EPP name"}};
constexpr LegacyName kLlmdErrorsLegacy[] = {{"inference_objective_request_error_total", "GIE-era EPP name"}};
constexpr LegacyName kLlmdInputLegacy[] = {{"inference_objective_input_tokens", "GIE-era EPP name"}};
constexpr LegacyName kLlmdOutputLegacy[] = {{"inference_objective_output_tokens", "GIE-era EPP name"}};
constexpr LegacyName kLlmdRunningLegacy[] = {{"inference_objective_running_requests", "GIE-era EPP name"}};
constexpr LegacyName kLlmdKvLegacy[] = {{"inference_pool_average_kv_cache_utilization", "GIE-era EPP name"}};
constexpr LegacyName kLlmdPoolQueueLegacy[] = {{"inference_pool_average_queue_size", "GIE-era EPP name"}};
constexpr MetricBinding kLlmdBindings[] = {
    {.role = R::kE2e, .kind = K::kHistogram, .metric = "llm_d_router_epp_request_duration_seconds",
     .unit = U::kSeconds, .presence = P::kLazy, .legacy = kLlmdE2eLegacy, .note = "gateway-side E2E"},
    {.role = R::kTtft, .kind = K::kHistogram, .metric = "llm_d_router_epp_request_ttft_seconds", .unit = U::kSeconds,
     .presence = P::kLazy, .legacy = kLlmdTtftLegacy,
     .note = "at the gateway: remote prefill and KV transfer included"},
    {.role = R::kTpot, .kind = K::kHistogram, .metric = "llm_d_router_epp_request_tpot_seconds", .unit = U::kSeconds,
     .presence = P::kLazy, .legacy = kLlmdTpotLegacy},
    {.role = R::kGatewayQueue, .kind = K::kHistogram,
     .metric = "inference_extension_flow_control_request_queue_duration_seconds", .unit = U::kSeconds,
     .presence = P::kOptional, .note = "EPP flow-control queue (with flow control on); labels fairness_id, priority, "
                                       "outcome, inference_pool"},
    {.role = R::kRoute, .kind = K::kHistogram, .metric = "inference_extension_scheduler_e2e_duration_seconds",
     .unit = U::kSeconds, .presence = P::kOptional,
     .note = "scheduling time per request (no labels); per plugin: inference_extension_plugin_duration_seconds",
     .no_model_label = true},
    {.role = R::kRoutePrefixHit, .kind = K::kHistogram, .metric = "inference_extension_prefix_indexer_hit_ratio",
     .unit = U::kRatio, .presence = P::kOptional,
     .note = "matched / total prefix per lookup (with the prefix scorer; no labels)", .no_model_label = true},
    {.role = R::kPoolWaiting, .kind = K::kGauge, .metric = "llm_d_router_epp_average_queue_size",
     .unit = U::kRequests, .aggregation = A::kAvg, .kind_label = "name", .legacy = kLlmdPoolQueueLegacy,
     .note = "mean waiting queue of the pool's endpoints, label name = the pool", .no_model_label = true},
    {.role = R::kEndpointLoad, .kind = K::kGauge, .metric = "inference_pool_per_pod_queue_size", .unit = U::kRequests,
     .presence = P::kOptional, .kind_label = "model_server_pod",
     .note = "per-endpoint waiting queue (labels name, model_server_pod); its newer per-endpoint name is unverified",
     .no_model_label = true},
    {.role = R::kWaiting, .kind = K::kGauge, .metric = "inference_pool_per_pod_queue_size", .unit = U::kRequests,
     .presence = P::kOptional, .note = "sum of the endpoints' waiting queues", .no_model_label = true},
    {.role = R::kKvUsage, .kind = K::kGauge, .metric = "llm_d_router_epp_average_kv_cache_utilization",
     .unit = U::kRatio, .aggregation = A::kMax, .legacy = kLlmdKvLegacy,
     .note = "mean KV usage of the pool's endpoints (label name); per endpoint: vllm:kv_cache_usage_perc",
     .no_model_label = true},
    {.role = R::kRequests, .kind = K::kCounter, .metric = "llm_d_router_epp_request_total", .unit = U::kRequests,
     .presence = P::kLazy, .legacy = kLlmdRequestsLegacy},
    {.role = R::kErrors, .kind = K::kCounter, .metric = "llm_d_router_epp_request_error_total", .unit = U::kRequests,
     .presence = P::kLazy, .kind_label = "error_code", .legacy = kLlmdErrorsLegacy},
    {.role = R::kPromptLength, .kind = K::kHistogram, .metric = "llm_d_router_epp_input_tokens", .unit = U::kTokens,
     .presence = P::kLazy, .legacy = kLlmdInputLegacy},
    {.role = R::kGenerationLength, .kind = K::kHistogram, .metric = "llm_d_router_epp_output_tokens",
     .unit = U::kTokens, .presence = P::kLazy, .legacy = kLlmdOutputLegacy},
    {.role = R::kInFlight, .kind = K::kGauge, .metric = "llm_d_router_epp_running_requests", .unit = U::kRequests,
     .legacy = kLlmdRunningLegacy, .note = "requests in flight through the EPP"},
};

// ---- NVIDIA dcgm-exporter (§7): per GPU, memory in MiB, utilisation in % ---------------------
constexpr std::string_view kDcgmPrefixes[] = {"DCGM_FI_"};
constexpr MetricBinding kDcgmBindings[] = {
    {.role = R::kGpuUtilization, .kind = K::kGauge, .metric = "DCGM_FI_DEV_GPU_UTIL", .unit = U::kRatio,
     .scale = 0.01, .aggregation = A::kAvg, .note = "coarse: any kernel running; DCGM_FI_PROF_* are finer"},
    {.role = R::kGpuMemoryUsed, .kind = K::kGauge, .metric = "DCGM_FI_DEV_FB_USED", .unit = U::kBytes,
     .scale = 1048576},
    {.role = R::kGpuMemoryTotal, .kind = K::kGaugeSum, .metric = "DCGM_FI_DEV_FB_USED",
     .operand = "DCGM_FI_DEV_FB_FREE", .unit = U::kBytes, .scale = 1048576,
     .note = "used + free; DCGM_FI_DEV_FB_RESERVED (when exported) is not counted"},
    {.role = R::kGpuTemperature, .kind = K::kGauge, .metric = "DCGM_FI_DEV_GPU_TEMP", .unit = U::kCelsius,
     .aggregation = A::kMax},
    {.role = R::kGpuPower, .kind = K::kGauge, .metric = "DCGM_FI_DEV_POWER_USAGE", .unit = U::kWatts},
};

// ---- prometheus-node-exporter ----------------------------------------------------------------
constexpr std::string_view kNodePrefixes[] = {"node_"};
constexpr MetricBinding kNodeBindings[] = {
    {.role = R::kHostCpuBusy, .kind = K::kBusyFromIdle, .metric = "node_cpu_seconds_total",
     .matchers = R"(mode="idle")", .unit = U::kRatio},
    {.role = R::kHostMemoryUsed, .kind = K::kGaugeDifference, .metric = "node_memory_MemTotal_bytes",
     .operand = "node_memory_MemAvailable_bytes", .unit = U::kBytes},
    {.role = R::kHostMemoryTotal, .kind = K::kGauge, .metric = "node_memory_MemTotal_bytes", .unit = U::kBytes},
};

// ---- up's Redis queue collector (docs/queues.md; src/queue/queue_metrics.cpp) -----------------
// No model label: a queue feeds whatever model its workers call. Absent series mean "cannot be
// known for this queue system", never 0.
constexpr MetricBinding kQueueBindings[] = {
    {.role = R::kQueueWait, .kind = K::kHistogram, .metric = "inferscope_queue_wait_seconds", .unit = U::kSeconds,
     .presence = P::kOptional, .note = "enqueue -> start, observed once per job seen started; absent for Celery and lists"},
    {.role = R::kQueueRun, .kind = K::kHistogram, .metric = "inferscope_queue_run_seconds", .unit = U::kSeconds,
     .presence = P::kOptional, .note = "start -> end of a job (RQ only)"},
    {.role = R::kQueueDepth, .kind = K::kGauge, .metric = "inferscope_queue_depth", .unit = U::kEvents,
     .aggregation = A::kSum, .note = "jobs waiting, labels queue and system"},
    {.role = R::kQueueOldestAge, .kind = K::kGauge, .metric = "inferscope_queue_oldest_age_seconds",
     .unit = U::kSeconds, .presence = P::kOptional, .aggregation = A::kMax, .note = "0 when the queue is empty"},
    {.role = R::kQueueInProgress, .kind = K::kGauge, .metric = "inferscope_queue_in_progress", .unit = U::kEvents,
     .presence = P::kOptional, .aggregation = A::kSum},
    {.role = R::kQueueJobs, .kind = K::kCounter, .metric = "inferscope_queue_jobs_total", .unit = U::kEvents,
     .presence = P::kOptional, .kind_label = "outcome", .note = "outcome = finished | failed"},
    {.role = R::kQueueWorkers, .kind = K::kGauge, .metric = "inferscope_queue_workers", .unit = U::kEvents,
     .presence = P::kOptional, .aggregation = A::kSum, .kind_label = "state", .note = "state = busy | idle | stale"},
};

constexpr Dialect kDialects[] = {
    {.id = DialectId::kInferscope, .title = "inferscope serve", .model_label = "model",
     .prefixes = kInferscopePrefixes, .bindings = kInferscopeBindings, .pool_label = "pool",
     .note = "also exposes vllm:* and simulated DCGM_FI_* (simulated=\"true\") by default"},
    {.id = DialectId::kGateway, .title = "inferscope gateway", .model_label = "model",
     .prefixes = kInferscopePrefixes, .bindings = kGatewayBindings,
     .note = "measures any OpenAI-compatible upstream; never emits vllm:*"},
    {.id = DialectId::kVllm, .title = "vLLM V1", .model_label = "model_name", .prefixes = kVllmPrefixes,
     .bindings = kVllmBindings, .deprecated = kVllmDeprecated,
     .note = "labels model_name and engine; no GPU metrics (scrape dcgm-exporter)"},
    {.id = DialectId::kLlamaCpp, .title = "llama.cpp llama-server", .model_label = "",
     .prefixes = kLlamaCppPrefixes, .bindings = kLlamaCppBindings, .deprecated = kLlamaCppDeprecated,
     .note = "no labels and no latency histograms: put `inferscope gateway` in front for e2e/TTFT/ITL"},
    {.id = DialectId::kTgi, .title = "Hugging Face TGI", .model_label = "", .prefixes = kTgiPrefixes,
     .bindings = kTgiBindings, .note = "no TTFT and no ITL metric"},
    {.id = DialectId::kTriton, .title = "NVIDIA Triton Inference Server", .model_label = "model",
     .device_label = "gpu_uuid",
     .prefixes = kTritonPrefixes, .bindings = kTritonBindings,
     .error_accounting = ErrorAccounting::kDisjointFromRequests,
     .note = "latency as cumulative µs counters: means only, no quantiles"},
    {.id = DialectId::kSglang, .title = "SGLang", .model_label = "model_name", .prefixes = kSglangPrefixes,
     .bindings = kSglangBindings, .deprecated = kSglangDeprecated,
     .note = "multiprocess prometheus_client: no _created, no process families; v0.3.5 labels the model `name`; "
             "no GPU metrics (scrape dcgm-exporter); server errors only as sglang:http_responses_total 5xx "
             "(no model label), not mapped"},
    {.id = DialectId::kLitellm, .title = "LiteLLM proxy", .model_label = "model", .prefixes = kLitellmPrefixes,
     .bindings = kLitellmBindings, .deprecated = kLitellmDeprecated,
     .note = "a gateway: no engine queue, KV-cache or GPU metric (scrape the servers behind it); per-caller labels "
             "(client_ip, user_agent, end_user, keys) multiply series"},
    {.id = DialectId::kDynamo, .title = "NVIDIA Dynamo", .model_label = "model", .prefixes = kDynamoPrefixes,
     .bindings = kDynamoBindings, .pool_label = "worker_type",
     .note = "frontend series by model; per-worker gauges by worker_type (prefill, decode, aggregated, encoder), "
             "dp_rank and worker_id; KV transfer measured by the TRT-LLM backend (trtllm_kv_transfer_*) or by vLLM "
             "workers (vllm:nixl_*): scrape the workers too"},
    {.id = DialectId::kLlmd, .title = "llm-d router (EPP)", .model_label = "model_name", .prefixes = kLlmdPrefixes,
     .bindings = kLlmdBindings, .pool_label = "name",
     .note = "a router: no engine stages (scrape the vLLM pods behind it: prefill pods, decode pods with "
             "vllm:nixl_*); pool gauges labelled name, not model; llm_d_router_epp_* replaced the GIE-era "
             "inference_objective_*/inference_pool_* names (whether both are emitted together is unverified)"},
    {.id = DialectId::kDcgm, .title = "NVIDIA dcgm-exporter", .model_label = "", .device_label = "gpu",
     .prefixes = kDcgmPrefixes,
     .bindings = kDcgmBindings, .note = "per GPU: labels gpu, UUID, device, modelName, Hostname"},
    {.id = DialectId::kNode, .title = "prometheus-node-exporter", .model_label = "", .prefixes = kNodePrefixes,
     .bindings = kNodeBindings},
};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < std::size(kDialects); ++i) {
    if (static_cast<std::size_t>(kDialects[i].id) != i) return false;
  }
  return std::size(kDialects) == kAllDialects.size();
}
static_assert(in_enum_order(), "kDialects must list every DialectId in enum order");

}  // namespace

const Dialect& dialect(DialectId id) noexcept {
  static constexpr Dialect kUnmapped{.id = DialectId::kCustom, .title = "custom target",
                                     .note = "roles mapped to its own names in up's config"};
  if (id == DialectId::kCustom) return kUnmapped;
  return kDialects[static_cast<std::size_t>(id)];
}

std::span<const MetricBinding> queue_bindings() noexcept { return kQueueBindings; }

const MetricBinding* find_binding(const Dialect& table, Role role) noexcept {
  for (const MetricBinding& binding : table.bindings) {
    if (binding.role == role) return &binding;
  }
  return nullptr;
}

const MetricBinding* find_binding(DialectId id, Role role) noexcept { return find_binding(dialect(id), role); }

}  // namespace inferscope::dialect
