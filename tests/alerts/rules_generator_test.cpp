// Tests of the rules generator's output text, lacking-alert lists and validation (promtool checks
// the files in rules_promtool_integration_test.cpp).
#include "alerts/rules_generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace inferscope::alerts {
namespace {

using dialect::DialectId;
using namespace std::chrono_literals;

GeneratedRules generate_for(std::vector<RulesTarget> targets, RulesConfig config = {}) {
  config.targets = std::move(targets);
  auto rules = generate_rules(config);
  if (!rules) ADD_FAILURE() << rules.error().message;
  return rules ? *rules : GeneratedRules{};
}

const RuleFile* file_named(const GeneratedRules& rules, const std::string& name) {
  for (const RuleFile& f : rules.files) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::vector<std::string> lacking_names(const GeneratedRules& rules, const std::string& job) {
  std::vector<std::string> names;
  for (const LackingAlert& l : rules.lacking.at(job)) names.push_back(l.alert);
  return names;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Tests the file set: the common file first, then one per target named after its job.
TEST(RulesGeneratorTest, OneFilePerTargetPlusCommon) {
  const auto rules = generate_for({{"vllm-a", DialectId::kVllm}, {"node/1", DialectId::kNode}});
  ASSERT_EQ(rules.files.size(), 3u);
  EXPECT_EQ(rules.files[0].name, "inferscope-common.rules.yml");
  EXPECT_EQ(rules.files[1].name, "target-vllm-a.rules.yml");
  EXPECT_EQ(rules.files[2].name, "target-node_1.rules.yml");
  EXPECT_TRUE(contains(rules.files[0].text, "alert: InferscopeWatchdog"));
  EXPECT_TRUE(contains(rules.files[0].text, "expr: 'vector(1)'"));
  EXPECT_TRUE(contains(rules.files[0].text, "inferscope_notifications_total{result=\"failed\"}"));
  EXPECT_TRUE(contains(rules.files[2].text, "up{job=\"node/1\"} == 0"));
}

// Tests that vLLM rules use vLLM's own names, its model label and legacy fallbacks.
TEST(RulesGeneratorTest, VllmUsesItsOwnNames) {
  const auto rules = generate_for({{"v", DialectId::kVllm}});
  const std::string& text = file_named(rules, "target-v.rules.yml")->text;
  EXPECT_TRUE(contains(text, "rate(vllm:e2e_request_latency_seconds_bucket{job=\"v\"}[5m])"));
  EXPECT_TRUE(contains(text, "label_replace("));  // model_name -> model
  EXPECT_TRUE(contains(text, "or (max by (job, model_name) (vllm:gpu_cache_usage_perc{job=\"v\"}))"));
  EXPECT_TRUE(contains(text, "vllm:time_per_output_token_seconds_count"));  // absent check accepts the old name
  EXPECT_FALSE(contains(text, "inferscope_request_duration_seconds"));
  // vLLM names the waiting adapters in a label of vllm:lora_requests_info, it does not count the requests.
  // Nor pools and endpoints: a vLLM instance is one worker of a disaggregated fleet, not its router.
  EXPECT_EQ(lacking_names(rules, "v"), (std::vector<std::string>{kGpuMemoryHigh, kLoraRequestsWaiting,
                                                                  kPoolRequestsWaiting, kEndpointLoadSkewed}));
  EXPECT_TRUE(contains(text, "# InferscopeGpuMemoryHigh is not generated for this target"));
}

// Tests that the vLLM rules need no removed name: every vllm: series they read is exposed by a
// vLLM past every removal (tests/dialect/testdata, constructed), unless it is the older name of a
// binding, read only beside the current one (`or`), so a server upgraded past the removals is
// alerted on in full.
TEST(RulesGeneratorTest, VllmRulesReadOnlyPostRemovalNamesOrTheirFallbacks) {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/dialect/testdata/vllm-v1-2026-dp2-constructed-metrics.txt");
  std::stringstream fixture;
  fixture << in.rdbuf();
  std::set<std::string> exposed;
  const std::regex sample_name(R"((^|\n)(vllm:[a-zA-Z0-9_:]+))");
  const std::string text = fixture.str();
  for (std::sregex_iterator m(text.begin(), text.end(), sample_name), end; m != end; ++m) {
    const std::string name = (*m)[2];
    exposed.insert(name);
    // A histogram's base name (what the rules' annotations and absent() checks name).
    for (const char* suffix : {"_bucket", "_count", "_sum"})
      if (name.ends_with(suffix)) exposed.insert(name.substr(0, name.size() - std::string_view(suffix).size()));
  }
  ASSERT_GT(exposed.size(), 20u);
  std::set<std::string> legacy;
  std::set<std::string> feature;  // a feature's families (the NIXL KV connector's): absent while it is off
  for (const dialect::MetricBinding& b : dialect::dialect(DialectId::kVllm).bindings) {
    for (const dialect::LegacyName& l : b.legacy) legacy.insert(std::string(l.name));
    if (b.presence == dialect::Presence::kFeature) feature.insert(std::string(b.metric));
  }

  const auto rules = generate_for({{"v", DialectId::kVllm}});
  const std::string& rule_text = file_named(rules, "target-v.rules.yml")->text;
  const std::regex read_name(R"(vllm:[a-zA-Z0-9_:]+)");
  std::size_t read = 0;
  for (std::sregex_iterator m(rule_text.begin(), rule_text.end(), read_name), end; m != end; ++m) {
    std::string name = m->str();
    if (exposed.count(name)) {
      ++read;
      continue;
    }
    for (const char* suffix : {"_bucket", "_count", "_sum"})
      if (name.ends_with(suffix)) name.resize(name.size() - std::string_view(suffix).size());
    EXPECT_TRUE(legacy.count(name) || feature.count(name))
        << m->str() << " is neither exposed after the removals nor a binding's older name nor a feature's";
  }
  EXPECT_GT(read, 10u);
}

// Tests that a custom target's rules read its mapped names, with its model label renamed and
// what the mapping lacks listed as lacking.
TEST(RulesGeneratorTest, CustomTargetUsesItsMapping) {
  auto custom = dialect::make_custom_dialect({{"e2e", "llm_request_latency_seconds", ""},
                                              {"requests", "llm_requests_total", ""},
                                              {"errors", "llm_request_failures_total", ""},
                                              {"waiting", "llm_queue_size", ""},
                                              {"gpu_memory_used", "gpu_mem_used_mb", "MB"},
                                              {"gpu_memory_total", "gpu_mem_total_mb", "MB"}},
                                             "llm_model");
  ASSERT_TRUE(custom.ok()) << custom.error().message;
  RulesConfig config;
  config.targets = {{"house", DialectId::kCustom, *custom}};
  auto rules = generate_rules(config);
  ASSERT_TRUE(rules.ok()) << rules.error().message;
  const std::string& text = file_named(*rules, "target-house.rules.yml")->text;
  EXPECT_TRUE(contains(text, "rate(llm_request_latency_seconds_bucket{job=\"house\"}[5m])")) << text;
  EXPECT_TRUE(contains(text, "\"model\", \"$1\", \"llm_model\""));  // llm_model -> model
  EXPECT_TRUE(contains(text, "alert: InferscopeE2eP99OverSlo"));
  EXPECT_TRUE(contains(text, "alert: InferscopeErrorRatioHigh"));
  EXPECT_TRUE(contains(text, "Errors of llm_request_failures_total carry no kind label"));
  EXPECT_TRUE(contains(text, "record: inferscope:gpu_memory_used_bytes"));
  EXPECT_TRUE(contains(text, "(sum by (job, instance) (gpu_mem_used_mb{job=\"house\"})) * ")) << text;
  EXPECT_TRUE(contains(text, "# Roles its mapping lacks (no rules, panels or doctor evidence for them): ttft, queue"));
  const auto lacking = lacking_names(*rules, "house");
  for (const char* alert : {kTtftP95OverSlo, kTpotP95OverSlo, kKvCacheFull, kPreemptionsRising, kThroughputHalved}) {
    EXPECT_NE(std::find(lacking.begin(), lacking.end(), alert), lacking.end()) << alert;
  }
  EXPECT_EQ(std::find(lacking.begin(), lacking.end(), kE2eP99OverSlo), lacking.end());
  EXPECT_EQ(std::find(lacking.begin(), lacking.end(), kGpuMemoryHigh), lacking.end());
}

// Tests that llama.cpp lacks the latency alerts, says so in the file and points to the gateway.
TEST(RulesGeneratorTest, LlamaCppLacksLatencyAlerts) {
  const auto rules = generate_for({{"llama", DialectId::kLlamaCpp}});
  const auto lacking = lacking_names(rules, "llama");
  for (const char* alert : {kE2eP99OverSlo, kE2eP95OverSlo, kTtftP95OverSlo, kTpotP95OverSlo, kErrorRatioHigh,
                            kPreemptionsRising, kThroughputHalved, kGpuMemoryHigh}) {
    EXPECT_NE(std::find(lacking.begin(), lacking.end(), alert), lacking.end()) << alert;
  }
  for (const char* alert : {kRequestsWaiting, kKvCacheFull, kTargetDown, kLatencyMetricsAbsent}) {
    EXPECT_EQ(std::find(lacking.begin(), lacking.end(), alert), lacking.end()) << alert;
  }
  const std::string& text = file_named(rules, "target-llama.rules.yml")->text;
  EXPECT_TRUE(contains(text, "# InferscopeE2eP99OverSlo is not generated for this target: llama.cpp llama-server "
                             "exposes no e2e metric; put `inferscope gateway` in front"));
  EXPECT_TRUE(contains(text, "record: inferscope:tpot_seconds:mean"));
  EXPECT_FALSE(contains(text, "record: inferscope:tpot_seconds:p95"));
  EXPECT_TRUE(contains(text, "rate(llamacpp:tokens_predicted_seconds_total{job=\"llama\"}[5m])"));
}

// Tests default `for` values and per-alert overrides.
TEST(RulesGeneratorTest, ForDurationsDefaultAndOverride) {
  EXPECT_EQ(default_for(kE2eP99OverSlo), 10min);
  EXPECT_EQ(default_for(kE2eP95OverSlo), 5min);
  EXPECT_EQ(default_for(kErrorRatioHigh), 2min);
  EXPECT_EQ(default_for(kWatchdog), 0min);
  RulesConfig config;
  config.alert_for[kE2eP99OverSlo] = 5s;
  config.evaluation_interval = 1s;
  config.rate_window = 10s;
  const auto rules = generate_for({{"s", DialectId::kInferscope}}, config);
  const std::string& text = file_named(rules, "target-s.rules.yml")->text;
  const auto at = text.find("alert: InferscopeE2eP99OverSlo");
  ASSERT_NE(at, std::string::npos);
  EXPECT_TRUE(contains(text.substr(at, 200), "for: 5s"));
  EXPECT_TRUE(contains(text, "    interval: 1s\n"));
  EXPECT_TRUE(contains(text, "[10s]"));
  const auto p95 = text.find("alert: InferscopeE2eP95OverSlo");
  EXPECT_TRUE(contains(text.substr(p95, 200), "for: 5m"));
}

// Tests that an undetected dialect gets only the down alert and lists everything else as lacking.
TEST(RulesGeneratorTest, UnknownDialectGetsGenericAlertsOnly) {
  const auto rules = generate_for({{"mystery", std::nullopt}});
  const std::string& text = file_named(rules, "target-mystery.rules.yml")->text;
  EXPECT_TRUE(contains(text, "alert: InferscopeTargetDown"));
  EXPECT_FALSE(contains(text, "record:"));
  EXPECT_EQ(rules.lacking.at("mystery").size(), std::size(kTargetAlerts) - 1);
}

// Tests that the inferscope dialect takes GPU alerts from serve's DCGM-named families.
TEST(RulesGeneratorTest, InferscopeGpuFromDcgmNames) {
  const auto rules = generate_for({{"serve", DialectId::kInferscope}});
  const std::string& text = file_named(rules, "target-serve.rules.yml")->text;
  EXPECT_TRUE(contains(text, "DCGM_FI_DEV_FB_USED{job=\"serve\"}"));
  EXPECT_TRUE(contains(text, "alert: InferscopeGpuMemoryHigh"));
  EXPECT_TRUE(lacking_names(rules, "serve").empty());
  EXPECT_TRUE(contains(text, "record: inferscope:stage_seconds:p95"));
  EXPECT_TRUE(contains(text, "sum by (le, job, model, stage)"));
}

// Tests that the disaggregation alerts go to every dialect with the series: serve's, Dynamo's
// and llm-d's fleets get all three, vLLM's NIXL transfers the bandwidth one; that serve's `pool`
// label survives the renaming the other dialects' pool labels go through; and that the bandwidth
// divides per-job means (serve's bytes carry no model label, its transfer times do).
TEST(RulesGeneratorTest, DisaggregationAlertsWhereTheSeriesAre) {
  const auto rules = generate_for({{"serve", DialectId::kInferscope}, {"dyn", DialectId::kDynamo},
                                   {"llmd", DialectId::kLlmd}, {"v", DialectId::kVllm}});
  for (const char* job : {"serve", "dyn", "llmd"}) {
    const std::string& text = file_named(rules, std::string("target-") + job + ".rules.yml")->text;
    for (const char* alert : kDisaggregationAlerts) {
      if (std::string_view(job) == "llmd" && std::string_view(alert) == kKvTransferBandwidthHalved) continue;
      EXPECT_TRUE(contains(text, std::string("alert: ") + alert)) << job << " " << alert;
    }
  }
  // llm-d's router sees no transfers: they run between the pods.
  EXPECT_FALSE(contains(file_named(rules, "target-llmd.rules.yml")->text, std::string("alert: ") + kKvTransferBandwidthHalved));
  EXPECT_TRUE(contains(file_named(rules, "target-v.rules.yml")->text, std::string("alert: ") + kKvTransferBandwidthHalved));
  const std::string& serve = file_named(rules, "target-serve.rules.yml")->text;
  EXPECT_FALSE(contains(serve, "max without (pool)"));
  EXPECT_TRUE(contains(serve, "sum by (job, pool) (inferscope_pool_requests_waiting{job=\"serve\"})") ||
              contains(serve, "max by (job, pool) (inferscope_pool_requests_waiting{job=\"serve\"})"))
      << serve;
  EXPECT_TRUE(contains(serve, "sum by (job) (rate(inferscope_kv_transfer_bytes_sum{job=\"serve\"}[5m]))")) << serve;
}

// Tests validation errors: they name the field.
TEST(RulesGeneratorTest, RejectsBadConfig) {
  RulesConfig config;
  config.targets = {{"a", DialectId::kVllm}, {"a", DialectId::kTgi}};
  auto twice = generate_rules(config);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().message, "cannot generate rules: job name 'a' is used twice");
  config.targets = {{"", DialectId::kVllm}};
  EXPECT_FALSE(generate_rules(config));
  config.targets = {{"a", DialectId::kVllm}};
  config.slo.error_ratio = 1.5;
  auto ratio = generate_rules(config);
  ASSERT_FALSE(ratio);
  EXPECT_EQ(ratio.error().message, "cannot generate rules: slo.error_ratio must be a ratio in (0, 1]");
  config.slo = {};
  config.slo.e2e_p99_seconds = -1;
  EXPECT_FALSE(generate_rules(config));
  config.slo = {};
  config.rate_window = 0ms;
  EXPECT_FALSE(generate_rules(config));
}

}  // namespace
}  // namespace inferscope::alerts
