// Tests the doctor's role mapping (from src/dialect) on recorded and constructed expositions:
// llama.cpp b4748 (recorded), vLLM V1 0.12 and 0.8 (constructed from the reference), inferscope serve.
#include "doctor/role_spec.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "doctor/check_metrics.h"
#include "doctor/exposition_sampling.h"
#include "doctor/sampled_roles.h"

namespace inferscope::doctor {
namespace {

FetchedExposition load(const std::string& name) {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/dialect/testdata/" + name);
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
  const Quantity* busy = snap.find_signal("host_cpu_busy");
  ASSERT_NE(busy, nullptr);
  EXPECT_NEAR(busy->incident.mean, 0.75, 1e-6);
  EXPECT_NEAR(busy->incident.max, 0.75, 1e-6);
  EXPECT_EQ(busy->unit, "ratio");
}

}  // namespace
}  // namespace inferscope::doctor
