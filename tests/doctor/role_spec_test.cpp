// Tests the doctor's role mapping (from src/dialect) on recorded and constructed expositions:
// llama.cpp b4748, SGLang v0.3.5/0.4/2026 and LiteLLM 2026-06 (recorded), vLLM V1 0.12 and 0.8
// (constructed from the reference), inferscope serve, and the series of up's queue collector as its
// own QueueMetrics writes them.
#include "doctor/role_spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "doctor/check_metrics.h"
#include "doctor/exposition_sampling.h"
#include "doctor/sampled_roles.h"
#include "queue/queue_metrics.h"
#include "support/registry_scrape.h"

namespace inferscope::doctor {
namespace {

FetchedExposition load(const std::string& name, const std::string& dir = "tests/dialect/testdata") {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/" + dir + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  FetchedExposition f;
  f.text = text.str();
  auto parsed = metrics::parse_exposition(f.text, metrics::ExpositionTextFormat::kPrometheus004);
  EXPECT_TRUE(parsed) << name << ": " << (parsed ? "" : parsed.error().message);
  if (parsed) f.parsed = std::move(*parsed);
  return f;
}

const RoleSpec* find(const std::vector<RoleSpec>& specs, const std::string& id) {
  for (const auto& s : specs)
    if (s.id == id) return &s;
  return nullptr;
}

// Tests that llama.cpp's counter pairs become per-token latencies and nothing expected is missing.
TEST(RoleSpecTest, LlamaCppRecorded) {
  FetchedExposition f = load("llamacpp-b4748-metrics.txt");
  MetricsCheck c = check_exposition("llama", f);
  ASSERT_EQ(c.dialects, std::vector<std::string>{"llamacpp"});
  EXPECT_TRUE(c.missing.empty()) << to_text(c);
  auto specs = role_specs_for(c.dialects);
  const RoleSpec* tpot = find(specs, "tpot");
  ASSERT_NE(tpot, nullptr);
  EXPECT_EQ(tpot->kind, RoleKind::kCounterRatio);
  EXPECT_EQ(tpot->metrics.front(), "llamacpp:tokens_predicted_seconds_total");
  EXPECT_EQ(tpot->denominator, "llamacpp:tokens_predicted_total");
  EXPECT_NE(find(specs, "prefill_time_per_token"), nullptr);
  EXPECT_EQ(find(specs, "e2e"), nullptr);  // llama.cpp has no latency histograms
}

// Tests that vLLM's phases become stages, and that the 0.8-era names are read and reported renamed.
TEST(RoleSpecTest, VllmCurrentAndRenamed) {
  FetchedExposition now = load("vllm-v1-0.12-constructed-metrics.txt");
  MetricsCheck c = check_exposition("vllm", now);
  ASSERT_FALSE(c.dialects.empty());
  EXPECT_EQ(c.dialects.front(), "vllm");
  EXPECT_TRUE(c.missing.empty()) << to_text(c);
  EXPECT_TRUE(c.renamed.empty()) << to_text(c);
  EXPECT_FALSE(c.dashboard_gaps.empty()) << "old names such as vllm:gpu_cache_usage_perc are gone in 0.12";
  auto specs = role_specs_for(c.dialects);
  for (const char* stage : {"queue", "prefill", "decode"}) {
    const RoleSpec* s = find(specs, stage);
    ASSERT_NE(s, nullptr) << stage;
    EXPECT_EQ(s->group, RoleGroup::kStage);
    EXPECT_EQ(s->model_label, "model_name");
  }

  FetchedExposition old = load("vllm-v1-0.8-constructed-metrics.txt");
  MetricsCheck o = check_exposition("vllm-0.8", old);
  bool kv_renamed = false;
  for (const auto& r : o.renamed) kv_renamed |= r.find("vllm:gpu_cache_usage_perc") != std::string::npos;
  EXPECT_TRUE(kv_renamed) << to_text(o);
}

// Tests `--check-metrics` on a vLLM past every removal (constructed, two data-parallel engines):
// read as vLLM, no role missing (latency roles included) and nothing reported renamed.
TEST(RoleSpecTest, VllmPostRemovalNamesOnly) {
  MetricsCheck c = check_exposition("vllm-2026", load("vllm-v1-2026-dp2-constructed-metrics.txt"));
  ASSERT_EQ(c.dialects, std::vector<std::string>{"vllm"}) << to_text(c);
  EXPECT_TRUE(c.missing.empty()) << to_text(c);
  EXPECT_TRUE(c.renamed.empty()) << to_text(c);
  auto specs = role_specs_for(c.dialects);
  for (const char* latency : {"e2e", "ttft", "tpot", "itl", "queue", "prefill", "decode"})
    EXPECT_NE(find(specs, latency), nullptr) << latency;
}

// Tests SGLang on its three recordings (../shared/samples, copied to tests/dialect/testdata):
// detected alone, nothing expected missing, the 2026 build on current names, v0.3.5 and 0.4 read
// under their old names and reported renamed; the queue stage reads the current name first.
TEST(RoleSpecTest, SglangRecorded) {
  MetricsCheck now = check_exposition("sglang", load("sglang-main2026-qwen3.8-flash-next-metrics.txt"));
  ASSERT_EQ(now.dialects, std::vector<std::string>{"sglang"});
  EXPECT_TRUE(now.missing.empty()) << to_text(now);
  EXPECT_TRUE(now.renamed.empty()) << to_text(now);
  MetricsCheck v04 = check_exposition("sglang-0.4", load("sglang-0.4-llama-3.1-8b-metrics.txt"));
  ASSERT_EQ(v04.dialects, std::vector<std::string>{"sglang"});
  EXPECT_TRUE(v04.missing.empty()) << to_text(v04);
  EXPECT_EQ(v04.renamed, std::vector<std::string>{
                             "sglang:time_per_output_token_seconds (renamed to sglang:inter_token_latency_seconds)"});
  MetricsCheck v035 = check_exposition("sglang-0.3.5", load("sglang-0.3.5-gemma-2-9b-it-metrics.txt"));
  EXPECT_TRUE(v035.missing.empty()) << to_text(v035);
  EXPECT_NE(to_text(v035).find("sglang:waiting_request_latency_seconds (renamed to sglang:queue_time_seconds)"),
            std::string::npos)
      << to_text(v035);

  auto specs = role_specs_for(now.dialects);
  const RoleSpec* queue = find(specs, "queue");
  ASSERT_NE(queue, nullptr);
  EXPECT_EQ(queue->group, RoleGroup::kStage);
  EXPECT_EQ(queue->metrics, (std::vector<std::string>{"sglang:queue_time_seconds",
                                                      "sglang:waiting_request_latency_seconds"}));
  EXPECT_EQ(queue->model_label, "model_name");
  EXPECT_FALSE(queue->expected);  // absent in 0.4: not metrics_missing
  const RoleSpec* e2e = find(specs, "e2e");
  ASSERT_NE(e2e, nullptr);
  EXPECT_TRUE(e2e->expected);
  EXPECT_EQ(find(specs, "prefill"), nullptr);  // SGLang has no per-request prefill/decode histograms
}

// Tests the validator's severities on the SGLang 2026 recording: two gauges carry an `le` label,
// which Prometheus ingests and nothing inferscope reads, so the verdict stays healthy with a
// warning naming each (the validator stops at its first finding; each family is checked alone).
TEST(RoleSpecTest, ExpositionQuirkIsAWarning) {
  MetricsCheck now = check_exposition("sglang", load("sglang-main2026-qwen3.8-flash-next-metrics.txt"));
  EXPECT_EQ(now.verdict, "healthy") << to_text(now);
  EXPECT_TRUE(now.problems.empty()) << to_text(now);
  ASSERT_EQ(now.warnings.size(), 2u) << to_text(now);
  EXPECT_NE(now.warnings.front().find("label le on \"sglang:routing_key_running_req_count\" of a non-histogram family"),
            std::string::npos)
      << now.warnings.front();
  EXPECT_NE(to_text(now).find("exposition warnings (not counted against the verdict):"), std::string::npos);
  EXPECT_NE(now.warnings.back().find("sglang:routing_key_all_req_count"), std::string::npos) << now.warnings.back();
  EXPECT_EQ(to_json(now)["warnings"].size(), 2u);
}

// Tests what degrades the verdict: a family the dialect reads with broken buckets (the doctor,
// rules and panels would read wrong quantiles) and a duplicate series (Prometheus drops it), each
// found although a harmless quirk comes first in the text.
TEST(RoleSpecTest, BrokenReadFamilyAndDuplicatesAreProblems) {
  const std::string text =
      "# TYPE odd gauge\n"
      "odd{le=\"1\"} 1\n"
      "# TYPE inferscope_request_duration_seconds histogram\n"
      "inferscope_request_duration_seconds_bucket{model=\"m\",le=\"0.1\"} 5\n"
      "inferscope_request_duration_seconds_bucket{model=\"m\",le=\"1\"} 3\n"
      "inferscope_request_duration_seconds_bucket{model=\"m\",le=\"+Inf\"} 5\n"
      "inferscope_request_duration_seconds_sum{model=\"m\"} 1\n"
      "inferscope_request_duration_seconds_count{model=\"m\"} 5\n"
      "# TYPE other_total counter\n"
      "other_total 1\n"
      "other_total 2\n";
  FetchedExposition f;
  f.text = text;
  auto parsed = metrics::parse_exposition(f.text, metrics::ExpositionTextFormat::kPrometheus004);
  ASSERT_TRUE(parsed) << parsed.error().message;
  f.parsed = std::move(*parsed);
  MetricsCheck c = check_exposition("broken", f);
  EXPECT_EQ(c.verdict, "degraded") << to_text(c);
  ASSERT_EQ(c.problems.size(), 2u) << to_text(c);
  EXPECT_NE(c.problems[0].find("is read by the doctor, rules and panels"), std::string::npos) << c.problems[0];
  EXPECT_NE(c.problems[1].find("duplicate series"), std::string::npos) << c.problems[1];
  ASSERT_EQ(c.warnings.size(), 1u) << to_text(c);
  EXPECT_NE(c.warnings[0].find("nothing inferscope reads uses odd"), std::string::npos) << c.warnings[0];
}

// Tests LiteLLM's proxy on its recording: a gateway whose stages are the proxy's overhead and the
// upstream call, health checks filtered out of what counts, no model label on the request counters.
TEST(RoleSpecTest, LitellmRecorded) {
  MetricsCheck c = check_exposition("litellm", load("litellm-2026-06-metrics.txt"));
  ASSERT_EQ(c.dialects, std::vector<std::string>{"litellm"});
  EXPECT_TRUE(c.missing.empty()) << to_text(c);
  EXPECT_TRUE(c.renamed.empty()) << to_text(c);
  auto specs = role_specs_for(c.dialects);
  for (const char* stage : {"preprocess", "gateway_queue", "inference", "upstream_ttft"}) {
    const RoleSpec* s = find(specs, stage);
    ASSERT_NE(s, nullptr) << stage;
    EXPECT_EQ(s->group, RoleGroup::kStage) << stage;
    EXPECT_NE(s->matchers.find(R"(hashed_api_key!="litellm-internal-health-check")"), std::string::npos) << stage;
  }
  EXPECT_EQ(find(specs, "preprocess")->model_label, "");  // the overhead histogram says model_group
  EXPECT_EQ(find(specs, "inference")->model_label, "model");
  EXPECT_EQ(find(specs, "queue"), nullptr);  // the model servers' queues are not visible to the proxy
}

// Tests Dynamo (constructed frontend with its KV router, and a TRT-LLM worker; see
// tests/dialect/testdata/README.md) through --check-metrics: the frontend is dynamo with nothing
// expected missing, its route stage read from the frontend's stage histogram; the worker alone is
// dynamo too, lacking the frontend's families, with the kv_transfer stage.
TEST(RoleSpecTest, DynamoConstructed) {
  MetricsCheck frontend = check_exposition("dynamo", load("dynamo-2026-frontend-kv-router-constructed-metrics.txt"));
  ASSERT_EQ(frontend.dialects, std::vector<std::string>{"dynamo"});
  EXPECT_TRUE(frontend.missing.empty()) << to_text(frontend);
  EXPECT_TRUE(frontend.renamed.empty()) << to_text(frontend);
  auto specs = role_specs_for(frontend.dialects);
  const RoleSpec* route = find(specs, "route");
  ASSERT_NE(route, nullptr);
  EXPECT_EQ(route->group, RoleGroup::kStage);
  EXPECT_EQ(route->metrics.front(), "dynamo_frontend_stage_duration_seconds");
  EXPECT_EQ(route->matchers, R"(stage="route")");
  const RoleSpec* kv = find(specs, "kv_transfer");
  ASSERT_NE(kv, nullptr);
  EXPECT_EQ(kv->group, RoleGroup::kStage);
  EXPECT_EQ(kv->metrics.front(), "trtllm_kv_transfer_latency_seconds");
  EXPECT_EQ(find(specs, "e2e")->model_label, "model");
  for (const char* signal : {"kv_transfer_bytes", "route_prefix_hit"}) {
    const RoleSpec* s = find(specs, signal);
    ASSERT_NE(s, nullptr) << signal;
    EXPECT_EQ(s->group, RoleGroup::kSignal) << signal;
    EXPECT_EQ(s->kind, RoleKind::kHistogram) << signal;
  }
  EXPECT_EQ(find(specs, "kv_transfer_bytes")->unit, "bytes");

  MetricsCheck worker = check_exposition("worker", load("dynamo-2026-trtllm-prefill-worker-constructed-metrics.txt"));
  ASSERT_EQ(worker.dialects, std::vector<std::string>{"dynamo"});
  EXPECT_FALSE(worker.missing.empty()) << to_text(worker);
  EXPECT_EQ(worker.verdict, "degraded");
}

// Tests llm-d's router (constructed, 2026 names and GIE-era names) through --check-metrics: llm-d,
// nothing missing; the GIE-era EPP's names are reported as renamed; the route stage is the
// scheduler's e2e time.
TEST(RoleSpecTest, LlmdConstructed) {
  MetricsCheck now = check_exposition("llm-d", load("llm-d-router-2026-constructed-metrics.txt"));
  ASSERT_EQ(now.dialects, std::vector<std::string>{"llm-d"});
  EXPECT_TRUE(now.missing.empty()) << to_text(now);
  EXPECT_TRUE(now.renamed.empty()) << to_text(now);
  auto specs = role_specs_for(now.dialects);
  const RoleSpec* route = find(specs, "route");
  ASSERT_NE(route, nullptr);
  EXPECT_EQ(route->group, RoleGroup::kStage);
  EXPECT_EQ(route->metrics.front(), "inference_extension_scheduler_e2e_duration_seconds");
  EXPECT_EQ(route->model_label, "");  // the scheduler's histogram has no labels
  const RoleSpec* e2e = find(specs, "e2e");
  ASSERT_NE(e2e, nullptr);
  EXPECT_EQ(e2e->metrics, (std::vector<std::string>{"llm_d_router_epp_request_duration_seconds",
                                                     "inference_objective_request_duration_seconds"}));
  EXPECT_EQ(e2e->model_label, "model_name");

  MetricsCheck old = check_exposition("gie", load("llm-d-gie-2025-constructed-metrics.txt"));
  ASSERT_EQ(old.dialects, std::vector<std::string>{"llm-d"});
  EXPECT_TRUE(old.missing.empty()) << to_text(old);
  EXPECT_EQ(old.renamed.size(), 10u) << to_text(old);  // the pool queue (inference_pool_average_queue_size) too
}

// Tests that --check-metrics lists the roles the doctor reads on Dynamo's and llm-d's constructed
// fleets: the disaggregated stages, the per-pool waiting and per-endpoint load by their labels.
TEST(RoleSpecTest, CheckMetricsListsFleetRolesRead) {
  auto has = [](const MetricsCheck& c, const std::string& line) {
    return std::find(c.reads.begin(), c.reads.end(), line) != c.reads.end();
  };
  MetricsCheck dynamo = check_exposition("dynamo", load("dynamo-2026-frontend-kv-router-constructed-metrics.txt"));
  for (const char* line : {"e2e: dynamo_frontend_request_duration_seconds", "route: dynamo_frontend_stage_duration_seconds{stage=\"route\"}",
                           "pool_waiting: dynamo_frontend_router_queue_pending_requests (per worker_type)",
                           "endpoint_load: dynamo_frontend_worker_active_decode_blocks (per worker_type and worker_id)",
                           "route_prefix_hit: dynamo_component_router_kv_hit_rate"})
    EXPECT_TRUE(has(dynamo, line)) << line << "\n" << to_text(dynamo);
  MetricsCheck worker = check_exposition("trtllm", load("dynamo-2026-trtllm-prefill-worker-constructed-metrics.txt"));
  EXPECT_TRUE(has(worker, "kv_transfer: trtllm_kv_transfer_latency_seconds")) << to_text(worker);
  EXPECT_TRUE(has(worker, "kv_transfer_bytes: trtllm_kv_transfer_bytes")) << to_text(worker);
  MetricsCheck llmd = check_exposition("llm-d", load("llm-d-router-2026-constructed-metrics.txt"));
  for (const char* line : {"e2e: llm_d_router_epp_request_duration_seconds",
                           "route: inference_extension_scheduler_e2e_duration_seconds",
                           "pool_waiting: llm_d_router_epp_average_queue_size (per name)",
                           "endpoint_load: inference_pool_per_pod_queue_size (per name and model_server_pod)",
                           "route_prefix_hit: inference_extension_prefix_indexer_hit_ratio"})
    EXPECT_TRUE(has(llmd, line)) << line << "\n" << to_text(llmd);
  EXPECT_NE(to_text(llmd).find("roles the doctor reads:"), std::string::npos);
  EXPECT_EQ(to_json(llmd)["reads"].size(), llmd.reads.size());
}

// Tests that the doctor reads a disaggregated fleet's series in direct-scrape mode: two scrapes of
// a Dynamo frontend and worker (Dynamo's own names) give the route and kv_transfer stages' means
// over the window beside e2e, and the transfer size and the router's prefix hit as signals.
TEST(RoleSpecTest, DynamoStagesAreSampled) {
  auto exposition = [](double requests, double route_sum, double kv_sum) {
    const std::string n = std::to_string(requests);
    const std::string text =
        "# TYPE dynamo_frontend_request_duration_seconds histogram\n"
        "dynamo_frontend_request_duration_seconds_bucket{model=\"m\",le=\"+Inf\"} " + n + "\n"
        "dynamo_frontend_request_duration_seconds_sum{model=\"m\"} " + std::to_string(requests * 2.0) + "\n"
        "dynamo_frontend_request_duration_seconds_count{model=\"m\"} " + n + "\n"
        "# TYPE dynamo_frontend_stage_duration_seconds histogram\n"
        "dynamo_frontend_stage_duration_seconds_bucket{stage=\"route\",le=\"+Inf\"} " + n + "\n"
        "dynamo_frontend_stage_duration_seconds_sum{stage=\"route\"} " + std::to_string(route_sum) + "\n"
        "dynamo_frontend_stage_duration_seconds_count{stage=\"route\"} " + n + "\n"
        "# TYPE trtllm_kv_transfer_latency_seconds histogram\n"
        "trtllm_kv_transfer_latency_seconds_bucket{model_name=\"m\",le=\"+Inf\"} " + n + "\n"
        "trtllm_kv_transfer_latency_seconds_sum{model_name=\"m\"} " + std::to_string(kv_sum) + "\n"
        "trtllm_kv_transfer_latency_seconds_count{model_name=\"m\"} " + n + "\n"
        "# TYPE trtllm_kv_transfer_bytes histogram\n"
        "trtllm_kv_transfer_bytes_bucket{model_name=\"m\",le=\"+Inf\"} " + n + "\n"
        "trtllm_kv_transfer_bytes_sum{model_name=\"m\"} " + std::to_string(requests * 8e7) + "\n"
        "trtllm_kv_transfer_bytes_count{model_name=\"m\"} " + n + "\n"
        "# TYPE dynamo_component_router_kv_hit_rate histogram\n"
        "dynamo_component_router_kv_hit_rate_bucket{router_id=\"0\",le=\"+Inf\"} " + n + "\n"
        "dynamo_component_router_kv_hit_rate_sum{router_id=\"0\"} " + std::to_string(requests * 0.25) + "\n"
        "dynamo_component_router_kv_hit_rate_count{router_id=\"0\"} " + n + "\n";
    auto parsed = metrics::parse_exposition(text, metrics::ExpositionTextFormat::kPrometheus004);
    EXPECT_TRUE(parsed) << (parsed ? "" : parsed.error().message);
    return parsed ? *parsed : metrics::ParsedExposition{};
  };
  // 10 requests in the window: route 1 ms each, KV transfer 40 ms and 80 MB each, 25 % prefix hit.
  ScrapeRound first{1000, {exposition(100, 0.1, 4.0)}, 0};
  ScrapeRound second{1002, {exposition(110, 0.11, 4.4)}, 0};
  ASSERT_EQ(detect_dialects(metric_names(second.expositions.front())), std::vector<std::string>{"dynamo"});
  SamplingReport report;
  SampledRoles sampled = sample_rounds({first, second}, "", report);
  Snapshot snap = build_snapshot(sampled, {998, 1000}, {1000, 1002});
  const Quantity* route = snap.find(dialect::Role::kRoute);
  ASSERT_NE(route, nullptr);
  EXPECT_NEAR(route->incident.mean, 0.001, 1e-9);
  const Quantity* kv = snap.find(dialect::Role::kKvTransfer);
  ASSERT_NE(kv, nullptr);
  EXPECT_NEAR(kv->incident.mean, 0.040, 1e-9);
  ASSERT_NE(snap.find(SignalId::kE2e), nullptr);
  EXPECT_NEAR(snap.find(SignalId::kE2e)->incident.mean, 2.0, 1e-9);
  ASSERT_NE(snap.find(SignalId::kKvTransferBytes), nullptr);
  EXPECT_NEAR(snap.find(SignalId::kKvTransferBytes)->incident.mean, 8e7, 1e-3);
  ASSERT_NE(snap.find(SignalId::kRoutePrefixHit), nullptr);
  EXPECT_NEAR(snap.find(SignalId::kRoutePrefixHit)->incident.mean, 0.25, 1e-9);
}

// Tests that inferscope serve (which also speaks vLLM and DCGM) maps to inferscope's richer stages first.
TEST(RoleSpecTest, InferscopeServeRichestFirst) {
  FetchedExposition f = load("inferscope-serve-metrics.txt");
  MetricsCheck c = check_exposition("serve", f);
  ASSERT_FALSE(c.dialects.empty());
  EXPECT_EQ(c.dialects.front(), "inferscope");
  auto specs = role_specs_for(c.dialects);
  const RoleSpec* queue = find(specs, "queue");
  ASSERT_NE(queue, nullptr);
  EXPECT_EQ(queue->metrics.front(), "inferscope_stage_duration_seconds");
  EXPECT_NE(find(specs, "gpu_util"), nullptr);
  EXPECT_NE(find(specs, "step"), nullptr);
}

// Tests TGI on an exposition constructed from the reference (tests/doctor/testdata, not recorded):
// detected alone, nothing expected missing, e2e/queue/validation histograms, the per-request
// inference duration as the one engine stage (TGI's per-batch forward times are no request stage),
// the per-request mean time per token as TPOT, token histograms and the unlabelled gauges.
TEST(RoleSpecTest, TgiConstructed) {
  FetchedExposition f = load("tgi-constructed-metrics.txt", "tests/doctor/testdata");
  MetricsCheck c = check_exposition("tgi", f);
  ASSERT_EQ(c.dialects, std::vector<std::string>{"tgi"}) << to_text(c);
  EXPECT_TRUE(c.missing.empty()) << to_text(c);
  EXPECT_TRUE(c.problems.empty()) << to_text(c);
  auto specs = role_specs_for(c.dialects);
  struct Want {
    const char* id;
    RoleGroup group;
    RoleKind kind;
    const char* metric;
  };
  for (const Want& w : {Want{"e2e", RoleGroup::kLatency, RoleKind::kHistogram, "tgi_request_duration"},
                        Want{"queue", RoleGroup::kStage, RoleKind::kHistogram, "tgi_request_queue_duration"},
                        Want{"preprocess", RoleGroup::kStage, RoleKind::kHistogram, "tgi_request_validation_duration"},
                        Want{"inference", RoleGroup::kStage, RoleKind::kHistogram, "tgi_request_inference_duration"},
                        Want{"tpot", RoleGroup::kLatency, RoleKind::kHistogram, "tgi_request_mean_time_per_token_duration"},
                        Want{"waiting", RoleGroup::kSignal, RoleKind::kGauge, "tgi_queue_size"},
                        Want{"running", RoleGroup::kSignal, RoleKind::kGauge, "tgi_batch_current_size"},
                        Want{"request_rate", RoleGroup::kSignal, RoleKind::kCounter, "tgi_request_count"},
                        Want{"error_rate", RoleGroup::kSignal, RoleKind::kCounter, "tgi_request_failure"},
                        Want{"prompt_tokens", RoleGroup::kSignal, RoleKind::kHistogram, "tgi_request_input_length"},
                        Want{"output_tokens", RoleGroup::kSignal, RoleKind::kHistogram, "tgi_request_generated_tokens"}}) {
    const RoleSpec* spec = find(specs, w.id);
    ASSERT_NE(spec, nullptr) << w.id;
    EXPECT_EQ(spec->group, w.group) << w.id;
    EXPECT_EQ(spec->kind, w.kind) << w.id;
    EXPECT_EQ(spec->metrics.front(), w.metric) << w.id;
    EXPECT_EQ(spec->model_label, "") << "TGI has no model label";
  }
  for (const char* absent : {"prefill", "decode", "ttft", "itl"}) EXPECT_EQ(find(specs, absent), nullptr) << absent;

  // The window statistics of one constructed scrape against an empty one: means as constructed.
  ScrapeRound before{1000, {}, 0}, after{1001, {f.parsed}, 0};
  metrics::ParsedExposition zero = f.parsed;
  for (auto& family : zero.families)
    for (auto& sample : family.samples) sample.value = 0;
  before.expositions.push_back(zero);
  SamplingReport report;
  Snapshot snap = build_snapshot(sample_rounds({before, after}, "", report), {999, 1000}, {1000, 1001});
  ASSERT_NE(snap.find(SignalId::kE2e), nullptr);
  EXPECT_NEAR(snap.find(SignalId::kE2e)->incident.mean, 0.0008 + 0.005 + 0.04 + 64 * 0.02, 1e-6);
  ASSERT_NE(snap.find(dialect::Role::kInference), nullptr);
  EXPECT_NEAR(snap.find(dialect::Role::kInference)->incident.per_request, 0.04 + 64 * 0.02, 1e-6);
  EXPECT_NEAR(snap.find(SignalId::kPromptTokens)->incident.mean, 200, 1e-6);
}

// Tests Triton on an exposition constructed from the reference: cumulative microsecond counters
// become mean stage times per successful request (counter pairs scaled to seconds), inference is
// the compute stage, input/output copies are pre/postprocess, and Triton's own CPU gauge is the
// host CPU role.
TEST(RoleSpecTest, TritonConstructed) {
  FetchedExposition f = load("triton-constructed-metrics.txt", "tests/doctor/testdata");
  MetricsCheck c = check_exposition("triton", f);
  ASSERT_EQ(c.dialects, std::vector<std::string>{"triton"}) << to_text(c);
  EXPECT_TRUE(c.missing.empty()) << to_text(c);
  EXPECT_TRUE(c.problems.empty()) << to_text(c);
  auto specs = role_specs_for(c.dialects);
  const RoleSpec* e2e = find(specs, "e2e");
  ASSERT_NE(e2e, nullptr);
  EXPECT_EQ(e2e->kind, RoleKind::kCounterRatio);
  EXPECT_EQ(e2e->metrics.front(), "nv_inference_request_duration_us");
  EXPECT_EQ(e2e->denominator, "nv_inference_request_success");
  EXPECT_DOUBLE_EQ(e2e->scale, 1e-6);
  EXPECT_EQ(e2e->model_label, "model");
  const std::pair<const char*, const char*> stages[] = {{"queue", "nv_inference_queue_duration_us"},
                                                        {"preprocess", "nv_inference_compute_input_duration_us"},
                                                        {"inference", "nv_inference_compute_infer_duration_us"},
                                                        {"postprocess", "nv_inference_compute_output_duration_us"}};
  for (const auto& [id, metric] : stages) {
    const RoleSpec* spec = find(specs, id);
    ASSERT_NE(spec, nullptr) << id;
    EXPECT_EQ(spec->group, RoleGroup::kStage) << id;
    EXPECT_EQ(spec->metrics.front(), metric) << id;
  }
  ASSERT_NE(find(specs, "host_cpu_busy"), nullptr);
  EXPECT_EQ(find(specs, "host_cpu_busy")->metrics.front(), "nv_cpu_utilization");
  ASSERT_NE(find(specs, "gpu_util"), nullptr);
  EXPECT_EQ(find(specs, "tpot"), nullptr) << "Triton has no per-token metric";

  ScrapeRound before{1000, {}, 0}, after{1001, {f.parsed}, 0};
  metrics::ParsedExposition zero = f.parsed;
  for (auto& family : zero.families)
    for (auto& sample : family.samples)
      if (family.samples.front().name.rfind("nv_inference_", 0) == 0) sample.value = 0;
  before.expositions.push_back(zero);
  SamplingReport report;
  Snapshot snap = build_snapshot(sample_rounds({before, after}, "llama", report), {999, 1000}, {1000, 1001});
  ASSERT_NE(snap.find(SignalId::kE2e), nullptr);
  EXPECT_NEAR(snap.find(SignalId::kE2e)->incident.mean, 0.0324, 1e-9);
  EXPECT_NEAR(snap.find(dialect::Role::kQueue)->incident.per_request, 0.002, 1e-9);
  EXPECT_NEAR(snap.find(dialect::Role::kInference)->incident.per_request, 0.030, 1e-9);
  EXPECT_NEAR(snap.find(SignalId::kRequestRate)->incident.mean, 120, 1e-9);
  EXPECT_NEAR(snap.find(SignalId::kHostCpuBusy)->incident.mean, 0.31, 1e-9);
}

// Tests the host CPU role on the recorded node-exporter exposition: detected as `node`, read as the
// busy share of all CPUs from idle vs all-mode seconds (direct-scrape path): two scrapes one
// second apart in which each CPU spent 0.25 s idle and 0.75 s in user mode give 75 % busy.
TEST(RoleSpecTest, NodeExporterHostCpuBusy) {
  FetchedExposition f = load("node-exporter-1.5-metrics.txt");
  auto names = metric_names(f.parsed);
  auto dialects = detect_dialects(names);
  ASSERT_EQ(dialects, std::vector<std::string>{"node"});
  auto hosts = host_specs();
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts.front().id, "host_cpu_busy");
  EXPECT_EQ(hosts.front().kind, RoleKind::kBusyFromIdle);
  EXPECT_EQ(name_pattern().find("node_"), std::string::npos) << "node series are looked up per host";

