// Tests the disaggregation recording rules of the `inferscope`, `dynamo` and `llm-d` dialects with Debian's
// promtool: `promtool test rules` feeds series in each dialect's own names (Dynamo's frontend,
// router and TRT-LLM worker series; llm-d's EPP series, new and GIE-era names) and checks the
// recorded KV-transfer time, bytes and bandwidth, route time, router prefix hit, per-pool queue
// and its growth, and per-endpoint load spread within a pool.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "alerts/rules_generator.h"
#include "support/peers.h"
#include "support/promtool_run.h"

namespace inferscope::alerts {
namespace {

using dialect::DialectId;
using inferscope::testing::run_promtool;
using namespace std::chrono_literals;

class DisaggRulesPromtoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kPromtool}));
    char pattern[] = "/tmp/inferscope-disagg-rules-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // run writes the target's generated rule file and `tests` (a promtool test file's tests: list)
  // and returns promtool's verdict, failing the test with its output when it is not SUCCESS.
  void run(DialectId id, const std::string& job, const std::string& tests) {
    RulesConfig config;
    config.targets = {{job, id}};
    config.rate_window = 1min;
    auto rules = generate_rules(config);
    ASSERT_TRUE(rules) << rules.error().message;
    const RuleFile& file = rules->files.at(1);
    std::ofstream(dir_ + "/" + file.name) << file.text;
    std::ofstream(dir_ + "/test.yml") << "rule_files:\n  - " << file.name << "\nevaluation_interval: 15s\ntests:\n"
                                      << tests;
    const auto checked = run_promtool({"check", "rules", "--lint-fatal", file.name}, dir_);
    EXPECT_EQ(checked.exit_code, 0) << checked.output;
    const auto result = run_promtool({"test", "rules", "test.yml"}, dir_);
    EXPECT_EQ(result.exit_code, 0) << result.output << "\n" << file.text;
  }

  std::string dir_;
};

// Values are powers of two so that promtool's exact comparison holds after rate() arithmetic.

// Tests inferscope serve's disaggregated mode, whose series already carry `pool` and `endpoint`
// (the renames must keep them) and whose bytes histogram has no model label while the
// kv_transfer stage has one (the bandwidth is taken per job): 64 MiB per 31.25 ms transfer is
// 2 GiB/s; the prefill pool's queue grows by one request per scrape, the decode pool's stays
// empty; decode-0 holds 3 requests and decode-1 one (spread 1.5).
TEST_F(DisaggRulesPromtoolTest, ServeKeepsPoolAndEndpointLabelsAndRecordsBandwidth) {
  const std::string j = R"(job="t-serve",instance="127.0.0.1:9000")";
  const std::string tests = R"(  - interval: 15s
    input_series:
      - series: 'inferscope_stage_duration_seconds_sum{)" + j + R"(,model="m",stage="kv_transfer"}'
        values: '0+0.03125x60'
      - series: 'inferscope_stage_duration_seconds_count{)" + j + R"(,model="m",stage="kv_transfer"}'
        values: '0+1x60'
      - series: 'inferscope_kv_transfer_bytes_sum{)" + j + R"(}'
        values: '0+67108864x60'
      - series: 'inferscope_kv_transfer_bytes_count{)" + j + R"(}'
        values: '0+1x60'
      - series: 'inferscope_pool_requests_waiting{)" + j + R"(,pool="prefill"}'
        values: '0+1x60'
      - series: 'inferscope_pool_requests_waiting{)" + j + R"(,pool="decode"}'
        values: '0x60'
      - series: 'inferscope_endpoint_requests{)" + j + R"(,pool="decode",endpoint="decode-0"}'
        values: '3x60'
      - series: 'inferscope_endpoint_requests{)" + j + R"(,pool="decode",endpoint="decode-1"}'
        values: '1x60'
    promql_expr_test:
      - expr: inferscope:kv_transfer_bytes_per_second:mean
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:kv_transfer_bytes_per_second:mean{job="t-serve"}'
            value: 2147483648
      - expr: inferscope:pool_waiting
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:pool_waiting{job="t-serve",pool="decode"}'
            value: 0
          - labels: 'inferscope:pool_waiting{job="t-serve",pool="prefill"}'
            value: 40
      - expr: inferscope:endpoint_load
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:endpoint_load{endpoint="decode-0",job="t-serve",pool="decode"}'
            value: 3
          - labels: 'inferscope:endpoint_load{endpoint="decode-1",job="t-serve",pool="decode"}'
            value: 1
      - expr: inferscope:endpoint_load:spread
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:endpoint_load:spread{job="t-serve",pool="decode"}'
            value: 1.5
)";
  run(DialectId::kInferscope, "t-serve", tests);
}

