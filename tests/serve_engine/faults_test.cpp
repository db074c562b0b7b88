// Tests of FaultSet parsing, JSON round trip and the dependency latency sampler.
#include "serve/engine/faults.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace inferscope::serve {
namespace {

using nlohmann::json;

// Tests that every fault parses from its documented form and round-trips through to_json.
TEST(FaultsTest, ParsesEveryFaultAndRoundTrips) {
  auto f = parse_faults(json::parse(R"({
    "decode_slowdown": 3, "prefill_slowdown": 2.5, "kv_capacity": 0.25,
    "stall": {"for_ms": 500, "every_s": 10}, "worker_stall": {"for_ms": 2000, "every_s": 30},
    "preprocess_slowdown": {"factor": 2, "add_ms": 40},
    "dependency": {"name": "embedding", "mean_ms": 30, "p99_ms": 120},
    "error_rate": 0.05, "network_delay_ms": 20, "max_num_seqs": 4, "prefix_cache_scramble": 0.8,
    "spec_acceptance": 0.3, "engine_slowdown": {"engine": 2, "factor": 4}, "max_loras": 2})"), FaultSet{});
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->decode_slowdown, 3);
  EXPECT_EQ(f->prefill_slowdown, 2.5);
  EXPECT_EQ(f->kv_capacity, 0.25);
  EXPECT_EQ(f->stall, (PeriodicPause{500, 10}));
  EXPECT_EQ(f->worker_stall, (PeriodicPause{2000, 30}));
  EXPECT_EQ(f->preprocess_slowdown, (PreprocessSlowdown{2, 40}));
  ASSERT_EQ(f->dependencies.size(), 1u);
  EXPECT_EQ(f->dependencies[0].name, "embedding");
  EXPECT_EQ(f->error_rate, 0.05);
  EXPECT_EQ(f->network_delay_ms, 20);
  EXPECT_EQ(f->max_num_seqs, 4u);
  EXPECT_EQ(f->prefix_cache_scramble, 0.8);
  EXPECT_EQ(f->spec_acceptance, 0.3);
  EXPECT_EQ(f->engine_slowdown, (EngineSlowdown{2, 4}));
  EXPECT_EQ(f->max_loras, 2u);
  EXPECT_TRUE(f->any());
  auto again = parse_faults(to_json(*f), FaultSet{});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, *f);
}

// Tests the monitoring faults a fire drill uses: parse, round trip, clear, and bad values.
TEST(FaultsTest, MonitoringFaults) {
  auto f = parse_faults(json::parse(R"({"metrics_down": true, "hide_metrics": ["a_seconds", "b:c"],
                                        "gpu_memory_other": 0.97})"), FaultSet{});
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_TRUE(f->metrics_down);
  EXPECT_EQ(f->hide_metrics, (std::vector<std::string>{"a_seconds", "b:c"}));
  EXPECT_EQ(f->gpu_memory_other, 0.97);
  EXPECT_EQ(parse_faults(to_json(*f), FaultSet{}).value(), *f);
  const FaultSet cleared =
      parse_faults(json::parse(R"({"metrics_down": null, "hide_metrics": null, "gpu_memory_other": null})"), *f).value();
  EXPECT_FALSE(cleared.any());
  for (const char* body : {R"({"metrics_down": 1})", R"({"hide_metrics": "a"})", R"({"hide_metrics": ["9a"]})",
                           R"({"hide_metrics": ["a b"]})", R"({"gpu_memory_other": 1.5})"}) {
    EXPECT_FALSE(parse_faults(json::parse(body), FaultSet{})) << body;
  }
}

