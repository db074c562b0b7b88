#include "bench/run_stats.h"

#include <gtest/gtest.h>

#include "bench/run_verdict.h"
#include "bench/summary_report.h"

namespace inferscope::bench {
namespace {

constexpr std::int64_t kMs = 1'000'000;

// make builds a successful streamed record: intended at `intended_ms`, started `lag_ms` later,
// first output after `ttft_ms`, `tokens` events `itl_ms` apart.
loadgen::RequestRecord make(std::uint64_t index, std::int64_t intended_ms, std::int64_t lag_ms, std::int64_t ttft_ms, int tokens,
                   std::int64_t itl_ms) {
  loadgen::RequestRecord r;
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
  r.token_source = loadgen::TokenSource::kUsage;
  r.input_tokens = 10;
  return r;
}

// Tests throughput, TPOT, ITL, corrected vs service latency and the warm-up exclusion.
TEST(RunStatsTest, CountsThroughputAndLatencies) {
  loadgen::RunResult run;
  loadgen::RequestRecord warm = make(0, 0, 0, 1000, 2, 1);
  warm.warmup = true;
  run.records.push_back(warm);
  run.records.push_back(make(1, 0, 0, 100, 5, 10));      // e2e 140 ms
  run.records.push_back(make(2, 500, 200, 100, 5, 10));  // queued 200 ms
  loadgen::RequestRecord bad = make(3, 600, 0, 0, 1, 0);
  bad.error = loadgen::ErrorKind::kHttpStatus;
  run.records.push_back(bad);
  RunStats st = compute_stats(run, {});
  EXPECT_EQ(st.warmup, 1u);
  EXPECT_EQ(st.completed, 2u);
  EXPECT_EQ(st.failed, 1u);
  EXPECT_EQ(st.errors[static_cast<std::size_t>(loadgen::ErrorKind::kHttpStatus)], 1u);
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
  loadgen::RunResult run;
  run.records.push_back(make(0, 0, 0, 100, 3, 10));    // ttft 100 from intended: good
  run.records.push_back(make(1, 10, 300, 100, 3, 10)); // 400 from intended: bad for ttft=200ms
  run.records.push_back(make(2, 20, 0, 50, 3, 80));    // tpot 80: bad for tpot=50ms
  loadgen::RequestRecord failed = make(3, 30, 0, 10, 3, 1);
  failed.error = loadgen::ErrorKind::kTimeout;
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
  loadgen::RunResult run;
  loadgen::RequestRecord r = make(0, 0, 0, 10, 3, 20);
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

// failed_at builds a record that failed with `kind`, ending at `end_ms`.
loadgen::RequestRecord failed_at(std::uint64_t index, std::int64_t end_ms, loadgen::ErrorKind kind) {
  loadgen::RequestRecord r = make(index, end_ms, 0, 1, 1, 0);
  r.end_ns = end_ms * kMs;
  r.error = kind;
  return r;
}

// Tests the target-loss verdict: a tail of connection failures holding a refused connect after a
// success is "went away" at the tail's first end; resets alone or a failure followed by a success
// are not; nothing but refusals is "never reached".
TEST(RunStatsTest, TargetLossFromTheTailOfFailures) {
  loadgen::RunResult gone;
  gone.records.push_back(make(0, 0, 0, 10, 2, 5));  // ends at 15 ms
  gone.records.push_back(failed_at(1, 40, loadgen::ErrorKind::kTruncatedStream));  // in flight when it died
  gone.records.push_back(failed_at(2, 41, loadgen::ErrorKind::kRefused));
  gone.records.push_back(failed_at(3, 42, loadgen::ErrorKind::kRefused));
  RunStats st = compute_stats(gone, {});
  ASSERT_TRUE(st.target_loss.lost);
  EXPECT_FALSE(st.target_loss.never_reached);
  EXPECT_DOUBLE_EQ(st.target_loss.at_s, 0.040);
  EXPECT_DOUBLE_EQ(st.target_loss.last_success_s, 0.015);
  EXPECT_EQ(st.target_loss.failed_after, 3u);
  EXPECT_NE(format_summary(st, {}).find("TARGET WENT AWAY at 0.040 s into the run (last successful response at "
                                        "0.015 s): the 3 requests"),
            std::string::npos)
      << format_summary(st, {});
  EXPECT_DOUBLE_EQ(summary_json(st, {})["target_lost"]["at_s"].get<double>(), 0.040);

  loadgen::RunResult recovered = gone;
  recovered.records.push_back(make(4, 50, 0, 10, 2, 5));
  EXPECT_FALSE(compute_stats(recovered, {}).target_loss.lost);
  EXPECT_TRUE(summary_json(compute_stats(recovered, {}), {})["target_lost"].is_null());

  loadgen::RunResult resets;
  resets.records.push_back(make(0, 0, 0, 10, 2, 5));
  resets.records.push_back(failed_at(1, 40, loadgen::ErrorKind::kReset));
  EXPECT_FALSE(compute_stats(resets, {}).target_loss.lost);

  loadgen::RunResult never;
  never.records.push_back(failed_at(0, 1, loadgen::ErrorKind::kRefused));
  never.records.push_back(failed_at(1, 2, loadgen::ErrorKind::kRefused));
  RunStats nst = compute_stats(never, {});
  ASSERT_TRUE(nst.target_loss.lost);
  EXPECT_TRUE(nst.target_loss.never_reached);
  EXPECT_NE(format_summary(nst, {}).find("TARGET UNREACHABLE"), std::string::npos);
}

// Tests that input token sources are counted per completed request and reported.
TEST(RunStatsTest, InputTokenSources) {
  loadgen::RunResult run;
  loadgen::RequestRecord a = make(0, 0, 0, 10, 2, 5);
  a.input_token_source = loadgen::TokenSource::kUsage;
  loadgen::RequestRecord b = make(1, 1, 0, 10, 2, 5);
  b.input_tokens = 30;
  b.input_token_source = loadgen::TokenSource::kEstimated;
  run.records = {a, b};
  RunStats st = compute_stats(run, {});
  EXPECT_EQ(st.total_input_tokens, 40u);
  EXPECT_EQ(st.input_token_sources[static_cast<std::size_t>(loadgen::TokenSource::kUsage)], 1u);
  EXPECT_EQ(st.input_token_sources[static_cast<std::size_t>(loadgen::TokenSource::kEstimated)], 1u);
  EXPECT_NE(format_summary(st, {}).find("Input tokens from estimated (req):"), std::string::npos);
  EXPECT_EQ(summary_json(st, {})["input_token_sources"]["estimated"], 1);
}

// Tests the exit status: interrupted wins, then all-failed, then the goodput gate.
TEST(RunVerdictTest, ExitCodes) {
  RunStats st;
  st.completed = 0;
  st.failed = 5;
  EXPECT_EQ(run_verdict(st, true, std::nullopt).code, kExitInterrupted);
  RunVerdict all_failed = run_verdict(st, false, std::nullopt);
  EXPECT_EQ(all_failed.code, kExitAllFailed);
  EXPECT_NE(all_failed.reason.find("all 5 measured requests failed"), std::string::npos) << all_failed.reason;
  st.completed = 9;
  st.failed = 1;
  st.slo_attainment = 0.9;
  EXPECT_EQ(run_verdict(st, false, std::nullopt).code, 0);
  EXPECT_EQ(run_verdict(st, false, 0.9).code, 0);
  RunVerdict under = run_verdict(st, false, 0.95);
  EXPECT_EQ(under.code, kExitUnderGoodput);
  EXPECT_NE(under.reason.find("--fail-under-goodput"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::bench
