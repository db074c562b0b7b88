// Tests that every expression the builders produce for every binding of every dialect is valid
// PromQL for Debian's promtool 2.42, and that the main kinds compute the right values.
#include "dialect/promql.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/peers.h"
#include "support/promtool_run.h"

namespace inferscope::dialect {
namespace {

using inferscope::testing::run_promtool;

std::string temp_dir() {
  char pattern[] = "/tmp/inferscope-dialect-XXXXXX";
  return ::mkdtemp(pattern) ? std::string(pattern) : std::string();
}

// yaml_quote writes a YAML single-quoted scalar.
std::string yaml_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// Tests that all builders' output parses: one recording rule per expression, `promtool check rules`.
TEST(PromqlIntegrationTest, EveryBuiltExpressionParses) {
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kPromtool}));
  const std::string dir = temp_dir();
  ASSERT_FALSE(dir.empty());
  std::ofstream rules(dir + "/rules.yml");
  rules << "groups:\n  - name: dialect\n    rules:\n";
  std::size_t count = 0;
  auto add = [&](const std::optional<std::string>& expr) {
    if (!expr) return;
    rules << "      - record: dialect:check:" << count++ << "\n        expr: " << yaml_quote(*expr) << "\n";
  };
  for (DialectId id : kAllDialects) {
    const QueryScope grouped{R"(job="x")", {"job", "instance"}, "5m"};
    const QueryScope flat{"", {}, "1m"};
    for (const MetricBinding& b : dialect(id).bindings) {
      for (const QueryScope& s : {grouped, flat}) {
        add(rate_expr(b, s));
        add(mean_expr(b, s));
        add(quantile_expr(b, 0.99, s));
        add(value_expr(b, s));
        add(presence_expr(b, s, true));
      }
    }
    add(error_ratio_expr(id, grouped));
  }
  rules.close();
  ASSERT_GT(count, 200u);
  const auto result = run_promtool({"check", "rules", "rules.yml"}, dir);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("SUCCESS: " + std::to_string(count) + " rules found"), std::string::npos)
      << result.output;
  std::filesystem::remove_all(dir);
}

// yaml_double_quote writes a YAML double-quoted scalar (\\ \" \n \t and \xNN escaped).
std::string yaml_double_quote(const std::string& text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (c < 0x20) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// Tests that Prometheus decodes promql_string back to exactly the original text: each literal is
// put into a label by label_replace, and promtool compares the alert's label with the raw value.
TEST(PromqlIntegrationTest, StringLiteralRoundTrips) {
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kPromtool}));
  const std::string dir = temp_dir();
  ASSERT_FALSE(dir.empty());
  const std::vector<std::string> values = {
      "plain", "a\"b", "C:\\dir\\", "\\\"", "l1\nl2", "tab\there\r", std::string("c\x01" "d", 3),
      "m\xc3\xbc \xe6\x97\xa5 \xf0\x9f\x9a\x80", "{job=\"x\"} or vector(1)"};
  std::ofstream rules(dir + "/rules.yml");
  std::ofstream test(dir + "/test.yml");
  rules << "groups:\n  - name: literals\n    rules:\n";
  test << "rule_files: [rules.yml]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series: []\n"
       << "    alert_rule_test:\n";
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string expr = "label_replace(vector(1), \"v\", " + promql_string(values[i]) + ", \"\", \"\")";
    rules << "      - alert: Literal" << i << "\n        expr: " << yaml_quote(expr) << "\n";
    test << "      - eval_time: 0m\n        alertname: Literal" << i << "\n        exp_alerts:\n"
         << "          - exp_labels:\n              v: " << yaml_double_quote(values[i]) << "\n";
  }
  rules.close();
  test.close();
  const auto result = run_promtool({"test", "rules", "test.yml"}, dir);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  std::filesystem::remove_all(dir);
}

