#include "loadgen/request_runner.h"

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "bench/run_stats.h"
#include "bench/summary_report.h"
#include "loadgen/test_llm_server.h"

namespace inferscope::loadgen {
namespace {

using namespace std::chrono_literals;
using testing::Behavior;
using testing::TestLlmServer;
using testing::TestServerOptions;

struct Bench {
  std::string url;
  LoadPlan plan{{LoadStage{Nanos(0), 0, 4}}, ArrivalKind::kPoisson, 1};
  RunBounds bounds{.max_requests = 20};
  bool stream = true;
  Nanos timeout = 10s;
  std::uint64_t seed = 1;
  unsigned io_threads = 1;
  std::vector<WorkloadClass> classes{{"default", 1, fixed_length(8), fixed_length(8)}};

  RunResult run(std::atomic<RequestRunner*>* expose = nullptr) {
    auto target = parse_base_url(url);
    EXPECT_TRUE(target);
    SyntheticWorkload workload(classes, 0, seed);
    RequestOptions ro;
    ro.model = "m";
    ro.stream = stream;
    RequestBuilder builder(*target, ro);
    RunConfig config;
    config.target = *target;
    config.plan = plan;
    config.bounds = bounds;
    config.seed = seed;
    config.request_timeout = timeout;
    config.handle_signals = false;
    config.io_threads = io_threads;
    RequestRunner runner(config, workload, builder);
    if (expose != nullptr) expose->store(&runner);
    auto result = runner.run();
    EXPECT_TRUE(result) << result.error().message;
    return std::move(*result);
  }
};

int count_kind(const RunResult& r, ErrorKind kind) {
  int n = 0;
  for (const auto& rec : r.records) n += rec.error == kind;
  return n;
}

// Tests that a closed-loop run completes every request with usage-based token counts and ordered
// timestamps, and that the server saw exactly the configured concurrency.
TEST(RequestRunnerIntegrationTest, ClosedLoopStreamsWithUsage) {
  TestLlmServer server({.tokens = 5, .role_chunk = true, .ttft = 2ms, .itl = 500us});
  Bench b{server.base_url()};
  RunResult r = b.run();
  ASSERT_EQ(r.records.size(), 20u);
  EXPECT_EQ(server.requests(), 20);
  EXPECT_EQ(server.peak_concurrent(), 4);
  EXPECT_EQ(r.peak_in_flight, 4u);
  for (const auto& rec : r.records) {
    ASSERT_TRUE(rec.ok()) << to_string(rec.error);
    EXPECT_EQ(rec.output_tokens, 5u);
    EXPECT_EQ(rec.token_source, TokenSource::kUsage);
    EXPECT_EQ(rec.token_events, 5u);
    EXPECT_EQ(rec.input_tokens, 11u);
    EXPECT_EQ(rec.http_status, 200);
    EXPECT_LE(rec.intended_ns, rec.started_ns);
    EXPECT_LE(rec.started_ns, rec.sent_ns);
    EXPECT_LE(rec.sent_ns, rec.headers_ns);
    EXPECT_LE(rec.headers_ns, rec.first_event_ns);
    EXPECT_LE(rec.first_event_ns, rec.first_content_ns);  // the role chunk comes first
    EXPECT_LE(rec.first_content_ns, rec.last_token_ns);
    EXPECT_LE(rec.last_token_ns, rec.end_ns);
  }
  // Keep-alive: at most 4 connections were opened for 20 requests.
  int fresh = 0;
  for (const auto& rec : r.records) fresh += !rec.reused_connection;
  EXPECT_EQ(fresh, 4);
}

// Tests that without usage the streamed tokens are counted, and non-streamed bodies estimated.
TEST(RequestRunnerIntegrationTest, TokenCountingWithoutUsage) {
  TestLlmServer server({.usage = false, .tokens = 7});
  Bench b{server.base_url()};
  RunResult r = b.run();
  for (const auto& rec : r.records) {
    ASSERT_TRUE(rec.ok());
    EXPECT_EQ(rec.output_tokens, 7u);
    EXPECT_EQ(rec.token_source, TokenSource::kCounted);
  }
  b.stream = false;
  RunResult n = b.run();
  for (const auto& rec : n.records) {
    ASSERT_TRUE(rec.ok()) << to_string(rec.error);
    EXPECT_EQ(rec.output_tokens, 4u);  // "some output text" = 16 bytes / 4
    EXPECT_EQ(rec.token_source, TokenSource::kEstimated);
  }
}

// Tests each error kind against a server that misbehaves that way, and that the run still ends.
TEST(RequestRunnerIntegrationTest, ErrorKinds) {
  auto check = [](Behavior behavior, ErrorKind want, int want_status = 0) {
    TestLlmServer server({.behavior = behavior});
    Bench b{server.base_url()};
    b.bounds.max_requests = 6;
    b.timeout = 300ms;
    RunResult r = b.run();
    ASSERT_EQ(r.records.size(), 6u);
    EXPECT_EQ(count_kind(r, want), 6) << "want " << to_string(want) << " got " << to_string(r.records[0].error);
    if (want_status != 0) {
      EXPECT_EQ(r.records[0].http_status, want_status);
    }
  };
  check(Behavior::kReset, ErrorKind::kReset);
  check(Behavior::kMalformed, ErrorKind::kMalformedStream);
  check(Behavior::kTruncate, ErrorKind::kTruncatedStream);
  check(Behavior::kStatus500, ErrorKind::kHttpStatus, 500);
  check(Behavior::kStatus429, ErrorKind::kHttpStatus, 429);
  check(Behavior::kHang, ErrorKind::kTimeout);
  check(Behavior::kStreamErrorObject, ErrorKind::kStreamError);
}

// Tests that a port nobody listens on gives kRefused.
TEST(RequestRunnerIntegrationTest, RefusedConnection) {
  unsigned short port;
  {
    TestLlmServer server({});
    port = server.port();
  }
  Bench b{"http://127.0.0.1:" + std::to_string(port)};
  b.bounds.max_requests = 3;
  RunResult r = b.run();
  EXPECT_EQ(count_kind(r, ErrorKind::kRefused), 3);
}

// Tests that an open-loop constant rate sends exactly the scheduled arrivals within the duration
// and, since nothing limits it, sends each close to its intended time.
TEST(RequestRunnerIntegrationTest, OpenLoopRateMatchesSchedule) {
  TestLlmServer server({.tokens = 2});
  Bench b{server.base_url()};
  b.plan = LoadPlan{{LoadStage{Nanos(0), 200, 0}}, ArrivalKind::kConstant, 1};
  b.bounds = RunBounds{.max_duration = 500ms};
  RunResult r = b.run();
  ASSERT_EQ(r.records.size(), 99u);  // intended at 5 ms, 10 ms, ... 495 ms
  for (std::size_t i = 0; i < r.records.size(); ++i) {
    EXPECT_EQ(r.records[i].intended_ns, static_cast<std::int64_t>(i + 1) * 5'000'000);
    EXPECT_TRUE(r.records[i].ok());
  }
  double span_s = static_cast<double>(r.records.back().started_ns - r.records.front().started_ns) / 1e9;
  double achieved = static_cast<double>(r.records.size() - 1) / span_s;
  EXPECT_GT(achieved, 100.0);  // loose: only a starved machine could miss this
  EXPECT_LT(achieved, 300.0);
  // The io-loop lag probe sampled the run (every 2 ms for 500 ms, fewer when the thread stalled).
  EXPECT_GT(r.io_loop_lag_us.size(), 20u);
  EXPECT_EQ(bench::compute_stats(r, {}).metric("io_loop_lag").count, r.io_loop_lag_us.size());
}

// Tests that a rate above what a concurrency cap allows makes corrected (from intended) latency
// larger than service latency (from the actual start), with the cap never exceeded.
TEST(RequestRunnerIntegrationTest, OverloadCorrectedExceedsService) {
  TestLlmServer server({.tokens = 2, .ttft = 10ms});
  Bench b{server.base_url()};
  b.plan = LoadPlan{{LoadStage{Nanos(0), 400, 2}}, ArrivalKind::kConstant, 1};
  b.bounds = RunBounds{.max_requests = 40};
  RunResult r = b.run();
  ASSERT_EQ(r.records.size(), 40u);
  EXPECT_EQ(server.peak_concurrent(), 2);
  int larger = 0;
  for (const auto& rec : r.records) {
    ASSERT_TRUE(rec.ok());
    EXPECT_GE(rec.started_ns, rec.intended_ns);
    larger += (rec.e2e_anchor_ns() - rec.intended_ns) > (rec.e2e_anchor_ns() - rec.started_ns);
  }
  // Capacity is ~2/10 ms = 200/s against 400/s offered: the client queue grows steadily.
  EXPECT_GT(larger, 30);
  EXPECT_GT(r.records.back().started_ns - r.records.back().intended_ns, 20'000'000);
}

// Tests that stages change the concurrency: the second stage's larger cap is reached.
TEST(RequestRunnerIntegrationTest, StagesChangeConcurrency) {
  TestLlmServer server({.tokens = 2, .ttft = 5ms});
  Bench b{server.base_url()};
  b.plan = LoadPlan{{LoadStage{200ms, 0, 2}, LoadStage{200ms, 0, 6}}, ArrivalKind::kPoisson, 1};
  b.bounds = RunBounds{};
  RunResult r = b.run();
  EXPECT_EQ(r.peak_in_flight, 6u);
  EXPECT_EQ(server.peak_concurrent(), 6);
  std::uint32_t first_stage_peak = 0;
  for (const auto& a : r.records) {
    if (a.started_ns >= 190'000'000) continue;
    std::uint32_t overlapping = 0;
    for (const auto& o : r.records) overlapping += o.started_ns <= a.started_ns && o.end_ns > a.started_ns;
    first_stage_peak = std::max(first_stage_peak, overlapping);
  }
  EXPECT_LE(first_stage_peak, 2u);
  EXPECT_LT(r.records.back().intended_ns, 400'000'000);
}

// Tests that warm-up requests are flagged and that stop() ends a run against a server that never
// answers, with every in-flight request cancelled.
TEST(RequestRunnerIntegrationTest, WarmupAndStop) {
  {
    TestLlmServer server({});
    Bench b{server.base_url()};
    b.bounds = RunBounds{.max_requests = 10, .warmup_requests = 3};
    RunResult r = b.run();
    ASSERT_EQ(r.records.size(), 13u);
    for (const auto& rec : r.records) EXPECT_EQ(rec.warmup, rec.index < 3);
  }
  TestLlmServer server({.behavior = Behavior::kHang});
  Bench b{server.base_url()};
  b.bounds = RunBounds{.max_requests = 1000};
  std::atomic<RequestRunner*> runner{nullptr};
  std::thread stopper([&] {
    server.wait_for_requests(4, 10s);
    // The runner lives until run() returns, which it cannot do before stop() here.
    runner.load()->stop();
  });
  RunResult r = b.run(&runner);
  stopper.join();
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.records.size(), 4u);
  EXPECT_EQ(count_kind(r, ErrorKind::kCancelled), 4);
}

std::string testdata(const char* name) {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR "/tests/loadgen/testdata/") + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Tests that recorded mid-stream failures of both shapes (llama.cpp's `error:` line, vLLM's
// data: {"error": ...}) sent with HTTP 200 fail every request as stream_error, so none of them
// enters the latency statistics.
TEST(RequestRunnerIntegrationTest, RecordedErrorStreamsFail) {
  for (const char* file : {"llamacpp-c392e50-stream-error.sse", "vllm-shape-stream-error.sse"}) {
    TestLlmServer server({.behavior = Behavior::kReplay, .replay = testdata(file)});
    Bench b{server.base_url()};
    b.bounds.max_requests = 5;
    RunResult r = b.run();
    ASSERT_EQ(r.records.size(), 5u);
    EXPECT_EQ(count_kind(r, ErrorKind::kStreamError), 5) << file << ": " << to_string(r.records[0].error);
    EXPECT_EQ(r.records[0].http_status, 200);
    bench::RunStats st = bench::compute_stats(r, {});
    EXPECT_EQ(st.completed, 0u) << file;
    EXPECT_EQ(st.metric("ttft").count, 0u) << file;
    EXPECT_EQ(st.metric("e2el").count, 0u) << file;
  }
}

// Tests that each record carries its own --mix class and the workload's input estimate, marked
// as estimated when the server sends no usage.
TEST(RequestRunnerIntegrationTest, RecordsKeepClassAndInputEstimate) {
  TestLlmServer server({.usage = false, .tokens = 2});
  Bench b{server.base_url()};
  b.classes = {{"short", 1, fixed_length(4), fixed_length(2)}, {"long", 1, fixed_length(40), fixed_length(2)}};
  RunResult r = b.run();
  SyntheticWorkload same(b.classes, 0, b.seed);
  int long_ones = 0;
  for (const auto& rec : r.records) {
    ASSERT_TRUE(rec.ok()) << to_string(rec.error);
    RequestSpec spec = same.next(rec.index);
    EXPECT_EQ(rec.class_id, spec.class_id) << rec.index;
    EXPECT_EQ(rec.input_tokens, spec.class_id == 0 ? 4u : 40u);
    EXPECT_EQ(rec.input_token_source, TokenSource::kEstimated);
    long_ones += rec.class_id == 1;
  }
  EXPECT_GT(long_ones, 0);
  EXPECT_LT(long_ones, 20);
  EXPECT_GT(bench::compute_stats(r, {}).total_input_tokens, 0u);
}

// Tests that when the target goes away mid-run, the queued requests fail (refused) and the
// summary says the target went away and when, after the last successful response.
TEST(RequestRunnerIntegrationTest, TargetGoneIsReported) {
  TestLlmServer server({.tokens = 2, .ttft = 2ms});
  Bench b{server.base_url()};
  b.plan = LoadPlan{{LoadStage{Nanos(0), 200, 2}}, ArrivalKind::kConstant, 1};
  b.bounds = RunBounds{.max_requests = 60};
  std::thread killer([&] {
    server.wait_for_requests(10, 10s);
    server.stop();
  });
  RunResult r = b.run();
  killer.join();
  bench::RunStats st = bench::compute_stats(r, {});
  ASSERT_GT(st.completed, 0u);
  ASSERT_GT(count_kind(r, ErrorKind::kRefused), 0);
  ASSERT_TRUE(st.target_loss.lost);
  EXPECT_FALSE(st.target_loss.never_reached);
  EXPECT_GE(st.target_loss.at_s, st.target_loss.last_success_s);
  EXPECT_GE(st.target_loss.failed_after, static_cast<std::size_t>(count_kind(r, ErrorKind::kRefused)));
  std::string report = bench::format_summary(st, {});
  EXPECT_NE(report.find("TARGET WENT AWAY at "), std::string::npos) << report;
}

// Tests that with 3 io threads every request still completes with exact accounting, the cap
// holds, each thread keeps its own connections, and stop() cancels requests on every thread.
TEST(RequestRunnerIntegrationTest, SeveralIoThreads) {
  {
    TestLlmServer server({.tokens = 5, .role_chunk = true, .ttft = 1ms, .itl = 200us});
    Bench b{server.base_url()};
    b.io_threads = 3;
    b.plan = LoadPlan{{LoadStage{Nanos(0), 0, 6}}, ArrivalKind::kPoisson, 1};
    b.bounds.max_requests = 60;
    RunResult r = b.run();
    ASSERT_EQ(r.records.size(), 60u);
    EXPECT_EQ(server.requests(), 60);
    EXPECT_LE(server.peak_concurrent(), 6);
    int fresh = 0;
    for (const auto& rec : r.records) {
      ASSERT_TRUE(rec.ok()) << to_string(rec.error);
      EXPECT_EQ(rec.output_tokens, 5u);
      EXPECT_EQ(rec.token_events, 5u);
      EXPECT_LE(rec.started_ns, rec.first_content_ns);
      EXPECT_LE(rec.first_content_ns, rec.end_ns);
      fresh += !rec.reused_connection;
    }
    // Each thread opens its own connections and reuses them: at most as many as it ever had in
    // flight at once (up to the cap of 6 each), far fewer than the 60 requests.
    EXPECT_GE(fresh, 3);
    EXPECT_LE(fresh, 18);
    EXPECT_GT(r.io_loop_lag_us.size(), 0u);
  }
  TestLlmServer server({.behavior = Behavior::kHang});
  Bench b{server.base_url()};
  b.io_threads = 3;
  b.bounds = RunBounds{.max_requests = 1000};
  std::atomic<RequestRunner*> runner{nullptr};
  std::thread stopper([&] {
    server.wait_for_requests(4, 10s);
    runner.load()->stop();
  });
  RunResult r = b.run(&runner);
  stopper.join();
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.records.size(), 4u);
  std::string kinds;
  for (const auto& rec : r.records) {
    kinds += " #" + std::to_string(rec.index) + ":" + std::string(to_string(rec.error)) + "@" +
             std::to_string((rec.end_ns - rec.started_ns) / 1000000) + "ms";
  }
  EXPECT_EQ(count_kind(r, ErrorKind::kCancelled), 4) << "server saw " << server.requests() << " requests;" << kinds;
}

}  // namespace
}  // namespace inferscope::loadgen
