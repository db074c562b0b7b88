#include "loadgen/run_stats.h"

#include <gtest/gtest.h>

#include "loadgen/summary_report.h"

namespace inferscope::loadgen {
namespace {

constexpr std::int64_t kMs = 1'000'000;

// make builds a successful streamed record: intended at `intended_ms`, started `lag_ms` later,
// first output after `ttft_ms`, `tokens` events `itl_ms` apart.
RequestRecord make(std::uint64_t index, std::int64_t intended_ms, std::int64_t lag_ms, std::int64_t ttft_ms, int tokens,
                   std::int64_t itl_ms) {
  RequestRecord r;
  r.index = index;
  r.streaming = true;
  r.intended_ns = intended_ms * kMs;
  r.dispatched_ns = r.intended_ns;
  r.started_ns = r.intended_ns + lag_ms * kMs;
  r.sent_ns = r.headers_ns = r.started_ns;
  r.first_event_ns = r.first_content_ns = r.started_ns + ttft_ms * kMs;
  for (int i = 0; i < tokens; ++i) r.token_event_us.push_back(static_cast<std::uint32_t>((ttft_ms + i * itl_ms) * 1000));
  r.last_token_ns = r.started_ns + r.token_event_us.back() * 1000;
  r.end_ns = r.last_token_ns;
  r.token_events = static_cast<std::uint32_t>(tokens);
  r.output_tokens = static_cast<std::uint32_t>(tokens);
  r.token_source = TokenSource::kUsage;
  r.input_tokens = 10;
  return r;
}

// Tests throughput, TPOT, ITL, corrected vs service latency and the warm-up exclusion.
TEST(RunStatsTest, CountsThroughputAndLatencies) {
  RunResult run;
  RequestRecord warm = make(0, 0, 0, 1000, 2, 1);
  warm.warmup = true;
  run.records.push_back(warm);
  run.records.push_back(make(1, 0, 0, 100, 5, 10));      // e2e 140 ms
  run.records.push_back(make(2, 500, 200, 100, 5, 10));  // queued 200 ms
  RequestRecord bad = make(3, 600, 0, 0, 1, 0);
  bad.error = ErrorKind::kHttpStatus;
  run.records.push_back(bad);
  RunStats st = compute_stats(run, {});
  EXPECT_EQ(st.warmup, 1u);
  EXPECT_EQ(st.completed, 2u);
  EXPECT_EQ(st.failed, 1u);
  EXPECT_EQ(st.errors[static_cast<std::size_t>(ErrorKind::kHttpStatus)], 1u);
  EXPECT_DOUBLE_EQ(st.duration_s, 0.840);  // first intended 0 -> last end 500+200+140 ms
  EXPECT_EQ(st.total_output_tokens, 10u);
  EXPECT_NEAR(st.request_throughput, 2 / 0.84, 1e-9);
  EXPECT_DOUBLE_EQ(st.metric("ttft").median(), 100);
  EXPECT_DOUBLE_EQ(st.metric("ttft_corrected").max, 300);
  EXPECT_DOUBLE_EQ(st.metric("e2el").mean, 140);
  EXPECT_DOUBLE_EQ(st.metric("e2el_corrected").max, 340);
  EXPECT_DOUBLE_EQ(st.metric("tpot").mean, 10);
  EXPECT_EQ(st.metric("itl").count, 8u);
  EXPECT_DOUBLE_EQ(st.metric("itl").median(), 10);
  EXPECT_EQ(st.peak_concurrency, 1u);
}

// Tests SLO goodput: objectives apply from the intended send, and failures are never good.
TEST(RunStatsTest, GoodputUsesCorrectedLatency) {
  RunResult run;
  run.records.push_back(make(0, 0, 0, 100, 3, 10));    // ttft 100 from intended: good
  run.records.push_back(make(1, 10, 300, 100, 3, 10)); // 400 from intended: bad for ttft=200ms
  run.records.push_back(make(2, 20, 0, 50, 3, 80));    // tpot 80: bad for tpot=50ms
  RequestRecord failed = make(3, 30, 0, 10, 3, 1);
  failed.error = ErrorKind::kTimeout;
  run.records.push_back(failed);
  auto slo = parse_slo("ttft=200ms,tpot=50ms");
  ASSERT_TRUE(slo);
  RunStats st = compute_stats(run, *slo);
  EXPECT_TRUE(st.has_slo);
  EXPECT_DOUBLE_EQ(st.slo_attainment, 0.25);
  EXPECT_NEAR(st.request_goodput, 1 / st.duration_s, 1e-9);
  auto bad = parse_slo("ttft=fast");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("--slo"), std::string::npos);
}

// Tests that tokens per event spread ITL per token, and the client-behind warning fires.
TEST(RunStatsTest, ItlPerTokenAndLateWarning) {
  RunResult run;
  RequestRecord r = make(0, 0, 0, 10, 3, 20);
  r.output_tokens = 6;  // two tokens per event
  r.dispatched_ns = r.intended_ns + 5 * kMs;
  run.records.push_back(r);
  RunStats st = compute_stats(run, {});
  EXPECT_DOUBLE_EQ(st.metric("itl").median(), 20);
  EXPECT_DOUBLE_EQ(st.metric("itl_token").median(), 10);
  EXPECT_TRUE(st.client_fell_behind);
  std::string table = format_summary(st, RunInfo{});
  EXPECT_NE(table.find("WARNING: the client fell behind"), std::string::npos);
  EXPECT_NE(table.find("============ Serving Benchmark Result ============"), std::string::npos);
  EXPECT_NE(table.find("Mean TTFT (ms):"), std::string::npos);
  nlohmann::json j = summary_json(st, RunInfo{});
  EXPECT_DOUBLE_EQ(j["median_itl_token_ms"].get<double>(), 10);
  EXPECT_TRUE(j.contains("p99.9_ttft_ms"));
  EXPECT_TRUE(j.contains("p99_e2el_corrected_ms"));
}

}  // namespace
}  // namespace inferscope::loadgen
