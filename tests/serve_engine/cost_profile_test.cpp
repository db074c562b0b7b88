// Tests of the shipped cost profiles, the seed-mock formula and profile loading.
#include "serve/engine/cost_profile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "serve/engine/cost_model.h"

namespace inferscope::serve {
namespace {

const CostProfile& builtin(const std::string& name) {
  static const ProfileCatalog catalog = ProfileCatalog::load("").value();
  const CostProfile* p = catalog.find(name);
  if (p == nullptr) {
    ADD_FAILURE() << "missing profile " << name;
    std::abort();
  }
  return *p;
}

// tpot_s is the decode step cost of `batch` sequences of `context` tokens.
double tpot_s(const CostProfile& p, std::uint32_t batch, std::uint64_t context) {
  return step_cost(p, StepShape{.decode_seqs = batch, .decode_context = batch * context}, 1, 1);
}

// prefill_s is the cost of one step prefilling a fresh prompt of n tokens.
double prefill_s(const CostProfile& p, std::uint32_t n) {
  return step_cost(p, StepShape{.prefill_tokens = n, .prefill_context = n * (n - 1) / 2.0, .new_requests = 1}, 1, 1);
}

// Tests that every shipped profile loads, names its source section, and matches its file name.
TEST(CostProfileTest, ShippedProfilesLoadWithSources) {
  auto catalog = ProfileCatalog::load("");
  ASSERT_TRUE(catalog) << catalog.error().message;
  const std::vector<std::string> want = {"llama-3.1-8b-a100-bf16", "llama-3.1-8b-h100-bf16",
                                         "llama-3.1-8b-h100-fp8", "seed-mock", "zero-cost"};
  EXPECT_EQ(catalog->names(), want);
  for (const auto& name : want) {
    const CostProfile* p = catalog->find(name);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(p->source.contains("reference")) << name;
    EXPECT_GT(p->kv_capacity_tokens, 0u) << name;
  }
}

// Tests the calibration targets of latency-definitions.md §12.3 on the shipped numbers.
TEST(CostProfileTest, CalibrationMatchesReferenceTargets) {
  const auto& fp8 = builtin("llama-3.1-8b-h100-fp8");
  const auto& bf16 = builtin("llama-3.1-8b-h100-bf16");
  const auto& a100 = builtin("llama-3.1-8b-a100-bf16");
  EXPECT_GE(tpot_s(fp8, 1, 1000), 0.0045);  // TPOT H100 FP8 ~4.5-5.5 ms
  EXPECT_LE(tpot_s(fp8, 1, 1000), 0.0055);
  EXPECT_GE(tpot_s(bf16, 1, 1000), 0.006);  // TPOT H100 BF16 ~6-7.5 ms
  EXPECT_LE(tpot_s(bf16, 1, 1000), 0.0075);
  double ratio = tpot_s(a100, 1, 1000) / tpot_s(bf16, 1, 1000);
  EXPECT_GE(ratio, 1.5);  // A100 ~1.5-1.7x slower per decode step
  EXPECT_LE(ratio, 1.7);
  // NIM H100 FP8: ITL 5.19 ms at concurrency 25, 7.57 ms at 100 (±15 %).
  EXPECT_NEAR(tpot_s(fp8, 25, 1000), 0.00519, 0.00519 * 0.15);
  EXPECT_NEAR(tpot_s(fp8, 100, 1500), 0.00757, 0.00757 * 0.15);
  // Prefill H100 FP8: ~55k tok/s at 2k, ~13.5k tok/s at 20k (±15 %).
  double rate_2k = 2048 / (prefill_s(fp8, 2048) - fp8.step_overhead_s - fp8.forward_base_s);
  EXPECT_NEAR(rate_2k, 55000, 55000 * 0.15);
  double cost_20k = step_cost(fp8, StepShape{.prefill_tokens = 20000, .prefill_context = 20000 * 9999.5}, 1, 1);
  EXPECT_NEAR(20000 / cost_20k, 13500, 13500 * 0.15);
  // NIM A100 BF16, 500-token prompt at concurrency 1: TTFT 48.3 ms (±15 %).
  EXPECT_NEAR(prefill_s(a100, 500), 0.0483, 0.0483 * 0.15);
}

// Tests that seed-mock reproduces 0.2 s + 0.001 s/input token + 0.01 s/output token for a solo
// request and caps the output so the total stays within 5 s.
TEST(CostProfileTest, SeedMockReproducesTheFormula) {
  const auto& p = builtin("seed-mock");
  auto solo_total = [&](std::uint32_t in, std::uint32_t out) {
    double total = step_cost(p, StepShape{.prefill_tokens = in, .new_requests = 1}, 1, 1);
    for (std::uint32_t i = 1; i < out; ++i) total += step_cost(p, StepShape{.decode_seqs = 1, .decode_context = in + i}, 1, 1);
    return total;
  };
  EXPECT_NEAR(solo_total(100, 50), 0.2 + 0.1 + 0.5, 1e-9);
  EXPECT_NEAR(solo_total(1000, 1), 0.2 + 1.0 + 0.01, 1e-9);
  EXPECT_EQ(solo_output_cap(p, 100), 470u);  // 0.2 + 0.1 + 4.7 = 5.0
  EXPECT_LE(solo_total(100, solo_output_cap(p, 100)), 5.0 + 1e-9);
  EXPECT_GT(solo_total(100, solo_output_cap(p, 100) + 1), 5.0);
  EXPECT_EQ(solo_output_cap(p, 6000), 1u);  // the prompt alone exceeds 5 s: one token
  EXPECT_EQ(solo_output_cap(builtin("llama-3.1-8b-h100-bf16"), 100), 0xFFFFFFFFu);
}

// Tests that zero-cost steps cost nothing and slowdown factors scale their own parts.
TEST(CostProfileTest, ZeroCostAndSlowdowns) {
  StepShape mixed{.prefill_tokens = 100, .decode_seqs = 10, .decode_context = 1000};
  EXPECT_EQ(step_cost(builtin("zero-cost"), mixed, 5, 5), 0.0);
  const auto& p = builtin("llama-3.1-8b-h100-bf16");
  StepShape decode{.decode_seqs = 10, .decode_context = 1000};
  EXPECT_NEAR(step_cost(p, decode, 1, 3), 3 * step_cost(p, decode, 1, 1), 1e-12);
  EXPECT_NEAR(step_cost(p, decode, 7, 1), step_cost(p, decode, 1, 1), 1e-12);
  StepShape prefill{.prefill_tokens = 1000};
  EXPECT_NEAR(step_cost(p, prefill, 2, 1), 2 * step_cost(p, prefill, 1, 1), 1e-12);
  EXPECT_EQ(step_cost(p, StepShape{}, 1, 1), 0.0);
}

// Tests loading extra profiles from a folder (replacing a built-in by name) and the errors for
// a missing path and an unknown field.
TEST(CostProfileTest, LoadsFolderAndReportsErrors) {
  auto dir = std::filesystem::temp_directory_path() / ("inferscope_profiles_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const char* name, const std::string& text) { std::ofstream(dir / name) << text; };
  std::string base = R"("source": {"reference": "test"}, "step_overhead_s": 0, "forward_base_s": 0.5,
    "prefill_token_s": 0, "prefill_attention_s": 0, "decode_seq_s": 0, "decode_kv_token_s": 0,
    "kv_capacity_tokens": 1000, "kv_bytes_per_token": 1, "weights_bytes": 1, "gpu_memory_total_bytes": 10,
    "idle_power_w": 1, "max_power_w": 2, "idle_temperature_c": 30, "max_temperature_c": 40)";
  write("a.json", "{\"name\": \"zero-cost\", " + base + "}");
  write("b.json", "{\"name\": \"custom\", " + base + "}");
  auto catalog = ProfileCatalog::load(dir.string());
  ASSERT_TRUE(catalog) << catalog.error().message;
  EXPECT_EQ(catalog->find("zero-cost")->forward_base_s, 0.5);
  EXPECT_NE(catalog->find("custom"), nullptr);
  EXPECT_NE(catalog->find("seed-mock"), nullptr);
  write("c.json", "{\"name\": \"typo\", \"forward_bse_s\": 1, " + base + "}");
  auto bad = ProfileCatalog::load(dir.string());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("forward_bse_s"), std::string::npos) << bad.error().message;
  std::filesystem::remove_all(dir);
  auto missing = ProfileCatalog::load((dir / "nope.json").string());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("cannot read profiles from"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::serve