// Tests values: a histogram quantile and mean, a llama.cpp counter ratio, a scaled Triton mean,
// DCGM memory total in bytes, node CPU busy share and the vLLM error ratio without error series.
TEST(PromqlIntegrationTest, ExpressionsComputeExpectedValues) {
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kPromtool}));
  const std::string dir = temp_dir();
  ASSERT_FALSE(dir.empty());
  const QueryScope s{"", {}, "2m"};
  const std::string p50 = *quantile_expr(*find_binding(DialectId::kVllm, Role::kE2e), 0.5, s);
  const std::string mean = *mean_expr(*find_binding(DialectId::kVllm, Role::kE2e), s);
  const std::string tpot = *mean_expr(*find_binding(DialectId::kLlamaCpp, Role::kTpot), s);
  const std::string triton = *mean_expr(*find_binding(DialectId::kTriton, Role::kQueue), s);
  const std::string fb = *value_expr(*find_binding(DialectId::kDcgm, Role::kGpuMemoryTotal), s);
  const std::string cpu = *value_expr(*find_binding(DialectId::kNode, Role::kHostCpuBusy), s);
  const std::string errors = *error_ratio_expr(DialectId::kVllm, s);
  std::ofstream test(dir + "/test.yml");
  test << "rule_files: []\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n"
       // 10 requests per minute: 2 <= 0.5 s, 8 in (0.5, 1.0]; 7 s per minute in total.
       << "      - series: 'vllm:e2e_request_latency_seconds_bucket{le=\"0.5\"}'\n        values: '0+2x5'\n"
       << "      - series: 'vllm:e2e_request_latency_seconds_bucket{le=\"1.0\"}'\n        values: '0+10x5'\n"
       << "      - series: 'vllm:e2e_request_latency_seconds_bucket{le=\"+Inf\"}'\n        values: '0+10x5'\n"
       << "      - series: 'vllm:e2e_request_latency_seconds_sum'\n        values: '0+7x5'\n"
       << "      - series: 'vllm:e2e_request_latency_seconds_count'\n        values: '0+10x5'\n"
       << "      - series: 'vllm:request_success_total{finished_reason=\"stop\"}'\n        values: '0+10x5'\n"
       // 50 tokens per minute taking 2.5 s: 0.05 s per token.
       << "      - series: 'llamacpp:tokens_predicted_seconds_total'\n        values: '0+2.5x5'\n"
       << "      - series: 'llamacpp:tokens_predicted_total'\n        values: '0+50x5'\n"
       // 4 requests per minute queued 2,000,000 µs in total: 0.5 s each.
       << "      - series: 'nv_inference_queue_duration_us'\n        values: '0+2000000x5'\n"
       << "      - series: 'nv_inference_request_success'\n        values: '0+4x5'\n"
       << "      - series: 'DCGM_FI_DEV_FB_USED{gpu=\"0\"}'\n        values: '1024x5'\n"
       << "      - series: 'DCGM_FI_DEV_FB_FREE{gpu=\"0\"}'\n        values: '3072x5'\n"
       // Two CPUs: one idle all the time, one idle half the time -> 25 % busy.
       << "      - series: 'node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"}'\n        values: '0+60x5'\n"
       << "      - series: 'node_cpu_seconds_total{cpu=\"1\",mode=\"idle\"}'\n        values: '0+30x5'\n"
       << "    promql_expr_test:\n";
  // Values are compared times 1000 and rounded (promtool compares floats exactly).
  auto expect = [&](const std::string& expr, const std::string& value) {
    test << "      - expr: " << yaml_quote("round((" + expr + ") * 1000)") << "\n        eval_time: 4m\n"
         << "        exp_samples:\n          - labels: '{}'\n            value: " << value << "\n";
  };
  expect(p50, "688");      // rank 5 of 10 in (0.5, 1.0] holding ranks 3..10: 0.5 + 0.5 * 3/8 = 0.6875
  expect(mean, "700");
  expect(tpot, "50");
  expect(triton, "500");
  expect(fb, "4294967296000");  // 4096 MiB in bytes, times 1000
  expect(cpu, "250");
  expect(errors, "0");       // no finished_reason="error" series at all: 0, not empty
  test.close();
  const auto result = run_promtool({"test", "rules", "test.yml"}, dir);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace inferscope::dialect
