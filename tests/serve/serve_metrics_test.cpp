// Tests of ServeMetrics: every dialect's families, exact vLLM names/labels/buckets, the collect
// hook, and the mapping of one request onto each dialect, checked by parsing the rendered registry.
#include "serve/serve_metrics.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/exposition_parser.h>

#include "support/registry_scrape.h"

namespace inferscope::serve {
namespace {

using metrics::ParsedExposition;
using metrics::ParsedMetricType;
using metrics::value_of;
using timeline::Moment;
using timeline::RequestTimeline;

using inferscope::testing::at_ms;
using inferscope::testing::kT0;
using inferscope::testing::scrape;
constexpr double kTol = 1e-9;
constexpr std::string_view kModel = "sim-8b";
constexpr std::string_view kChat = "/v1/chat/completions";

ServeMetricsOptions all_dialects() {
  ServeMetricsOptions o;
  o.model_names = {std::string(kModel)};
  o.dialects = {"inferscope", "vllm", "gen_ai"};
  return o;
}

// le_values returns the le strings of a histogram's buckets for one label subset, in text order.
std::vector<std::string> le_values(const ParsedExposition& e, std::string_view family) {
  std::vector<std::string> out;
  for (const auto* sample : metrics::find_samples(e, std::string(family) + "_bucket")) {
    out.emplace_back(*metrics::label_value(*sample, "le"));
  }
  return out;
}

// streamed: preprocess 10, enqueued 12, scheduled 30, role chunk 40, tokens at 100 (1), 130 (3),
// 150 (2), postprocessed 155, sent 160.
RequestTimeline streamed() {
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(10));
  t.mark(Moment::kEnqueued, at_ms(12));
  t.mark(Moment::kScheduled, at_ms(30));
  t.add_output(at_ms(40), 0);
  t.add_output(at_ms(100), 1);
  t.add_output(at_ms(130), 3);
  t.add_output(at_ms(150), 2);
  t.mark(Moment::kPostprocessed, at_ms(155));
  t.mark(Moment::kSent, at_ms(160));
  t.set_prompt_tokens(70);
  t.finish(timeline::FinishReason::kStop, at_ms(160));
  return t;
}

// Tests that every metric of vLLM's example Grafana dashboard exists with its type, labels
// model_name and engine, and vLLM's exact bucket lists printed Python-style.
TEST(ServeMetricsTest, VllmDashboardFamiliesAndBuckets) {
  metrics::Registry registry;
  ServeMetrics m(registry, all_dialects());
  m.record_request(streamed(), {kModel, kChat, 200, 64, 1});
  const ParsedExposition e = scrape(registry);
  const auto check = [&e](std::string_view name, ParsedMetricType type) {
    const auto* family = metrics::find_family(e, name);
    ASSERT_NE(family, nullptr) << name;
    EXPECT_EQ(family->type, type) << name;
    ASSERT_FALSE(family->samples.empty()) << name;
    EXPECT_EQ(metrics::label_value(family->samples.front(), "model_name"), kModel) << name;
    EXPECT_EQ(metrics::label_value(family->samples.front(), "engine"), "0") << name;
  };
  check("vllm:e2e_request_latency_seconds", ParsedMetricType::kHistogram);
  check("vllm:prompt_tokens_total", ParsedMetricType::kCounter);
  check("vllm:generation_tokens_total", ParsedMetricType::kCounter);
  check("vllm:inter_token_latency_seconds", ParsedMetricType::kHistogram);
  check("vllm:num_requests_running", ParsedMetricType::kGauge);
  check("vllm:num_requests_waiting", ParsedMetricType::kGauge);
  check("vllm:time_to_first_token_seconds", ParsedMetricType::kHistogram);
  check("vllm:kv_cache_usage_perc", ParsedMetricType::kGauge);
  check("vllm:request_prompt_tokens", ParsedMetricType::kHistogram);
  check("vllm:request_generation_tokens", ParsedMetricType::kHistogram);
  check("vllm:request_success_total", ParsedMetricType::kCounter);
  check("vllm:request_queue_time_seconds", ParsedMetricType::kHistogram);
  check("vllm:request_prefill_time_seconds", ParsedMetricType::kHistogram);
  check("vllm:request_decode_time_seconds", ParsedMetricType::kHistogram);
  check("vllm:request_max_num_generation_tokens", ParsedMetricType::kHistogram);
  check("vllm:request_time_per_output_token_seconds", ParsedMetricType::kHistogram);
  check("vllm:request_inference_time_seconds", ParsedMetricType::kHistogram);

  const std::vector<std::string> latency = {"0.3",  "0.5",  "0.8",  "1.0",   "1.5",   "2.0",   "2.5",    "5.0",
                                            "10.0", "15.0", "20.0", "30.0",  "40.0",  "50.0",  "60.0",   "120.0",
                                            "240.0", "480.0", "960.0", "1920.0", "7680.0", "+Inf"};
  const std::vector<std::string> ttft = {"0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1",
                                         "0.25",  "0.5",   "0.75", "1.0",  "2.5",  "5.0",  "7.5",  "10.0",
                                         "20.0",  "40.0",  "80.0", "160.0", "640.0", "2560.0", "+Inf"};
  const std::vector<std::string> itl = {"0.01", "0.025", "0.05", "0.075", "0.1",  "0.15", "0.2",
                                        "0.3",  "0.4",   "0.5",  "0.75",  "1.0",  "2.5",  "5.0",
                                        "7.5",  "10.0",  "20.0", "40.0",  "80.0", "+Inf"};
  const std::vector<std::string> tokens = {"1.0",   "2.0",    "5.0",    "10.0",   "20.0",   "50.0",  "100.0",
                                           "200.0", "500.0", "1000.0", "2000.0", "5000.0", "+Inf"};
  for (std::string_view name : {"vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
                                "vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds",
                                "vllm:request_inference_time_seconds"}) {
    EXPECT_EQ(le_values(e, name), latency) << name;
  }
  EXPECT_EQ(le_values(e, "vllm:time_to_first_token_seconds"), ttft);
  EXPECT_EQ(le_values(e, "vllm:inter_token_latency_seconds"), itl);
  EXPECT_EQ(le_values(e, "vllm:request_time_per_output_token_seconds"), itl);
  for (std::string_view name : {"vllm:request_prompt_tokens", "vllm:request_generation_tokens",
                                "vllm:request_max_num_generation_tokens", "vllm:request_params_max_tokens"}) {
    EXPECT_EQ(le_values(e, name), tokens) << name;
  }
  EXPECT_EQ(le_values(e, "vllm:request_params_n"), (std::vector<std::string>{"1.0", "2.0", "5.0", "10.0", "20.0", "+Inf"}));
}

// Tests that every finished_reason child exists at 0 before any request, and legacy aliases stay
// off unless asked for.
TEST(ServeMetricsTest, FinishReasonsPrecreatedAtZero) {
  metrics::Registry registry;
  ServeMetrics m(registry, all_dialects());
  const ParsedExposition e = scrape(registry);
  for (std::string_view reason : {"stop", "length", "abort", "error", "repetition"}) {
    EXPECT_EQ(value_of(e, "vllm:request_success_total", {{"finished_reason", reason}}), 0.0) << reason;
  }
  EXPECT_EQ(metrics::find_family(e, "vllm:time_per_output_token_seconds"), nullptr);
  EXPECT_EQ(metrics::find_family(e, "vllm:gpu_cache_usage_perc"), nullptr);
}

// Tests that one request lands in the vLLM histograms with vLLM's interval definitions.
TEST(ServeMetricsTest, RequestFeedsVllmHistograms) {
  metrics::Registry registry;
  ServeMetrics m(registry, all_dialects());
  m.record_request(streamed(), {kModel, kChat, 200, 64, 1});
  const ParsedExposition e = scrape(registry);
  EXPECT_EQ(value_of(e, "vllm:request_success_total", {{"finished_reason", "stop"}}), 1.0);
  EXPECT_NEAR(*value_of(e, "vllm:e2e_request_latency_seconds_sum"), 0.150, kTol);  // arrival -> last token
  EXPECT_NEAR(*value_of(e, "vllm:time_to_first_token_seconds_sum"), 0.100, kTol);
  EXPECT_NEAR(*value_of(e, "vllm:request_queue_time_seconds_sum"), 0.018, kTol);
  EXPECT_NEAR(*value_of(e, "vllm:request_prefill_time_seconds_sum"), 0.070, kTol);
  EXPECT_NEAR(*value_of(e, "vllm:request_decode_time_seconds_sum"), 0.050, kTol);
  EXPECT_NEAR(*value_of(e, "vllm:request_inference_time_seconds_sum"), 0.120, kTol);
  EXPECT_NEAR(*value_of(e, "vllm:request_time_per_output_token_seconds_sum"), 0.010, kTol);
  // ITL: one observation per output event (2 gaps: 30 ms and 20 ms), not per token.
  EXPECT_EQ(value_of(e, "vllm:inter_token_latency_seconds_count"), 2.0);
  EXPECT_NEAR(*value_of(e, "vllm:inter_token_latency_seconds_sum"), 0.050, kTol);
  EXPECT_EQ(value_of(e, "vllm:request_generation_tokens_sum"), 6.0);
  EXPECT_EQ(value_of(e, "vllm:request_prompt_tokens_sum"), 70.0);
  EXPECT_EQ(value_of(e, "vllm:request_params_max_tokens_sum"), 64.0);
  // No engine stats source: token counters follow finished requests.
  EXPECT_EQ(value_of(e, "vllm:prompt_tokens_total"), 70.0);
  EXPECT_EQ(value_of(e, "vllm:generation_tokens_total"), 6.0);
  // The inferscope family got the same request.
  EXPECT_EQ(value_of(e, "inferscope_requests_total", {{"model", kModel}, {"finish_reason", "stop"}}), 1.0);
}

// Tests that a request rejected before the engine (e.g. 400) is not a vLLM request, and that an
// abort in prefill records the queue but no prefill in vLLM's phase histograms.
TEST(ServeMetricsTest, VllmSeesOnlyEngineRequestsAndCompletePhases) {
  metrics::Registry registry;
  ServeMetrics m(registry, all_dialects());
  RequestTimeline rejected(kT0);
  rejected.finish(timeline::FinishReason::kError, at_ms(2));
  m.record_request(rejected, {kModel, kChat, 400});
  RequestTimeline aborted(kT0);
  aborted.mark(Moment::kEnqueued, at_ms(10));
  aborted.mark(Moment::kScheduled, at_ms(30));
  aborted.finish(timeline::FinishReason::kAbort, at_ms(330));
  m.record_request(aborted, {kModel, kChat, 200});
  const ParsedExposition e = scrape(registry);
  EXPECT_EQ(value_of(e, "vllm:request_success_total", {{"finished_reason", "error"}}), 0.0);
  EXPECT_EQ(value_of(e, "vllm:request_success_total", {{"finished_reason", "abort"}}), 1.0);
  EXPECT_EQ(value_of(e, "vllm:request_queue_time_seconds_count"), 1.0);
  EXPECT_EQ(value_of(e, "vllm:request_prefill_time_seconds_count"), 0.0);
  EXPECT_EQ(value_of(e, "vllm:time_to_first_token_seconds_count"), 0.0);
  EXPECT_NEAR(*value_of(e, "vllm:e2e_request_latency_seconds_sum"), 0.330, kTol);
  // inferscope keeps the truncated prefill and counts the rejected request.
  EXPECT_EQ(value_of(e, "inferscope_stage_truncated_total", {{"stage", "prefill"}}), 1.0);
  EXPECT_EQ(value_of(e, "inferscope_requests_total", {{"status_class", "4xx"}}), 1.0);
}

// Tests that the collect hook copies engine stats into gauges and adds counter deltas per scrape.
TEST(ServeMetricsTest, CollectHookRefreshesEngineSeries) {
  metrics::Registry registry;
  ServeMetrics m(registry, all_dialects());
  auto stats = std::make_shared<EngineStats>();
  m.set_engine_stats_source([stats] { return *stats; });
  stats->running = 3;
  stats->waiting = 7;
  stats->kv_usage = 0.25;
  stats->kv_blocks_total = 1000;
  stats->kv_blocks_used = 250;
  stats->prompt_tokens_total = 500;
  stats->generation_tokens_total = 40;
  stats->preemptions_total = 2;
  stats->prefix_queries_tokens = 400;
  stats->prefix_hit_tokens = 100;
  stats->busy_fraction = 0.5;
  stats->gpu_memory_used_bytes = 40.0 * 1024 * 1024 * 1024;
  stats->gpu_memory_total_bytes = 80.0 * 1024 * 1024 * 1024;
  stats->gpu_power_w = 420;
  stats->gpu_temperature_c = 61;
  stats->gpu_energy_mj = 12345;
  ParsedExposition e = scrape(registry);
  EXPECT_EQ(value_of(e, "vllm:num_requests_running"), 3.0);
  EXPECT_EQ(value_of(e, "vllm:num_requests_waiting"), 7.0);
  EXPECT_EQ(value_of(e, "vllm:kv_cache_usage_perc"), 0.25);
  EXPECT_EQ(value_of(e, "vllm:prompt_tokens_total"), 500.0);
  EXPECT_EQ(value_of(e, "vllm:prefix_cache_hits_total"), 100.0);
  EXPECT_EQ(value_of(e, "inferscope_engine_requests_waiting"), 7.0);
  EXPECT_EQ(value_of(e, "inferscope_kv_cache_blocks", {{"state", "capacity"}}), 1000.0);
  EXPECT_EQ(value_of(e, "inferscope_engine_preemptions_total"), 2.0);
  EXPECT_EQ(value_of(e, "DCGM_FI_DEV_GPU_UTIL", {{"simulated", "true"}, {"modelName", "inferscope-simulated"}}), 50.0);
  EXPECT_EQ(value_of(e, "DCGM_FI_DEV_FB_USED"), 40960.0);
  EXPECT_EQ(value_of(e, "DCGM_FI_DEV_FB_FREE"), 40960.0);
  EXPECT_EQ(value_of(e, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), 12345.0);

  stats->prompt_tokens_total = 800;
  stats->running = 1;
  e = scrape(registry);
  EXPECT_EQ(value_of(e, "vllm:prompt_tokens_total"), 800.0);
  EXPECT_EQ(value_of(e, "vllm:num_requests_running"), 1.0);
  // With an engine attached, finished requests no longer add tokens (the engine counts them live).
  m.record_request(streamed(), {kModel, kChat, 200, 64, 1});
  EXPECT_EQ(value_of(scrape(registry), "vllm:prompt_tokens_total"), 800.0);
}

// Tests a data-parallel server's series: every vllm:* series per rank (engine="0".."2"), one
// simulated GPU per rank, and the inferscope_* engine series SUMMED over the ranks (counts add;
// KV usage is used/capacity of the sums, not the mean of the ranks' ratios).
TEST(ServeMetricsTest, DataParallelRanksLabelVllmAndSumInferscope) {
  metrics::Registry registry;
  ServeMetricsOptions o = all_dialects();
  o.data_parallel_size = 3;
  ServeMetrics m(registry, o);
  auto ranks = std::make_shared<std::vector<EngineStats>>(3);
  m.set_engine_stats_sources([ranks](std::vector<EngineStats>& out) { out = *ranks; });
  const double running[] = {2, 5, 0}, waiting[] = {1, 0, 9}, used[] = {100, 300, 0}, total[] = {1000, 1000, 2000};
  for (std::size_t r = 0; r < 3; ++r) {
    (*ranks)[r].running = static_cast<std::uint32_t>(running[r]);
    (*ranks)[r].waiting = static_cast<std::uint32_t>(waiting[r]);
    (*ranks)[r].kv_blocks_used = static_cast<std::uint64_t>(used[r]);
    (*ranks)[r].kv_blocks_total = static_cast<std::uint64_t>(total[r]);
    (*ranks)[r].kv_usage = used[r] / total[r];
    (*ranks)[r].prompt_tokens_total = 100 * (r + 1);
    (*ranks)[r].preemptions_total = r;
    (*ranks)[r].busy_fraction = 0.3 * static_cast<double>(r);
  }
  ParsedExposition e = scrape(registry);
  for (std::size_t r = 0; r < 3; ++r) {
    const std::string rank = std::to_string(r);
    EXPECT_EQ(value_of(e, "vllm:num_requests_running", {{"engine", rank}}), running[r]) << rank;
    EXPECT_EQ(value_of(e, "vllm:num_requests_waiting", {{"engine", rank}}), waiting[r]) << rank;
    EXPECT_EQ(value_of(e, "vllm:prompt_tokens_total", {{"engine", rank}}), 100.0 * (r + 1)) << rank;
    EXPECT_EQ(value_of(e, "vllm:request_success_total", {{"engine", rank}, {"finished_reason", "stop"}}), 0.0) << rank;
    EXPECT_EQ(value_of(e, "DCGM_FI_DEV_GPU_UTIL", {{"gpu", rank}, {"device", "nvidia" + rank}}),
              30.0 * static_cast<double>(r)) << rank;
  }
  EXPECT_EQ(value_of(e, "inferscope_engine_requests_running"), 7.0);
  EXPECT_EQ(value_of(e, "inferscope_engine_requests_waiting"), 10.0);
  EXPECT_EQ(value_of(e, "inferscope_kv_cache_blocks", {{"state", "used"}}), 400.0);
  EXPECT_EQ(value_of(e, "inferscope_kv_cache_blocks", {{"state", "capacity"}}), 4000.0);
  EXPECT_NEAR(*value_of(e, "inferscope_kv_cache_usage_ratio"), 0.1, kTol);  // 400/4000, not mean(0.1, 0.3, 0)
  EXPECT_EQ(value_of(e, "inferscope_engine_preemptions_total"), 3.0);

  // A request recorded for rank 1 lands in rank 1's histograms only; a step of rank 2 in its own.
  m.record_request(streamed(), {.model = kModel, .route = kChat, .http_status = 200, .max_tokens = 64, .n = 1,
                                .engine = 1});
  m.on_step(StepInfo{100, 1, 0.02, at_ms(0)}, 2);
  (*ranks)[2].preemptions_total = 5;  // counter deltas per rank: 3 more
  e = scrape(registry);
  EXPECT_EQ(value_of(e, "vllm:e2e_request_latency_seconds_count", {{"engine", "1"}}), 1.0);
  EXPECT_EQ(value_of(e, "vllm:e2e_request_latency_seconds_count", {{"engine", "0"}}), 0.0);
  EXPECT_EQ(value_of(e, "vllm:iteration_tokens_total_count", {{"engine", "2"}}), 1.0);
  EXPECT_EQ(value_of(e, "vllm:iteration_tokens_total_count", {{"engine", "0"}}), 0.0);
  EXPECT_EQ(value_of(e, "vllm:num_preemptions_total", {{"engine", "2"}}), 5.0);
  EXPECT_EQ(value_of(e, "inferscope_engine_preemptions_total"), 6.0);
}

// Tests that the hook outlives ServeMetrics harmlessly (a scrape after destruction still works).
TEST(ServeMetricsTest, ScrapeAfterDestruction) {
  metrics::Registry registry;
  {
    ServeMetrics m(registry, all_dialects());
    m.set_engine_stats_source([] { return EngineStats{}; });
  }
  EXPECT_NE(metrics::find_family(scrape(registry), "vllm:num_requests_running"), nullptr);
}

// Tests the gen_ai family: operation from the route, error_type on failures, TTFT/TPOT only for
// successful responses.
TEST(ServeMetricsTest, GenAiFamily) {
  metrics::Registry registry;
  ServeMetrics m(registry, all_dialects());
  m.record_request(streamed(), {kModel, kChat, 200, 64, 1});
  RequestTimeline failed = streamed();
  m.record_request(failed, {kModel, "/v1/completions", 500, 64, 1});
  m.record_request(streamed(), {"unknown-model", kChat, 200, 64, 1});
  const ParsedExposition e = scrape(registry);
  const metrics::LabelSubset chat_ok = {{"gen_ai_operation_name", "chat"}, {"gen_ai_provider_name", "inferscope"},
                                        {"gen_ai_request_model", kModel}, {"gen_ai_response_model", kModel},
                                        {"error_type", ""}};
  EXPECT_EQ(value_of(e, "gen_ai_server_request_duration_seconds_count", chat_ok), 1.0);
  EXPECT_EQ(value_of(e, "gen_ai_server_request_duration_seconds_count",
                     {{"gen_ai_operation_name", "text_completion"}, {"error_type", "5xx"}}),
            1.0);
  EXPECT_EQ(value_of(e, "gen_ai_server_time_to_first_token_seconds_count", {{"gen_ai_operation_name", "text_completion"}}),
            std::nullopt);
  EXPECT_NEAR(*value_of(e, "gen_ai_server_time_to_first_token_seconds_sum", {{"gen_ai_request_model", kModel}}), 0.1, kTol);
  EXPECT_EQ(value_of(e, "gen_ai_server_time_per_output_token_seconds_count", {{"gen_ai_request_model", "other"}}), 1.0);
  EXPECT_EQ(le_values(e, "gen_ai_server_time_per_output_token_seconds").front(), "0.01");
}

// Tests that dialects switch families on and off and unknown dialects are refused.
TEST(ServeMetricsTest, DialectSwitches) {
  metrics::Registry registry;
  ServeMetricsOptions o;
  o.model_names = {std::string(kModel)};
  o.dialects = {"inferscope"};
  o.simulated_gpu = false;
  ServeMetrics m(registry, o);
  const ParsedExposition e = scrape(registry);
  EXPECT_EQ(metrics::find_family(e, "vllm:num_requests_running"), nullptr);
  EXPECT_EQ(metrics::find_family(e, "gen_ai_server_request_duration_seconds"), nullptr);
  EXPECT_EQ(metrics::find_family(e, "DCGM_FI_DEV_GPU_UTIL"), nullptr);
  EXPECT_NE(metrics::find_family(e, "inferscope_engine_requests_running"), nullptr);

  metrics::Registry other;
  o.dialects = {"vllm", "prometheus"};
  EXPECT_THROW(ServeMetrics(other, o), std::invalid_argument);
  EXPECT_FALSE(validate_dialects({"vllm", "otel"}, "--metrics-dialects").ok());
  EXPECT_TRUE(validate_dialects({"vllm", "gen_ai", "inferscope"}, "--metrics-dialects").ok());
  o.model_names.clear();
  o.dialects = {"vllm"};
  EXPECT_THROW(ServeMetrics(other, o), std::invalid_argument);
}

// Tests that the legacy aliases carry the same data as their replacements, with DEPRECATED help.
TEST(ServeMetricsTest, LegacyAliases) {
  metrics::Registry registry;
  ServeMetricsOptions o = all_dialects();
  o.vllm_legacy_aliases = true;
  ServeMetrics m(registry, o);
  m.set_engine_stats_source([] {
    EngineStats s;
    s.kv_usage = 0.5;
    return s;
  });
  m.record_request(streamed(), {kModel, kChat, 200, 64, 1});
  const ParsedExposition e = scrape(registry);
  EXPECT_EQ(value_of(e, "vllm:gpu_cache_usage_perc"), 0.5);
  EXPECT_EQ(value_of(e, "vllm:time_per_output_token_seconds_count"),
            value_of(e, "vllm:inter_token_latency_seconds_count"));
  EXPECT_EQ(metrics::find_family(e, "vllm:time_per_output_token_seconds")->help.rfind("DEPRECATED", 0), 0U);
}

// Tests that a request preempted before its first token and scheduled again keeps its first
// SCHEDULED as the queue/prefill boundary, as vLLM's stats.py does ("ignore preemptions"): the
// preemption lengthens prefill, not queue time.
TEST(ServeMetricsTest, PreemptedRequestKeepsFirstScheduledLikeVllm) {
  metrics::Registry registry;
  ServeMetrics m(registry, all_dialects());
  RequestTimeline t(kT0);
  t.mark(Moment::kEnqueued, at_ms(10));
  t.mark(Moment::kScheduled, at_ms(30));
  t.mark(Moment::kScheduled, at_ms(200));  // re-scheduled after a preemption
  t.add_output(at_ms(250), 1);
  t.add_output(at_ms(260), 1);
  t.set_prompt_tokens(10);
  t.finish(timeline::FinishReason::kLength, at_ms(260));
  m.record_request(t, {kModel, kChat, 200});
  const ParsedExposition e = scrape(registry);
  EXPECT_NEAR(*value_of(e, "vllm:request_queue_time_seconds_sum"), 0.020, kTol);
  EXPECT_NEAR(*value_of(e, "vllm:request_prefill_time_seconds_sum"), 0.220, kTol);
}

// Tests that on_step observes step time in real seconds and batch tokens (inferscope and vLLM).
TEST(ServeMetricsTest, StepMetrics) {
  metrics::Registry registry;
  ServeMetricsOptions o = all_dialects();
  o.time_scale = 10;
  ServeMetrics m(registry, o);
  m.on_step(StepInfo{512, 3, 0.05, at_ms(0)});
  const ParsedExposition e = scrape(registry);
  EXPECT_NEAR(*value_of(e, "inferscope_engine_step_duration_seconds_sum"), 0.005, kTol);
  EXPECT_EQ(value_of(e, "inferscope_engine_step_tokens_sum"), 515.0);
  // vLLM's histogram of tokens per engine step, under vLLM's own (_total-suffixed) name.
  EXPECT_EQ(value_of(e, "vllm:iteration_tokens_total_sum"), 515.0);
  EXPECT_EQ(value_of(e, "vllm:iteration_tokens_total_count"), 1.0);
  EXPECT_EQ(metrics::find_family(e, "vllm:iteration_tokens_total")->type, metrics::ParsedMetricType::kHistogram);
}

}  // namespace
}  // namespace inferscope::serve
