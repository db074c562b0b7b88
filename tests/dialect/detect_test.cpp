// Tests of dialect detection and coverage checks on recorded (and, for vLLM and 2025 LiteLLM, constructed)
// expositions in tests/dialect/testdata (see its README for where each comes from).
#include "dialect/detect.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace inferscope::dialect {
namespace {

using metrics::ExpositionTextFormat;
using metrics::ParsedExposition;

ParsedExposition load(const std::string& name) {
  const std::string path = std::string(INFERSCOPE_SOURCE_DIR) + "/tests/dialect/testdata/" + name;
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  auto parsed = metrics::parse_exposition(text.str(), ExpositionTextFormat::kPrometheus004);
  if (!parsed) ADD_FAILURE() << path << ": " << parsed.error().message;
  return parsed ? *parsed : ParsedExposition{};
}

ParsedExposition parse(std::string_view text) {
  auto parsed = metrics::parse_exposition(text, ExpositionTextFormat::kPrometheus004);
  if (!parsed) ADD_FAILURE() << parsed.error().message;
  return parsed ? *parsed : ParsedExposition{};
}

template <class T>
bool contains(const std::vector<T>& items, const T& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

std::vector<std::string> missing_names(const std::vector<MissingMetric>& missing) {
  std::vector<std::string> names;
  for (const MissingMetric& m : missing) names.push_back(std::string(to_string(m.role)) + "=" + m.metric);
  return names;
}

// Tests the real llama.cpp b4748 exposition: dialect, older set, counters present, traps named.
TEST(DetectTest, LlamaCppB4748) {
  const ParsedExposition e = load("llamacpp-b4748-metrics.txt");
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kLlamaCpp) << d.evidence;
  ASSERT_EQ(d.found.size(), 1u);
  EXPECT_EQ(d.found[0].families, 12u);
  EXPECT_NE(d.found[0].variant.find("older set"), std::string::npos);

  const Coverage c = check_coverage(e, DialectId::kLlamaCpp);
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_names(c.missing));
  EXPECT_TRUE(c.optional_missing.empty());
  for (Role role : {Role::kPrefillPerToken, Role::kTpot, Role::kWaiting, Role::kRunning, Role::kKvUsage,
                    Role::kPromptTokens, Role::kGenerationTokens}) {
    EXPECT_TRUE(contains(c.present, role)) << to_string(role);
  }
  EXPECT_TRUE(contains(c.unsupported, Role::kE2e));
  EXPECT_TRUE(contains(c.unsupported, Role::kTtft));
  EXPECT_FALSE(c.missing_latency());
  ASSERT_EQ(c.deprecated.size(), 3u);
  EXPECT_EQ(c.deprecated[0].name, "llamacpp:prompt_tokens_seconds");
}

// Tests the newer llama.cpp set: KV gauges gone is an optional absence, not a missing metric.
TEST(DetectTest, LlamaCppNewerSetWithoutKvGauges) {
  const ParsedExposition e = parse(
      "# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total 10\n"
      "# TYPE llamacpp:prompt_seconds_total counter\nllamacpp:prompt_seconds_total 0.5\n"
      "# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total 20\n"
      "# TYPE llamacpp:tokens_predicted_seconds_total counter\nllamacpp:tokens_predicted_seconds_total 1\n"
      "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 0\n"
      "# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred 0\n"
      "# TYPE llamacpp:n_tokens_max counter\nllamacpp:n_tokens_max 512\n");
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kLlamaCpp);
  EXPECT_NE(d.found[0].variant.find("newer set"), std::string::npos);
  const Coverage c = check_coverage(e, DialectId::kLlamaCpp);
  EXPECT_TRUE(c.missing.empty());
  ASSERT_EQ(c.optional_missing.size(), 1u);
  EXPECT_EQ(c.optional_missing[0].role, Role::kKvUsage);
}