// Tests that null clears one fault, "clear" resets all, and no faults serialise as {}.
TEST(FaultsTest, NullClearsAndClearResets) {
  FaultSet base = parse_faults(json::parse(R"({"decode_slowdown": 3, "error_rate": 0.5})"), FaultSet{}).value();
  FaultSet one = parse_faults(json::parse(R"({"decode_slowdown": null})"), base).value();
  EXPECT_EQ(one.decode_slowdown, 1.0);
  EXPECT_EQ(one.error_rate, 0.5);
  FaultSet none = parse_faults(json::parse(R"({"clear": true})"), base).value();
  EXPECT_FALSE(none.any());
  EXPECT_EQ(to_json(none), json::object());
  FaultSet replaced = parse_faults(json::parse(R"({"clear": true, "kv_capacity": 0.5})"), base).value();
  EXPECT_EQ(replaced.decode_slowdown, 1.0);
  EXPECT_EQ(replaced.kv_capacity, 0.5);
}

// Tests that bad input fails with a message naming the key and leaves nothing applied.
TEST(FaultsTest, RejectsBadInput) {
  auto check = [](const char* body, const char* key) {
    auto r = parse_faults(json::parse(body), FaultSet{});
    ASSERT_FALSE(r) << body;
    EXPECT_NE(r.error().message.find("cannot parse faults from request: "), std::string::npos);
    EXPECT_NE(r.error().message.find(key), std::string::npos) << "got " << r.error().message << "; want " << key;
  };
  check(R"({"decode_slowdown": 0})", "decode_slowdown");
  check(R"({"prefix_cache_scramble": 1.5})", "prefix_cache_scramble");
  check(R"({"spec_acceptance": -0.5})", "spec_acceptance");
  check(R"({"decode_slowdown": "x"})", "decode_slowdown");
  check(R"({"kv_capacity": 1.5})", "kv_capacity");
  check(R"({"kv_capacity": 0})", "kv_capacity");
  check(R"({"stall": {"for_ms": 2000, "every_s": 1}})", "stall");
  check(R"({"stall": {"for_ms": 10}})", "stall");
  check(R"({"worker_stall": 5})", "worker_stall");
  check(R"({"error_rate": 2})", "error_rate");
  check(R"({"max_num_seqs": -1})", "max_num_seqs");
  check(R"({"dependency": {"mean_ms": 5}})", "dependency.name");
  check(R"({"dependency": {"name": "a b", "mean_ms": 5}})", "dependency.name");
  check(R"({"dependency": {"name": "x", "mean_ms": 50, "p99_ms": 10}})", "dependency.p99_ms");
  check(R"({"decode_slowdown": 2, "bogus": 1})", "bogus");
  check(R"([1])", "body");
  check(R"({"engine_slowdown": 4})", "engine_slowdown");
  check(R"({"max_loras": 65})", "max_loras");
  check(R"({"max_loras": 1.5})", "max_loras");
  check(R"({"engine_slowdown": {"factor": 4}})", "engine_slowdown.engine");
  check(R"({"engine_slowdown": {"engine": -1, "factor": 4}})", "engine_slowdown.engine");
  check(R"({"engine_slowdown": {"engine": 1, "factor": 0}})", "engine_slowdown.factor");
  check(R"({"engine_slowdown": {"engine": 1, "speed": 2}})", "unknown field speed");
}

// Tests that engine_slowdown reaches only the rank it names, as a prefill and decode slowdown on
// top of the fleet-wide ones, and that no rank sees the engine_slowdown key itself.
TEST(FaultsTest, EngineSlowdownFoldsIntoTheNamedRankOnly) {
  auto f = parse_faults(json::parse(R"({"decode_slowdown": 2, "engine_slowdown": {"engine": 1, "factor": 3}})"),
                        FaultSet{});
  ASSERT_TRUE(f) << f.error().message;
  const FaultSet slowed = faults_for_rank(*f, 1);
  EXPECT_EQ(slowed.decode_slowdown, 6);
  EXPECT_EQ(slowed.prefill_slowdown, 3);
  EXPECT_FALSE(slowed.engine_slowdown.active());
  for (std::uint32_t rank : {0u, 2u}) {
    const FaultSet other = faults_for_rank(*f, rank);
    EXPECT_EQ(other.decode_slowdown, 2) << rank;
    EXPECT_EQ(other.prefill_slowdown, 1) << rank;
    EXPECT_FALSE(other.engine_slowdown.active()) << rank;
  }
  auto cleared = parse_faults(json::parse(R"({"engine_slowdown": null})"), *f);
  ASSERT_TRUE(cleared);
  EXPECT_FALSE(cleared->engine_slowdown.active());
  EXPECT_EQ(faults_for_rank(*cleared, 1).decode_slowdown, 2);
}