// Tests Dynamo: 1 request per 15 s, each with a 31.25 ms KV transfer of 64 MiB (2 GiB/s) and a
// 1.95 ms route stage, 25 % predicted prefix overlap; the prefill pool's router queue grows by one request
// per scrape while the decode pool's stays empty; decode workers hold 30 and 10 KV blocks (spread
// 1.5), prefill workers none (no spread while a pool is idle).
TEST_F(DisaggRulesPromtoolTest, DynamoRecordsTransferRouteAndPoolSeries) {
  const std::string j = R"(job="t-dynamo",instance="127.0.0.1:9000")";
  const std::string worker = j + R"(,model_name="m",disaggregation_mode="prefill",engine_type="trtllm")";
  const std::string router = j + R"(,dynamo_namespace="dynamo",dynamo_component="router",router_id="0")";
  const std::string tests = R"(  - interval: 15s
    input_series:
      - series: 'trtllm_kv_transfer_latency_seconds_bucket{)" + worker + R"(,le="0.025"}'
        values: '0x60'
      - series: 'trtllm_kv_transfer_latency_seconds_bucket{)" + worker + R"(,le="0.05"}'
        values: '0+1x60'
      - series: 'trtllm_kv_transfer_latency_seconds_bucket{)" + worker + R"(,le="+Inf"}'
        values: '0+1x60'
      - series: 'trtllm_kv_transfer_latency_seconds_sum{)" + worker + R"(}'
        values: '0+0.03125x60'
      - series: 'trtllm_kv_transfer_latency_seconds_count{)" + worker + R"(}'
        values: '0+1x60'
      - series: 'trtllm_kv_transfer_bytes_sum{)" + worker + R"(}'
        values: '0+67108864x60'
      - series: 'trtllm_kv_transfer_bytes_count{)" + worker + R"(}'
        values: '0+1x60'
      - series: 'dynamo_frontend_stage_duration_seconds_sum{)" + j + R"(,stage="route"}'
        values: '0+0.001953125x60'
      - series: 'dynamo_frontend_stage_duration_seconds_count{)" + j + R"(,stage="route"}'
        values: '0+1x60'
      - series: 'dynamo_component_router_kv_hit_rate_sum{)" + router + R"(}'
        values: '0+0.25x60'
      - series: 'dynamo_component_router_kv_hit_rate_count{)" + router + R"(}'
        values: '0+1x60'
      - series: 'dynamo_frontend_router_queue_pending_requests{)" + j + R"(,worker_type="prefill"}'
        values: '0+1x60'
      - series: 'dynamo_frontend_router_queue_pending_requests{)" + j + R"(,worker_type="decode"}'
        values: '0x60'
      - series: 'dynamo_frontend_worker_active_decode_blocks{)" + j + R"(,dp_rank="0",worker_id="1",worker_type="prefill"}'
        values: '0x60'
      - series: 'dynamo_frontend_worker_active_decode_blocks{)" + j + R"(,dp_rank="0",worker_id="2",worker_type="prefill"}'
        values: '0x60'
      - series: 'dynamo_frontend_worker_active_decode_blocks{)" + j + R"(,dp_rank="0",worker_id="3",worker_type="decode"}'
        values: '30x60'
      - series: 'dynamo_frontend_worker_active_decode_blocks{)" + j + R"(,dp_rank="0",worker_id="4",worker_type="decode"}'
        values: '10x60'
    promql_expr_test:
      - expr: inferscope:kv_transfer_seconds:mean
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:kv_transfer_seconds:mean{job="t-dynamo"}'
            value: 0.03125
      - expr: inferscope:kv_transfer_seconds:p99
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:kv_transfer_seconds:p99{job="t-dynamo"}'
            value: 0.04975
      - expr: inferscope:stage_seconds:mean{stage="kv_transfer"}
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:stage_seconds:mean{job="t-dynamo",stage="kv_transfer"}'
            value: 0.03125
      - expr: inferscope:kv_transfer_bytes:mean
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:kv_transfer_bytes:mean{job="t-dynamo"}'
            value: 67108864
      - expr: inferscope:kv_transfer_bytes_per_second:mean
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:kv_transfer_bytes_per_second:mean{job="t-dynamo"}'
            value: 2147483648
      - expr: inferscope:route_seconds:mean
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:route_seconds:mean{job="t-dynamo"}'
            value: 0.001953125
      - expr: inferscope:route_prefix_hit:mean
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:route_prefix_hit:mean{job="t-dynamo"}'
            value: 0.25
      - expr: inferscope:pool_waiting
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:pool_waiting{job="t-dynamo",pool="decode"}'
            value: 0
          - labels: 'inferscope:pool_waiting{job="t-dynamo",pool="prefill"}'
            value: 40
      - expr: inferscope:pool_waiting:delta
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:pool_waiting:delta{job="t-dynamo",pool="decode"}'
            value: 0
          - labels: 'inferscope:pool_waiting:delta{job="t-dynamo",pool="prefill"}'
            value: 4
      - expr: inferscope:endpoint_load{pool="decode"}
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:endpoint_load{endpoint="3",job="t-dynamo",pool="decode"}'
            value: 30
          - labels: 'inferscope:endpoint_load{endpoint="4",job="t-dynamo",pool="decode"}'
            value: 10
      - expr: inferscope:endpoint_load:spread
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:endpoint_load:spread{job="t-dynamo",pool="decode"}'
            value: 1.5
)";
  run(DialectId::kDynamo, "t-dynamo", tests);
}