// Tests a counter ratio with only one half exposed: the role is missing, not present.
TEST(DetectTest, CounterRatioNeedsBothHalves) {
  const ParsedExposition e = parse("# TYPE llamacpp:tokens_predicted_seconds_total counter\n"
                                   "llamacpp:tokens_predicted_seconds_total 1\n");
  const Coverage c = check_coverage(e, DialectId::kLlamaCpp);
  EXPECT_FALSE(contains(c.present, Role::kTpot));
  EXPECT_TRUE(contains(missing_names(c.missing), std::string("tpot=llamacpp:tokens_predicted_seconds_total")));
}

// Tests today's vLLM names: full coverage, nothing renamed.
TEST(DetectTest, VllmCurrentNames) {
  const ParsedExposition e = load("vllm-v1-0.12-constructed-metrics.txt");
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kVllm) << d.evidence;
  EXPECT_EQ(d.found[0].variant, "");
  const Coverage c = check_coverage(e, DialectId::kVllm);
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_names(c.missing));
  EXPECT_TRUE(c.optional_missing.empty());
  EXPECT_TRUE(c.renamed.empty());
  EXPECT_TRUE(c.without_series.empty());
  // Everything but the speculative-decoding series, which exist only while speculation is on.
  std::size_t always = 0;
  for (const MetricBinding& b : dialect(DialectId::kVllm).bindings) always += b.presence != Presence::kFeature;
  EXPECT_EQ(c.present.size(), always);
  EXPECT_FALSE(contains(c.present, Role::kSpecAcceptedTokens));
}

// Tests a vLLM past every removal (constructed: two data-parallel engines, speculative decoding,
// prompt-token provenance; no vllm:gpu_*, no vllm:time_per_output_token_seconds): detected as
// vLLM on its current names, every role present, none missing or renamed, latency included.
TEST(DetectTest, VllmPostRemovalNamesOnly) {
  const ParsedExposition e = load("vllm-v1-2026-dp2-constructed-metrics.txt");
  for (const auto& family : e.families) {
    EXPECT_FALSE(family.name.starts_with("vllm:gpu_")) << family.name;
    EXPECT_NE(family.name, "vllm:time_per_output_token_seconds");
  }
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kVllm) << d.evidence;
  EXPECT_EQ(d.found[0].variant, "");
  const Coverage c = check_coverage(e, DialectId::kVllm);
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_names(c.missing));
  EXPECT_TRUE(c.renamed.empty());
  for (Role latency : {Role::kE2e, Role::kTtft, Role::kQueue, Role::kPrefill, Role::kDecode, Role::kItl, Role::kTpot})
    EXPECT_TRUE(contains(c.present, latency)) << to_string(latency);
  // Speculative decoding's too; the NIXL KV connector's (P/D only) are absent and not missing.
  EXPECT_EQ(c.present.size(), dialect(DialectId::kVllm).bindings.size() - 2);
  EXPECT_FALSE(contains(c.present, Role::kKvTransfer));
  EXPECT_TRUE(c.optional_missing.empty()) << ::testing::PrintToString(missing_names(c.optional_missing));
}

// Tests the renamed-metric trap: an older vLLM still on the old names.
TEST(DetectTest, VllmOldNamesAreReportedAsRenamed) {
  const ParsedExposition e = load("vllm-v1-0.8-constructed-metrics.txt");
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kVllm);
  EXPECT_NE(d.found[0].variant.find("before 0.11"), std::string::npos) << d.found[0].variant;
  const Coverage c = check_coverage(e, DialectId::kVllm);
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_names(c.missing));
  std::vector<std::string> renamed;
  for (const RenamedMetric& r : c.renamed) {
    EXPECT_FALSE(r.current_present) << r.legacy;
    renamed.push_back(r.legacy + "->" + r.current);
  }
  EXPECT_TRUE(contains(renamed, std::string("vllm:gpu_cache_usage_perc->vllm:kv_cache_usage_perc")));
  EXPECT_TRUE(contains(renamed, std::string("vllm:time_per_output_token_seconds->vllm:inter_token_latency_seconds")));
  EXPECT_TRUE(contains(renamed, std::string("vllm:gpu_prefix_cache_hits_total->vllm:prefix_cache_hits_total")));
  EXPECT_TRUE(contains(c.present, Role::kKvUsage));  // the data is there under its old name
  ASSERT_EQ(c.optional_missing.size(), 1u);
  EXPECT_EQ(c.optional_missing[0].role, Role::kTpot);
}