// Tests that the dependency sampler is fixed without p99 and log-normal with the requested
// mean and p99 otherwise (checked on 20000 draws, generous tolerance).
TEST(FaultsTest, DependencySamplerMatchesMeanAndP99) {
  std::mt19937_64 rng(7);
  DependencyFault fixed{"embedding", 30, 0};
  EXPECT_EQ(fixed.sample_ms(rng), 30);
  DependencyFault d{"rerank", 40, 200};
  std::vector<double> xs(20000);
  for (double& x : xs) x = d.sample_ms(rng);
  double mean = 0;
  for (double x : xs) mean += x / xs.size();
  std::sort(xs.begin(), xs.end());
  EXPECT_NEAR(mean, 40, 4);
  EXPECT_NEAR(xs[static_cast<std::size_t>(0.99 * xs.size())], 200, 30);
  EXPECT_GT(xs.front(), 0);
}

// Tests the disaggregated fleet's faults: parse, round trip (two pool cuts included), clear,
// and the one-line errors for bad values.
TEST(FaultsTest, DisaggregationFaults) {
  auto f = parse_faults(json::parse(R"({"kv_transfer": 5, "kv_link": {"worker": 1, "factor": 4},
    "kv_transfer_failure": 0.2, "pool_workers": [{"pool": "prefill", "count": 1}, {"pool": "decode", "count": 2}],
    "route_skew": {"endpoint": "decode-3", "weight": 0.9}})"), FaultSet{});
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->kv_transfer, 5);
  EXPECT_EQ(f->kv_link, (KvLink{1, 4}));
  EXPECT_EQ(f->kv_transfer_failure, 0.2);
  ASSERT_EQ(f->pool_workers.size(), 2u);
  EXPECT_EQ(f->pool_workers[1], (PoolWorkers{"decode", 2}));
  EXPECT_EQ(f->route_skew, (RouteSkew{"decode-3", 0.9}));
  auto again = parse_faults(to_json(*f), FaultSet{});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, *f);
  // A second cut of the same pool replaces the first.
  auto recut = parse_faults(json::parse(R"({"pool_workers": {"pool": "prefill", "count": 2}})"), *f);
  ASSERT_TRUE(recut);
  ASSERT_EQ(recut->pool_workers.size(), 2u);
  EXPECT_EQ(recut->pool_workers[1], (PoolWorkers{"prefill", 2}));
  auto cleared = parse_faults(json::parse(R"({"kv_transfer": null, "kv_link": null, "kv_transfer_failure": null,
    "pool_workers": null, "route_skew": null})"), *f);
  ASSERT_TRUE(cleared);
  EXPECT_FALSE(cleared->any());
  for (const char* bad : {R"({"kv_transfer": 0})", R"({"kv_transfer_failure": 1})", R"({"kv_link": {"factor": 2}})",
                          R"({"pool_workers": {"pool": "gpu", "count": 1}})", R"({"pool_workers": {"pool": "decode"}})",
                          R"({"pool_workers": {"pool": "decode", "count": 0}})",
                          R"({"route_skew": {"endpoint": "prefill-0", "weight": 0.5}})",
                          R"({"route_skew": {"endpoint": "decode-0", "weight": 0}})"}) {
    auto r = parse_faults(json::parse(bad), FaultSet{});
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().message.rfind("cannot parse faults from request: ", 0), 0u) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace inferscope::serve