// Tests llm-d: the scheduler's 1.95 ms per request is the route time; the 2026 pool gauge and a
// second pool still on its GIE-era name are both recorded per pool; the per-pod queues 12, 2, 1
// give a spread of 2.4 (12 over a mean of 5); the prefix indexer's 0.5 mean hit ratio is recorded.
TEST_F(DisaggRulesPromtoolTest, LlmdRecordsRoutePoolAndEndpointSeries) {
  const std::string j = R"(job="t-llm-d",instance="127.0.0.1:9000")";
  const std::string tests = R"(  - interval: 15s
    input_series:
      - series: 'inference_extension_scheduler_e2e_duration_seconds_sum{)" + j + R"(}'
        values: '0+0.001953125x60'
      - series: 'inference_extension_scheduler_e2e_duration_seconds_count{)" + j + R"(}'
        values: '0+1x60'
      - series: 'inference_extension_prefix_indexer_hit_ratio_sum{)" + j + R"(}'
        values: '0+0.5x60'
      - series: 'inference_extension_prefix_indexer_hit_ratio_count{)" + j + R"(}'
        values: '0+1x60'
      - series: 'llm_d_router_epp_average_queue_size{)" + j + R"(,name="pool-a"}'
        values: '5x60'
      - series: 'inference_pool_average_queue_size{)" + j + R"(,name="pool-b"}'
        values: '1x60'
      - series: 'inference_pool_per_pod_queue_size{)" + j + R"(,name="pool-a",model_server_pod="p1"}'
        values: '12x60'
      - series: 'inference_pool_per_pod_queue_size{)" + j + R"(,name="pool-a",model_server_pod="p2"}'
        values: '2x60'
      - series: 'inference_pool_per_pod_queue_size{)" + j + R"(,name="pool-a",model_server_pod="p3"}'
        values: '1x60'
    promql_expr_test:
      - expr: inferscope:route_seconds:mean
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:route_seconds:mean{job="t-llm-d"}'
            value: 0.001953125
      - expr: inferscope:stage_seconds:mean{stage="route"}
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:stage_seconds:mean{job="t-llm-d",stage="route"}'
            value: 0.001953125
      - expr: inferscope:route_prefix_hit:mean
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:route_prefix_hit:mean{job="t-llm-d"}'
            value: 0.5
      - expr: inferscope:pool_waiting
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:pool_waiting{job="t-llm-d",pool="pool-a"}'
            value: 5
          - labels: 'inferscope:pool_waiting{job="t-llm-d",pool="pool-b"}'
            value: 1
      - expr: inferscope:waiting
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:waiting{job="t-llm-d"}'
            value: 15
      - expr: inferscope:endpoint_load:spread
        eval_time: 10m
        exp_samples:
          - labels: 'inferscope:endpoint_load:spread{job="t-llm-d",pool="pool-a"}'
            value: 2.4
)";
  run(DialectId::kLlmd, "t-llm-d", tests);
}

}  // namespace
}  // namespace inferscope::alerts