// Tests a vLLM that lost its latency histograms (disabled or renamed away): latency is missing.
TEST(DetectTest, VllmWithoutLatencyFamiliesLacksLatency) {
  const ParsedExposition e = parse(
      "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\",engine=\"0\"} 0.0\n"
      "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"m\",engine=\"0\"} 0.0\n");
  const Coverage c = check_coverage(e, DialectId::kVllm);
  EXPECT_TRUE(c.missing_latency());
  EXPECT_TRUE(contains(missing_names(c.missing), std::string("e2e=vllm:e2e_request_latency_seconds")));
}

std::vector<std::string> renamed_names(const Coverage& c) {
  std::vector<std::string> names;
  for (const RenamedMetric& r : c.renamed) names.push_back(r.legacy + "->" + r.current);
  return names;
}

std::vector<std::string> deprecated_names(const Coverage& c) {
  std::vector<std::string> names;
  for (const DeprecatedUse& d : c.deprecated) names.push_back(d.name);
  return names;
}

// Tests the real 2026 SGLang scrape: every current name, per-stage histogram, 4xx responses as
// client errors, traps named.
TEST(DetectTest, SglangRecorded2026) {
  const ParsedExposition e = load("sglang-main2026-qwen3.8-flash-next-metrics.txt");
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kSglang) << d.evidence;
  ASSERT_EQ(d.found.size(), 1u);
  EXPECT_EQ(d.found[0].variant, "");
  const Coverage c = check_coverage(e, DialectId::kSglang);
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_names(c.missing));
  EXPECT_TRUE(c.optional_missing.empty()) << ::testing::PrintToString(missing_names(c.optional_missing));
  EXPECT_TRUE(c.renamed.empty()) << ::testing::PrintToString(renamed_names(c));
  EXPECT_EQ(c.present.size(), dialect(DialectId::kSglang).bindings.size());
  for (Role role : {Role::kQueue, Role::kItl, Role::kStage, Role::kWaiting, Role::kKvUsage, Role::kRequests,
                    Role::kClientErrors, Role::kPromptLength}) {
    EXPECT_FALSE(contains(c.without_series, role)) << to_string(role);
  }
  EXPECT_TRUE(contains(c.unsupported, Role::kErrors));
  EXPECT_TRUE(contains(c.unsupported, Role::kPrefill));
  EXPECT_TRUE(contains(c.unsupported, Role::kGpuUtilization));
  EXPECT_EQ(deprecated_names(c), (std::vector<std::string>{"sglang:gen_throughput", "sglang:cache_hit_rate"}));
}

// Tests SGLang 0.4 (its documentation's scrape): ITL under its older TPOT name, no queue
// histogram and no request counter (optional absences), nothing expected missing.
TEST(DetectTest, SglangRecorded04) {
  const ParsedExposition e = load("sglang-0.4-llama-3.1-8b-metrics.txt");
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kSglang) << d.evidence;
  EXPECT_NE(d.found[0].variant.find("before inter_token_latency_seconds"), std::string::npos) << d.found[0].variant;
  const Coverage c = check_coverage(e, DialectId::kSglang);
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_names(c.missing));
  EXPECT_EQ(renamed_names(c), (std::vector<std::string>{
                                  "sglang:time_per_output_token_seconds->sglang:inter_token_latency_seconds"}));
  EXPECT_FALSE(c.renamed[0].current_present);
  EXPECT_TRUE(contains(c.present, Role::kItl));
  EXPECT_TRUE(contains(missing_names(c.optional_missing), std::string("queue=sglang:queue_time_seconds")));
  EXPECT_TRUE(contains(missing_names(c.optional_missing), std::string("requests=sglang:num_requests_total")));
  EXPECT_EQ(deprecated_names(c), (std::vector<std::string>{"sglang:gen_throughput", "sglang:cache_hit_rate",
                                                           "sglang:func_latency_seconds"}));
}

