// Tests of the PromQL builders' exact text (syntax is checked by promtool in the integration test).
#include "dialect/promql.h"

#include <gtest/gtest.h>

namespace inferscope::dialect {
namespace {

QueryScope scope(std::string matchers, std::vector<std::string> by, std::string window = "5m") {
  return QueryScope{std::move(matchers), std::move(by), std::move(window)};
}

// Tests the one PromQL string escape: quotes, backslashes, newlines, control bytes, UTF-8.
TEST(PromqlTest, StringLiteralEscapes) {
  EXPECT_EQ(promql_string(""), R"("")");
  EXPECT_EQ(promql_string("vllm"), R"("vllm")");
  EXPECT_EQ(promql_string(R"(a"b)"), R"("a\"b")");
  EXPECT_EQ(promql_string(R"(C:\dir\)"), R"("C:\\dir\\")");
  EXPECT_EQ(promql_string("l1\nl2\r\tx"), R"("l1\nl2\r\tx")");
  EXPECT_EQ(promql_string(std::string("a\x01" "b\x7f", 4)), R"("a\x01b\x7f")");
  EXPECT_EQ(promql_string(std::string("nul\0", 4)), R"("nul\x00")");
  // Valid UTF-8 (2, 3 and 4 byte sequences) passes through unchanged.
  EXPECT_EQ(promql_string("m\xc3\xbc \xe6\x97\xa5 \xf0\x9f\x9a\x80"), "\"m\xc3\xbc \xe6\x97\xa5 \xf0\x9f\x9a\x80\"");
  // Not valid UTF-8 (a lone continuation byte, a truncated sequence): every high byte as \xNN,
  // which Prometheus decodes back to the same bytes (its lexer rejects raw invalid UTF-8).
  EXPECT_EQ(promql_string("\xc3\xbc\x80"), R"("\xc3\xbc\x80")");
  EXPECT_EQ(promql_string("x\xe6\x97"), R"("x\xe6\x97")");
  // No raw newline or unescaped quote ever reaches the output.
  const std::string hostile = "a\"\\\n\"\\";
  const std::string lit = promql_string(hostile);
  EXPECT_EQ(lit.find('\n'), std::string::npos);
  EXPECT_EQ(lit, R"("a\"\\\n\"\\")");
}

// Tests selectors with fixed and extra matchers.
TEST(PromqlTest, SeriesSelector) {
  EXPECT_EQ(series_selector("up", "", ""), "up");
  EXPECT_EQ(series_selector("x", R"(a="1")", ""), R"(x{a="1"})");
  EXPECT_EQ(series_selector("x", "", R"(job="j")"), R"(x{job="j"})");
  EXPECT_EQ(series_selector("x", R"(a="1")", R"(job="j")"), R"(x{a="1",job="j"})");
}

// Tests histogram quantile and mean over vLLM e2e.
TEST(PromqlTest, HistogramQuantileAndMean) {
  const MetricBinding& e2e = *find_binding(DialectId::kVllm, Role::kE2e);
  const QueryScope s = scope(R"(job="vllm")", {"model_name"});
  EXPECT_EQ(*quantile_expr(e2e, 0.95, s),
            R"(histogram_quantile(0.95, sum by (le, model_name) (rate(vllm:e2e_request_latency_seconds_bucket{job="vllm"}[5m]))))");
  EXPECT_EQ(*mean_expr(e2e, s),
            R"(sum by (model_name) (rate(vllm:e2e_request_latency_seconds_sum{job="vllm"}[5m])) / )"
            R"(sum by (model_name) (rate(vllm:e2e_request_latency_seconds_count{job="vllm"}[5m])))");
  EXPECT_EQ(*rate_expr(e2e, scope("", {})), "sum(rate(vllm:e2e_request_latency_seconds_count[5m]))");
  EXPECT_EQ(value_expr(e2e, s), std::nullopt);
}

// Tests that a stage role carries its fixed stage matcher.
TEST(PromqlTest, StageMatcherIsKept) {
  const MetricBinding& prefill = *find_binding(DialectId::kInferscope, Role::kPrefill);
  EXPECT_EQ(*quantile_expr(prefill, 0.5, scope(R"(model="m")", {}, "1m")),
            R"(histogram_quantile(0.5, sum by (le) (rate(inferscope_stage_duration_seconds_bucket{stage="prefill",model="m"}[1m]))))");
}

// Tests counter ratios (llama.cpp) and scaled ones (Triton µs counters).
TEST(PromqlTest, CounterRatioMean) {
  const MetricBinding& tpot = *find_binding(DialectId::kLlamaCpp, Role::kTpot);
  EXPECT_EQ(*mean_expr(tpot, scope("", {"job"})),
            "sum by (job) (rate(llamacpp:tokens_predicted_seconds_total[5m])) / "
            "sum by (job) (rate(llamacpp:tokens_predicted_total[5m]))");
  EXPECT_EQ(quantile_expr(tpot, 0.99, scope("", {})), std::nullopt);
  const MetricBinding& e2e = *find_binding(DialectId::kTriton, Role::kE2e);
  EXPECT_EQ(*mean_expr(e2e, scope("", {"model"})),
            "(sum by (model) (rate(nv_inference_request_duration_us[5m])) / "
            "sum by (model) (rate(nv_inference_request_success[5m]))) * 1e-06");
}

// Tests gauge aggregation, sums of gauges and busy-from-idle CPU.
TEST(PromqlTest, GaugeKinds) {
  EXPECT_EQ(*value_expr(*find_binding(DialectId::kVllm, Role::kKvUsage), scope("", {"model_name"})),
            "max by (model_name) (vllm:kv_cache_usage_perc)");
  EXPECT_EQ(*value_expr(*find_binding(DialectId::kDcgm, Role::kGpuMemoryTotal), scope("", {"gpu"})),
            "(sum by (gpu) (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)) * 1048576");
  EXPECT_EQ(*value_expr(*find_binding(DialectId::kNode, Role::kHostCpuBusy), scope("", {"instance"}, "1m")),
            R"(1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[1m])))");
  EXPECT_EQ(*value_expr(*find_binding(DialectId::kNode, Role::kHostMemoryUsed), scope("", {})),
            "sum(node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes)");
}

// Tests error ratios: subset accounting (vLLM) and disjoint accounting (Triton).
TEST(PromqlTest, ErrorRatio) {
  EXPECT_EQ(*error_ratio_expr(DialectId::kVllm, scope("", {"model_name"}, "2m")),
            R"((sum by (model_name) (rate(vllm:request_success_total{finished_reason="error"}[2m])) or )"
            R"(sum by (model_name) (rate(vllm:request_success_total[2m])) * 0) / )"
            R"(sum by (model_name) (rate(vllm:request_success_total[2m])))");
  const auto triton = error_ratio_expr(DialectId::kTriton, scope("", {}));
  ASSERT_TRUE(triton);
  EXPECT_NE(triton->find("/ ((sum(rate(nv_inference_request_failure[5m]))"), std::string::npos) << *triton;
  EXPECT_EQ(error_ratio_expr(DialectId::kLlamaCpp, scope("", {})), std::nullopt);
}

// Tests presence expressions with legacy names or-ed in.
TEST(PromqlTest, PresenceWithLegacy) {
  const MetricBinding& kv = *find_binding(DialectId::kVllm, Role::kKvUsage);
  EXPECT_EQ(presence_expr(kv, scope("", {"job", "instance"}), true),
            "count by (job, instance) (vllm:kv_cache_usage_perc) or "
            "count by (job, instance) (vllm:gpu_cache_usage_perc)");
  EXPECT_EQ(presence_expr(*find_binding(DialectId::kVllm, Role::kE2e), scope("", {"job"}), false),
            "count by (job) (vllm:e2e_request_latency_seconds_count)");
  EXPECT_EQ(with_metric(kv, "vllm:gpu_cache_usage_perc").metric, "vllm:gpu_cache_usage_perc");
}

// Tests number formatting of PromQL literals.
TEST(PromqlTest, FormatNumber) {
  EXPECT_EQ(format_number(0.95), "0.95");
  EXPECT_EQ(format_number(1e-6), "1e-06");
  EXPECT_EQ(format_number(20), "20");
  EXPECT_EQ(format_number(1.0 / 0.0), "+Inf");
}

}  // namespace
}  // namespace inferscope::dialect
