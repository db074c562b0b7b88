// Tests of bench_options.h: flags turned into a run set-up.
#include "bench/bench_options.h"

#include <gtest/gtest.h>

namespace inferscope::bench {
namespace {

// Tests that build_run_setup turns flags into a plan and bounds, and names the flag on errors.
TEST(BenchOptionsTest, Validation) {
  BenchOptions o;
  o.request_rate = "50";
  o.max_concurrency = 8;
  o.warmup = "2s";
  o.duration = "30s";
  auto s = build_run_setup(o);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->config.plan.stages.size(), 1u);
  EXPECT_EQ(s->config.plan.stages[0].rate, 50);
  EXPECT_EQ(s->config.plan.stages[0].concurrency, 8u);
  EXPECT_EQ(s->config.bounds.warmup_time, std::chrono::seconds(2));
  EXPECT_EQ(s->config.bounds.max_requests, 0u);
  BenchOptions d;
  auto ds = build_run_setup(d);
  ASSERT_TRUE(ds);
  EXPECT_EQ(ds->config.bounds.max_requests, 1000u);  // vLLM's default when nothing bounds the run
  auto check = [](BenchOptions bad, const char* flag) {
    auto r = build_run_setup(bad);
    ASSERT_FALSE(r) << flag;
    EXPECT_NE(r.error().message.find(flag), std::string::npos) << r.error().message;
  };
  BenchOptions b1;
  b1.stages = "10s:rate=1";
  b1.request_rate = "5";
  check(b1, "--stages");
  BenchOptions b2;
  b2.duration = "10s";
  check(b2, "--num-prompts");  // all-at-once needs a count
  BenchOptions b3;
  b3.warmup = "ten";
  check(b3, "--warmup");
  BenchOptions b4;
  b4.headers = {"NoColon"};
  check(b4, "--header");
  BenchOptions b5;
  b5.dataset_name = "jsonl";
  check(b5, "--dataset-path");
  BenchOptions b6;
  b6.arrival = "burst";
  check(b6, "--arrival");
}

// Tests the prefix pool flags: both together build a pool workload; one alone, one beside
// --shared-prefix-ratio, or one with a dataset is a one-line error naming the flag.
TEST(BenchOptionsTest, PrefixPool) {
  BenchOptions o;
  o.prefix_pool = 8;
  o.prefix_len = 64;
  o.random_input_len = 100;
  auto s = build_run_setup(o);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->workload->next(0).input_tokens, 100u);
  auto check = [](BenchOptions bad, const char* flag) {
    auto r = build_run_setup(bad);
    ASSERT_FALSE(r) << flag;
    EXPECT_NE(r.error().message.find(flag), std::string::npos) << r.error().message;
  };
  BenchOptions alone;
  alone.prefix_pool = 8;
  check(alone, "--prefix-len");
  BenchOptions both = o;
  both.shared_prefix_ratio = 0.5;
  check(both, "--shared-prefix-ratio");
  BenchOptions dataset = o;
  dataset.dataset_name = "jsonl";
  dataset.dataset_path = "x.jsonl";
  check(dataset, "--prefix-pool");
}

}  // namespace
}  // namespace inferscope::bench