// Tests SGLang v0.3.5 (the first exporter): every role it has is read under its old name.
TEST(DetectTest, SglangRecorded035) {
  const ParsedExposition e = load("sglang-0.3.5-gemma-2-9b-it-metrics.txt");
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kSglang) << d.evidence;
  EXPECT_NE(d.found[0].variant.find("v0.3.5"), std::string::npos) << d.found[0].variant;
  const Coverage c = check_coverage(e, DialectId::kSglang);
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_names(c.missing));
  const auto renamed = renamed_names(c);
  for (const char* pair : {"sglang:waiting_request_latency_seconds->sglang:queue_time_seconds",
                           "sglang:time_per_output_token_seconds->sglang:inter_token_latency_seconds",
                           "sglang:num_requests_waiting->sglang:num_queue_reqs", "sglang:queue_req->sglang:num_queue_reqs",
                           "sglang:num_requests_running->sglang:num_running_reqs",
                           "sglang:request_prompt_tokens->sglang:prompt_tokens_histogram",
                           "sglang:request_generation_tokens->sglang:generation_tokens_histogram"}) {
    EXPECT_TRUE(contains(renamed, std::string(pair))) << pair << " in " << ::testing::PrintToString(renamed);
  }
  for (Role role : {Role::kE2e, Role::kTtft, Role::kQueue, Role::kItl, Role::kWaiting, Role::kRunning, Role::kKvUsage}) {
    EXPECT_TRUE(contains(c.present, role)) << to_string(role);
    EXPECT_FALSE(contains(c.without_series, role)) << to_string(role);
  }
}

// Tests the real mid-2026 LiteLLM proxy scrape: a gateway with every role of the table, health
// checks excluded from the series that count, 4xx failures only (so errors have no series).
TEST(DetectTest, LitellmRecorded2026) {
  const ParsedExposition e = load("litellm-2026-06-metrics.txt");
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kLitellm) << d.evidence;
  ASSERT_EQ(d.found.size(), 1u);
  EXPECT_EQ(d.found[0].variant, "");
  const Coverage c = check_coverage(e, DialectId::kLitellm);
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_names(c.missing));
  EXPECT_TRUE(c.optional_missing.empty()) << ::testing::PrintToString(missing_names(c.optional_missing));
  EXPECT_EQ(c.present.size(), dialect(DialectId::kLitellm).bindings.size());
  for (Role role : {Role::kE2e, Role::kInference, Role::kUpstreamTtft, Role::kRequests, Role::kClientErrors,
                    Role::kPromptTokens}) {
    EXPECT_FALSE(contains(c.without_series, role)) << to_string(role);
  }
  EXPECT_TRUE(contains(c.without_series, Role::kErrors));
  for (Role role : {Role::kWaiting, Role::kKvUsage, Role::kGpuUtilization, Role::kDecode}) {
    EXPECT_TRUE(contains(c.unsupported, role)) << to_string(role);
  }
  EXPECT_EQ(deprecated_names(c),
            (std::vector<std::string>{"litellm_requests_metric_total", "litellm_llm_api_failed_requests_metric_total",
                                      "litellm_deployment_latency_per_output_token"}));
}