  ScrapeRound first{1000, {f.parsed}, 0}, second{1001, {f.parsed}, 0};
  int cpus = 0;
  for (auto& family : second.expositions.front().families)
    for (auto& sample : family.samples) {
      if (sample.name != "node_cpu_seconds_total") continue;
      auto mode = metrics::label_value(sample, "mode");
      ASSERT_TRUE(mode);
      if (*mode == "idle") {
        sample.value += 0.25;
        ++cpus;
      } else if (*mode == "user") {
        sample.value += 0.75;
      }
    }
  ASSERT_GT(cpus, 0);
  SamplingReport report;
  SampledRoles sampled = sample_rounds({first, second}, "", report);
  Snapshot snap = build_snapshot(sampled, {999, 1000}, {1000, 1001});
  const Quantity* busy = snap.find(SignalId::kHostCpuBusy);
  ASSERT_NE(busy, nullptr);
  EXPECT_NEAR(busy->incident.mean, 0.75, 1e-6);
  EXPECT_NEAR(busy->incident.max, 0.75, 1e-6);
  EXPECT_EQ(busy->unit, "ratio");
}

// Tests that the queue collector's series, written by its own QueueMetrics (so the dialect table's
// queue names cannot drift from what the collector exposes), are found as "queue" and read in
// direct-scrape mode: the queue_wait stage, depth summed over queues, the oldest age as the
// maximum, jobs by outcome and workers by state.
TEST(RoleSpecTest, QueueCollectorSeries) {
  using queue::QueueSystem;
  metrics::Registry registry;
  queue::QueueMetrics m(registry, "jobs");
  m.declare(QueueSystem::kRq, "default");
  m.declare(QueueSystem::kRq, "high");
  m.set(QueueSystem::kRq, "default", queue::Quantity::kDepth, 3.0);
  m.set(QueueSystem::kRq, "high", queue::Quantity::kDepth, 1.0);
  m.set(QueueSystem::kRq, "default", queue::Quantity::kOldestAge, 4.0);
  m.set(QueueSystem::kRq, "high", queue::Quantity::kOldestAge, 9.0);
  m.set(QueueSystem::kRq, "default", queue::Quantity::kInProgress, 2.0);
  m.set_workers(QueueSystem::kRq, queue::WorkerCounts{.busy = 2, .idle = 1, .stale = 1});
  ScrapeRound first{1000, {inferscope::testing::scrape(registry)}, 0};
  for (double wait : {1.0, 3.0}) m.observe_wait(QueueSystem::kRq, "default", wait);
  m.observe_run(QueueSystem::kRq, "default", 0.5);
  m.add_jobs(QueueSystem::kRq, "default", queue::Quantity::kJobsFinished, 3);
  m.add_jobs(QueueSystem::kRq, "high", queue::Quantity::kJobsFailed, 1);
  ScrapeRound second{1002, {inferscope::testing::scrape(registry)}, 0};

  auto dialects = detect_dialects(metric_names(second.expositions.front()));
  ASSERT_EQ(dialects, std::vector<std::string>{"queue"});
  SamplingReport report;
  SampledRoles sampled = sample_rounds({first, second}, "", report);
  EXPECT_TRUE(report.missing.empty());
  Snapshot snap = build_snapshot(sampled, {998, 1000}, {1000, 1002});
  const Quantity* wait = snap.find(dialect::Role::kQueueWait);
  ASSERT_NE(wait, nullptr);
  EXPECT_NEAR(wait->incident.mean, 2.0, 1e-9);
  EXPECT_EQ(wait->incident.count, 2);
  ASSERT_NE(snap.find(SignalId::kQueueRun), nullptr);
  EXPECT_NEAR(snap.find(SignalId::kQueueRun)->incident.mean, 0.5, 1e-9);
  ASSERT_NE(snap.find(SignalId::kQueueDepth), nullptr);
  EXPECT_NEAR(snap.find(SignalId::kQueueDepth)->incident.max, 4, 1e-9);
  ASSERT_NE(snap.find(SignalId::kQueueOldestAge), nullptr);
  EXPECT_NEAR(snap.find(SignalId::kQueueOldestAge)->incident.max, 9, 1e-9);
  ASSERT_NE(snap.find(SignalId::kQueueInProgress), nullptr);
  EXPECT_NEAR(snap.find(SignalId::kQueueInProgress)->incident.max, 2, 1e-9);
  ASSERT_NE(snap.find(SignalId::kQueueJobsFinished), nullptr);
  EXPECT_NEAR(snap.find(SignalId::kQueueJobsFinished)->incident.mean, 1.5, 1e-9);  // 3 jobs in 2 s
  ASSERT_NE(snap.find(SignalId::kQueueJobsFailed), nullptr);
  EXPECT_NEAR(snap.find(SignalId::kQueueJobsFailed)->incident.mean, 0.5, 1e-9);
  for (auto [id, n] : {std::pair{SignalId::kQueueWorkersBusy, 2.0}, std::pair{SignalId::kQueueWorkersIdle, 1.0},
                       std::pair{SignalId::kQueueWorkersStale, 1.0}}) {
    ASSERT_NE(snap.find(id), nullptr) << to_string(id);
    EXPECT_NEAR(snap.find(id)->incident.max, n, 1e-9) << to_string(id);
  }
}

// Tests `--roles` on a constructed exposition of a hand-instrumented service (prometheus_client
// style, names no dialect knows): the mapping replaces detection, a mapped name the target lacks
// is missing, and the usual roles it does not map are listed.
TEST(RoleSpecTest, CustomMappingReplacesDetection) {
  FetchedExposition f;
  f.text =
      "# HELP llm_request_latency_seconds Time from request received to response sent\n"
      "# TYPE llm_request_latency_seconds histogram\n"
      "llm_request_latency_seconds_bucket{le=\"0.25\",model=\"house\"} 3.0\n"
      "llm_request_latency_seconds_bucket{le=\"+Inf\",model=\"house\"} 4.0\n"
      "llm_request_latency_seconds_count{model=\"house\"} 4.0\n"
      "llm_request_latency_seconds_sum{model=\"house\"} 0.9\n"
      "# HELP llm_requests_total Requests finished\n"
      "# TYPE llm_requests_total counter\n"
      "llm_requests_total{model=\"house\",status=\"200\"} 4.0\n";
  auto parsed = metrics::parse_exposition(f.text, metrics::ExpositionTextFormat::kPrometheus004);
  ASSERT_TRUE(parsed) << parsed.error().message;
  f.parsed = std::move(*parsed);
  EXPECT_TRUE(check_exposition("house", f).dialects.empty());  // no dialect detected without the mapping
  auto mapping = dialect::make_custom_dialect({{"e2e", "llm_request_latency_seconds", ""},
                                               {"requests", "llm_requests_total", ""},
                                               {"waiting", "llm_queue_size", ""}},
                                              "model");
  ASSERT_TRUE(mapping.ok()) << mapping.error().message;
  MetricsCheck c = check_exposition("house", f, mapping->get());
  EXPECT_EQ(c.dialects, std::vector<std::string>{"custom"});
  EXPECT_EQ(c.missing, std::vector<std::string>{"waiting: llm_queue_size"});
  EXPECT_NE(std::find(c.unmapped.begin(), c.unmapped.end(), "decode"), c.unmapped.end());
  EXPECT_EQ(c.verdict, "degraded");
  EXPECT_NE(to_text(c).find("roles the mapping does not name"), std::string::npos) << to_text(c);
  const auto specs = role_specs_for((*mapping)->table());
  const RoleSpec* e2e = find(specs, "e2e");
  ASSERT_NE(e2e, nullptr);
  EXPECT_EQ(e2e->kind, RoleKind::kHistogram);
  EXPECT_EQ(e2e->model_label, "model");
}

}  // namespace
}  // namespace inferscope::doctor
