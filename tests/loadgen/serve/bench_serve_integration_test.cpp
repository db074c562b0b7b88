// inferscope bench's runner and statistics against inferscope serve, started in-process on a
// loopback port 0: load modes, coordinated-omission correction under overload, token counting with
// and without usage, fault-injected errors and SLO goodput.
#include <utility>

#include <gtest/gtest.h>

#include "bench/run_stats.h"
#include "loadgen/request_runner.h"
#include "serve/server.h"

namespace inferscope::loadgen {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<serve::Server> start_server(const std::string& profile, double time_scale, serve::FaultSet faults = {}) {
  serve::ServerOptions o;
  o.port = 0;
  o.engine.profile = profile;
  o.engine.time_scale = time_scale;
  o.faults = faults;
  o.model_names = {"sim"};
  auto s = serve::Server::start(o);
  EXPECT_TRUE(s) << s.error().message;
  return s ? std::move(*s) : nullptr;
}

struct Bench {
  explicit Bench(std::uint16_t p) : port(p) {}
  std::uint16_t port;
  LoadPlan plan{{LoadStage{Nanos(0), 0, 4}}, ArrivalKind::kConstant, 1};
  RunBounds bounds{.max_requests = 24};
  RequestOptions request = [] {
    RequestOptions r;
    r.model = "sim";
    r.ignore_eos = true;
    return r;
  }();
  std::uint32_t output_len = 6;

  RunResult run() {
    auto target = parse_base_url("http://127.0.0.1:" + std::to_string(port));
    EXPECT_TRUE(target);
    SyntheticWorkload workload({{"default", 1, fixed_length(32), fixed_length(output_len)}}, 0, 1);
    RequestBuilder builder(*target, request);
    RunConfig config;
    config.target = *target;
    config.plan = plan;
    config.bounds = bounds;
    config.request_timeout = 20s;
    config.handle_signals = false;
    RequestRunner runner(config, workload, builder);
    auto result = runner.run();
    EXPECT_TRUE(result) << result.error().message;
    return std::move(*result);
  }
};

// Tests closed-loop, open-loop and capped modes: the achieved concurrency equals the target and
// open-loop arrivals follow the schedule exactly.
TEST(BenchServeIntegrationTest, LoadModes) {
  auto server = start_server("llama-3.1-8b-h100-bf16", 10);
  ASSERT_TRUE(server);
  Bench closed{server->port()};
  RunResult c = closed.run();
  ASSERT_EQ(c.records.size(), 24u);
  EXPECT_EQ(c.peak_in_flight, 4u);
  EXPECT_EQ(bench::compute_stats(c, {}).peak_concurrency, 4u);
  for (const auto& r : c.records) EXPECT_TRUE(r.ok()) << to_string(r.error);

  Bench open{server->port()};
  open.plan = LoadPlan{{LoadStage{Nanos(0), 100, 0}}, ArrivalKind::kConstant, 1};
  open.bounds = RunBounds{.max_duration = 400ms};
  RunResult o = open.run();
  ASSERT_EQ(o.records.size(), 39u);  // 10 ms, 20 ms, ... 390 ms
  for (std::size_t i = 0; i < o.records.size(); ++i) {
    EXPECT_EQ(o.records[i].intended_ns, static_cast<std::int64_t>(i + 1) * 10'000'000);
    EXPECT_TRUE(o.records[i].ok());
  }
  bench::RunStats os = bench::compute_stats(o, {});
  EXPECT_GT(os.request_throughput, 40);  // loose on purpose: 100/s offered, nothing limits it
  EXPECT_LT(os.request_throughput, 160);

  Bench capped{server->port()};
  capped.plan = LoadPlan{{LoadStage{Nanos(0), 500, 3}}, ArrivalKind::kPoisson, 1};
  capped.bounds = RunBounds{.max_requests = 30};
  RunResult k = capped.run();
  EXPECT_EQ(k.peak_in_flight, 3u);
  EXPECT_EQ(bench::compute_stats(k, {}).completed, 30u);
}

// Tests that against an overloaded server (rate far above what a cap of 2 lets through) the
// corrected latency exceeds the service latency, at the median and the tail.
TEST(BenchServeIntegrationTest, OverloadCorrectedLargerThanService) {
  auto server = start_server("llama-3.1-8b-h100-bf16", 5);
  ASSERT_TRUE(server);
  Bench b{server->port()};
  b.plan = LoadPlan{{LoadStage{Nanos(0), 400, 2}}, ArrivalKind::kPoisson, 1};
  b.bounds = RunBounds{.max_requests = 60};
  b.output_len = 16;
  bench::RunStats st = bench::compute_stats(b.run(), {});
  ASSERT_EQ(st.completed, 60u);
  EXPECT_GT(st.metric("e2el_corrected").median(), st.metric("e2el").median());
  EXPECT_GT(st.metric("ttft_corrected").quantile(99), st.metric("ttft").quantile(99));
  EXPECT_GT(st.metric("queue_time").max, 0);
}

// Tests output token counting: from usage when asked for it, counted from events otherwise, and
// both give the requested length (ignore_eos).
TEST(BenchServeIntegrationTest, TokenCountingWithAndWithoutUsage) {
  auto server = start_server("zero-cost", 1);
  ASSERT_TRUE(server);
  Bench with{server->port()};
  for (const auto& r : with.run().records) {
    ASSERT_TRUE(r.ok()) << to_string(r.error);
    EXPECT_EQ(r.token_source, TokenSource::kUsage);
    EXPECT_EQ(r.output_tokens, 6u);
    EXPECT_GT(r.input_tokens, 0u);
  }
  Bench without{server->port()};
  without.request.include_usage = false;
  for (const auto& r : without.run().records) {
    ASSERT_TRUE(r.ok()) << to_string(r.error);
    EXPECT_EQ(r.token_source, TokenSource::kCounted);
    EXPECT_EQ(r.output_tokens, 6u);
  }
}

// Tests that the server's error_rate fault shows up as http_status errors with status 500, and
// that failed requests never count as good.
TEST(BenchServeIntegrationTest, FaultErrorsAndGoodput) {
  serve::FaultSet faults;
  faults.error_rate = 1.0;
  auto failing = start_server("zero-cost", 1, faults);
  ASSERT_TRUE(failing);
  Bench b{failing->port()};
  b.bounds.max_requests = 8;
  auto slo = bench::parse_slo("e2e=1h");
  ASSERT_TRUE(slo);
  RunResult r = b.run();
  bench::RunStats st = bench::compute_stats(r, *slo);
  EXPECT_EQ(st.errors[static_cast<std::size_t>(ErrorKind::kHttpStatus)], 8u);
  EXPECT_EQ(r.records[0].http_status, 500);
  EXPECT_EQ(st.slo_attainment, 0);

  auto healthy = start_server("zero-cost", 1);
  ASSERT_TRUE(healthy);
  Bench h{healthy->port()};
  RunResult ok = h.run();
  EXPECT_DOUBLE_EQ(bench::compute_stats(ok, *slo).slo_attainment, 1.0);
  auto impossible = bench::parse_slo("ttft=1us");
  ASSERT_TRUE(impossible);
  EXPECT_DOUBLE_EQ(bench::compute_stats(ok, *impossible).slo_attainment, 0.0);
}

}  // namespace
}  // namespace inferscope::loadgen