// Tests a 2025 LiteLLM proxy (constructed, see testdata/README.md): queue time and the in-flight
// gauge are optional absences, the variant says why, and a 5xx failure is an error series.
TEST(DetectTest, LitellmConstructed2025) {
  const ParsedExposition e = load("litellm-2025-constructed-metrics.txt");
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kLitellm) << d.evidence;
  EXPECT_NE(d.found[0].variant.find("before Dec 2025"), std::string::npos) << d.found[0].variant;
  const Coverage c = check_coverage(e, DialectId::kLitellm);
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_names(c.missing));
  EXPECT_EQ(missing_names(c.optional_missing),
            (std::vector<std::string>{"gateway_queue=litellm_request_queue_time_seconds",
                                      "in_flight=litellm_in_flight_requests"}));
  EXPECT_FALSE(contains(c.without_series, Role::kErrors));
  EXPECT_TRUE(contains(c.without_series, Role::kClientErrors));
}

// Tests that a health-check-only LiteLLM series does not count as traffic.
TEST(DetectTest, LitellmHealthChecksAreNoTraffic) {
  const ParsedExposition e = parse(
      "# TYPE litellm_proxy_total_requests_metric_total counter\n"
      "litellm_proxy_total_requests_metric_total{hashed_api_key=\"litellm-internal-health-check\","
      "status_code=\"200\"} 8268.0\n");
  const Coverage c = check_coverage(e, DialectId::kLitellm);
  EXPECT_TRUE(contains(c.present, Role::kRequests));
  EXPECT_TRUE(contains(c.without_series, Role::kRequests));
}

// Tests the real `inferscope serve` exposition: inferscope with vLLM and simulated DCGM families.
TEST(DetectTest, InferscopeServe) {
  const ParsedExposition e = load("inferscope-serve-metrics.txt");
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kInferscope) << d.evidence;
  std::vector<DialectId> ids;
  for (const DetectedDialect& f : d.found) ids.push_back(f.id);
  EXPECT_EQ(ids, (std::vector<DialectId>{DialectId::kInferscope, DialectId::kVllm, DialectId::kDcgm}));
  EXPECT_EQ(d.found[2].variant, "simulated by inferscope serve");
  const Coverage c = check_coverage(e, DialectId::kInferscope);
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_names(c.missing));
  for (Role role : {Role::kE2e, Role::kTtft, Role::kQueue, Role::kPrefill, Role::kDecode, Role::kWaiting,
                    Role::kKvUsage, Role::kRequests}) {
    EXPECT_TRUE(contains(c.present, role)) << to_string(role);
  }
  EXPECT_FALSE(contains(c.without_series, Role::kE2e));
  EXPECT_TRUE(check_coverage(e, DialectId::kVllm).missing.empty());
  const Coverage gpu = check_coverage(e, DialectId::kDcgm);
  EXPECT_TRUE(gpu.missing.empty()) << ::testing::PrintToString(missing_names(gpu.missing));
}

// Tests inferscope serve's disaggregated series (docs/disaggregation.md): a plain serve declares the
// stage histogram but has no route / kv_transfer series and no pool gauges, and none of them is
// present, missing or "no series yet"; a disaggregated one (constructed here with the series29 names)
// has each of them present with series.
TEST(DetectTest, InferscopeServeDisaggregatedRolesAreFeatures) {
  const Role disagg[] = {Role::kRoute, Role::kKvTransfer, Role::kKvTransferBytes, Role::kRoutePrefixHit,
                         Role::kPoolWaiting, Role::kEndpointLoad};
  const Coverage plain = check_coverage(load("inferscope-serve-metrics.txt"), DialectId::kInferscope);
  for (Role role : disagg) {
    EXPECT_FALSE(contains(plain.present, role)) << to_string(role);
    EXPECT_FALSE(contains(plain.without_series, role)) << to_string(role);
    for (const auto* list : {&plain.missing, &plain.optional_missing})
      for (const MissingMetric& m : *list) EXPECT_NE(m.role, role) << to_string(role);
  }
  // Constructed: serve --prefill-workers 1 --decode-workers 2 after a few requests.
  const ParsedExposition e = parse(R"(# TYPE inferscope_stage_duration_seconds histogram
inferscope_stage_duration_seconds_bucket{model="sim",stage="route",le="+Inf"} 4
inferscope_stage_duration_seconds_sum{model="sim",stage="route"} 0.002
inferscope_stage_duration_seconds_count{model="sim",stage="route"} 4
inferscope_stage_duration_seconds_bucket{model="sim",stage="kv_transfer",le="+Inf"} 4
inferscope_stage_duration_seconds_sum{model="sim",stage="kv_transfer"} 0.08
inferscope_stage_duration_seconds_count{model="sim",stage="kv_transfer"} 4
# TYPE inferscope_kv_transfer_bytes histogram
inferscope_kv_transfer_bytes_bucket{le="+Inf"} 4
inferscope_kv_transfer_bytes_sum 4.2e7
inferscope_kv_transfer_bytes_count 4
# TYPE inferscope_router_prefix_hit_ratio histogram
inferscope_router_prefix_hit_ratio_bucket{le="+Inf"} 4
inferscope_router_prefix_hit_ratio_sum 1.2
inferscope_router_prefix_hit_ratio_count 4
# TYPE inferscope_pool_requests_waiting gauge
inferscope_pool_requests_waiting{pool="prefill"} 1
inferscope_pool_requests_waiting{pool="decode"} 0
# TYPE inferscope_endpoint_requests gauge
inferscope_endpoint_requests{pool="prefill",endpoint="prefill-0"} 2
inferscope_endpoint_requests{pool="decode",endpoint="decode-0"} 1
inferscope_endpoint_requests{pool="decode",endpoint="decode-1"} 1
)");
  const Coverage c = check_coverage(e, DialectId::kInferscope);
  for (Role role : disagg) {
    EXPECT_TRUE(contains(c.present, role)) << to_string(role);
    EXPECT_FALSE(contains(c.without_series, role)) << to_string(role);
  }
}

// Tests an idle `inferscope serve` (no request yet): request families are declared without
// series, which is "present, no series yet", not missing.
TEST(DetectTest, InferscopeServeIdle) {
  const ParsedExposition e = load("inferscope-serve-idle-metrics.txt");
  ASSERT_EQ(detect_dialects(e).primary, DialectId::kInferscope);
  const Coverage c = check_coverage(e, DialectId::kInferscope);
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_names(c.missing));
  EXPECT_TRUE(contains(c.without_series, Role::kE2e));
  EXPECT_TRUE(contains(c.without_series, Role::kRequests));
  EXPECT_FALSE(contains(c.without_series, Role::kWaiting));  // engine gauges exist from startup
}

// Tests node-exporter and an exposition of no known dialect (Prometheus' own /metrics).
TEST(DetectTest, NodeExporterAndUnknown) {
  const ParsedExposition node = load("node-exporter-1.5-metrics.txt");
  EXPECT_EQ(detect_dialects(node).primary, DialectId::kNode);
  EXPECT_TRUE(check_coverage(node, DialectId::kNode).missing.empty());

  const Detection none = detect_dialects(parse("# TYPE prometheus_ready gauge\nprometheus_ready 1\n"));
  EXPECT_EQ(none.primary, std::nullopt);
  EXPECT_EQ(none.evidence, "no family of a known dialect");
  EXPECT_EQ(detect_dialects(ParsedExposition{}).primary, std::nullopt);
  // inferscope's own housekeeping families alone are no serving dialect.
  EXPECT_EQ(detect_dialects(parse("# TYPE inferscope_metrics_series_dropped_total counter\n"
                                  "inferscope_metrics_series_dropped_total{family=\"x\",reason=\"y\"} 0\n"))
                .primary,
            std::nullopt);
}

// Tests a Dynamo frontend with its KV router in process (constructed, see testdata/README.md):
// dynamo, the variant names the frontend, the router and the disaggregated worker pools; the route
// stage, the router's prefix hit, the per-pool queue and the per-worker load are present; only the
// workers' KV usage is an optional absence, and KV transfer (a backend feature) is not missing.
TEST(DetectTest, DynamoFrontendWithKvRouter) {
  const ParsedExposition e = load("dynamo-2026-frontend-kv-router-constructed-metrics.txt");
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kDynamo) << d.evidence;
  ASSERT_EQ(d.found.size(), 1u);
  EXPECT_EQ(d.found[0].variant, "frontend, KV router, disaggregated prefill/decode workers");
  const Coverage c = check_coverage(e, DialectId::kDynamo);
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_names(c.missing));
  EXPECT_EQ(missing_names(c.optional_missing),
            (std::vector<std::string>{"kv_usage=dynamo_component_gpu_cache_usage_percent"}));
  for (Role role : {Role::kE2e, Role::kTtft, Role::kItl, Role::kPreprocess, Role::kRoute, Role::kPostprocess,
                    Role::kRoutePrefixHit, Role::kPoolWaiting, Role::kEndpointLoad, Role::kRequests, Role::kErrors,
                    Role::kClientErrors, Role::kInFlight}) {
    EXPECT_TRUE(contains(c.present, role)) << to_string(role);
    EXPECT_FALSE(contains(c.without_series, role)) << to_string(role);
  }
  EXPECT_FALSE(contains(c.present, Role::kKvTransfer));
  EXPECT_TRUE(contains(c.unsupported, Role::kPrefill));  // no per-request prefill time at the frontend
  EXPECT_TRUE(c.renamed.empty());
}

// Tests a Dynamo TRT-LLM prefill worker scraped alone: dynamo, a worker; its KV transfer time and
// bytes and KV usage are present, and the frontend's request families are reported missing (a
// worker is no substitute for the frontend target).
TEST(DetectTest, DynamoTrtllmWorkerAlone) {
  const ParsedExposition e = load("dynamo-2026-trtllm-prefill-worker-constructed-metrics.txt");
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kDynamo) << d.evidence;
  EXPECT_EQ(d.found[0].variant, "worker");
  const Coverage c = check_coverage(e, DialectId::kDynamo);
  for (Role role : {Role::kKvTransfer, Role::kKvTransferBytes, Role::kKvUsage}) {
    EXPECT_TRUE(contains(c.present, role)) << to_string(role);
    EXPECT_FALSE(contains(c.without_series, role)) << to_string(role);
  }
  EXPECT_TRUE(c.missing_latency());
  const auto missing = missing_names(c.missing);
  EXPECT_TRUE(contains(missing, std::string("e2e=dynamo_frontend_request_duration_seconds")))
      << ::testing::PrintToString(missing);
}

// Tests an llm-d router of 2026 (constructed): llm-d on its llm_d_router_epp_* names, nothing
// missing or renamed; the route stage, prefix-indexer hit ratio, pool queue and per-endpoint queue
// are present; the flow-control queue (opt-in) is the one optional absence.
TEST(DetectTest, LlmdRouter2026) {
  const ParsedExposition e = load("llm-d-router-2026-constructed-metrics.txt");
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kLlmd) << d.evidence;
  ASSERT_EQ(d.found.size(), 1u);
  EXPECT_EQ(d.found[0].variant, "llm_d_router_epp_* and the GIE-era inference_objective_*/inference_pool_* names");
  const Coverage c = check_coverage(e, DialectId::kLlmd);
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_names(c.missing));
  EXPECT_EQ(missing_names(c.optional_missing),
            (std::vector<std::string>{
                "gateway_queue=inference_extension_flow_control_request_queue_duration_seconds"}));
  EXPECT_TRUE(c.renamed.empty()) << ::testing::PrintToString(renamed_names(c));
  for (Role role : {Role::kE2e, Role::kTtft, Role::kTpot, Role::kRoute, Role::kRoutePrefixHit, Role::kPoolWaiting,
                    Role::kEndpointLoad, Role::kWaiting, Role::kKvUsage, Role::kRequests, Role::kErrors}) {
    EXPECT_TRUE(contains(c.present, role)) << to_string(role);
    EXPECT_FALSE(contains(c.without_series, role)) << to_string(role);
  }
  EXPECT_TRUE(contains(c.unsupported, Role::kKvTransfer));  // vLLM's NIXL series, on the decode pods
}

// Tests a GIE-era EPP (constructed): llm-d, variant "GIE-era names", each old name reported as
// the rename of its llm_d_router_epp_* successor (only the old one exposed), nothing missing.
TEST(DetectTest, LlmdGieEra2025) {
  const ParsedExposition e = load("llm-d-gie-2025-constructed-metrics.txt");
  const Detection d = detect_dialects(e);
  ASSERT_EQ(d.primary, DialectId::kLlmd) << d.evidence;
  EXPECT_NE(d.found[0].variant.find("GIE-era names"), std::string::npos) << d.found[0].variant;
  const Coverage c = check_coverage(e, DialectId::kLlmd);
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_names(c.missing));
  EXPECT_EQ(c.renamed.size(), 10u) << ::testing::PrintToString(renamed_names(c));
  for (const RenamedMetric& r : c.renamed) EXPECT_FALSE(r.current_present) << r.legacy;
  EXPECT_TRUE(contains(renamed_names(c), std::string("inference_objective_request_duration_seconds->"
                                                     "llm_d_router_epp_request_duration_seconds")));
  EXPECT_TRUE(contains(c.present, Role::kE2e));
  EXPECT_FALSE(contains(c.without_series, Role::kE2e));
}

// Tests a gateway: inferscope request families with gateway stages and no engine gauges.
TEST(DetectTest, GatewayFromStages) {
  const ParsedExposition e = parse(
      "# TYPE inferscope_stage_duration_seconds histogram\n"
      "inferscope_stage_duration_seconds_bucket{model=\"m\",stage=\"upstream_ttft\",le=\"+Inf\"} 1\n"
      "inferscope_stage_duration_seconds_sum{model=\"m\",stage=\"upstream_ttft\"} 0.2\n"
      "inferscope_stage_duration_seconds_count{model=\"m\",stage=\"upstream_ttft\"} 1\n");
  const Detection d = detect_dialects(e);
  EXPECT_EQ(d.primary, DialectId::kGateway);
  const Coverage c = check_coverage(e, DialectId::kGateway);
  EXPECT_TRUE(contains(c.present, Role::kUpstreamTtft));
  EXPECT_TRUE(contains(c.without_series, Role::kGatewayQueue));  // family declared, no such stage yet
}

// Tests the fixed-matcher evaluator used for lazy stage series.
TEST(DetectTest, MatchersHold) {
  const std::vector<metrics::ParsedLabel> labels = {{"stage", "queue"}, {"status_class", "5xx"}};
  EXPECT_TRUE(matchers_hold("", labels));
  EXPECT_TRUE(matchers_hold(R"(stage="queue")", labels));
  EXPECT_FALSE(matchers_hold(R"(stage="prefill")", labels));
  EXPECT_TRUE(matchers_hold(R"(stage="queue",status_class!="4xx")", labels));
  EXPECT_TRUE(matchers_hold(R"(status_class=~"5..")", labels));
  EXPECT_FALSE(matchers_hold(R"(status_class!~"5..")", labels));
  EXPECT_TRUE(matchers_hold(R"(missing="")", labels));
  EXPECT_FALSE(matchers_hold(R"(stage="queue)", labels));
  EXPECT_FALSE(matchers_hold(R"(stage=queue)", labels));
}

}  // namespace
}  // namespace inferscope::dialect
