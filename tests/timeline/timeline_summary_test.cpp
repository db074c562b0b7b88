// Tests of summarize(): stage boundaries, TTFT/TPOT/ITL math and the missing-moment rules of
// docs/request-timeline.md, on hand-built timestamp sequences.
#include <inferscope/timeline/timeline_summary.h>

#include <vector>

#include <gtest/gtest.h>

#include "support/registry_scrape.h"

namespace inferscope::timeline {
namespace {

using inferscope::testing::at_ms;
using inferscope::testing::kT0;
constexpr double kSummaryTol = 1e-9;

double stage(const TimelineSummary& s, Stage st) {
  const auto& v = s.stage_seconds[static_cast<std::size_t>(st)];
  return v ? *v : -1.0;  // -1: not observed
}

// full_server_request: preprocess 0-10, dependency 10-11.5, enqueued 12, scheduled 30, role-only
// chunk at 40, tokens at 100/120/140/160, postprocessed 165, sent 170.
RequestTimeline full_server_request() {
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(10));
  t.add_dependency("embedding", at_ms(10), at_ms(11.5));
  t.mark(Moment::kEnqueued, at_ms(12));
  t.mark(Moment::kScheduled, at_ms(30));
  t.add_output(at_ms(40), 0);
  for (int ms : {100, 120, 140, 160}) t.add_output(at_ms(ms), 1);
  t.mark(Moment::kPostprocessed, at_ms(165));
  t.mark(Moment::kSent, at_ms(170));
  t.set_prompt_tokens(42);
  t.finish(FinishReason::kStop, at_ms(170));
  return t;
}

// Tests that each server stage is bounded by the documented pair of moments.
TEST(TimelineSummaryTest, ServerStageBoundaries) {
  const TimelineSummary s = summarize(full_server_request());
  const auto check = [&s](Stage st, double want_ms) {
    EXPECT_NEAR(stage(s, st), want_ms / 1000, kSummaryTol) << to_string(st) << ": got " << stage(s, st);
  };
  check(Stage::kPreprocess, 10);
  check(Stage::kDependency, 1.5);
  check(Stage::kQueue, 18);  // enqueued -> scheduled
  check(Stage::kPrefill, 70);
  check(Stage::kDecode, 60);
  check(Stage::kPostprocess, 5);
  check(Stage::kSend, 5);
  for (Stage st : {Stage::kGatewayQueue, Stage::kUpstreamConnect, Stage::kUpstreamTtft, Stage::kStream}) {
    EXPECT_FALSE(s.stage_seconds[static_cast<std::size_t>(st)].has_value()) << to_string(st);
  }
  EXPECT_FALSE(s.truncated_stage.has_value());
  EXPECT_NEAR(s.e2e_seconds, 0.170, kSummaryTol);
  EXPECT_NEAR(*s.generation_seconds, 0.160, kSummaryTol);
  EXPECT_NEAR(*s.inference_seconds, 0.130, kSummaryTol);
  EXPECT_EQ(s.prompt_tokens, 42U);
  EXPECT_EQ(s.output_tokens, 4U);
  EXPECT_EQ(s.output_events, 4U);
  EXPECT_EQ(s.reason, FinishReason::kStop);
}

// Tests that stage_intervals gives the moments summarize() measures: each stage's seconds are
// exactly its interval's length, the truncated stage ends at the request's end, and dependency
// calls are left to the timeline's own list.
TEST(TimelineSummaryTest, StageIntervalsAreTheSummarizedBounds) {
  const RequestTimeline t = full_server_request();
  const StageIntervals intervals = stage_intervals(t);
  const TimelineSummary s = summarize(t);
  for (std::size_t i = 0; i < kStageCount; ++i) {
    const auto stage_id = static_cast<Stage>(i);
    if (stage_id == Stage::kDependency) {
      EXPECT_FALSE(intervals.stages[i].has_value());
      continue;
    }
    ASSERT_EQ(intervals.stages[i].has_value(), s.stage_seconds[i].has_value()) << to_string(stage_id);
    if (intervals.stages[i]) {
      EXPECT_EQ(seconds_between(intervals.stages[i]->start, intervals.stages[i]->end), *s.stage_seconds[i])
          << to_string(stage_id);
    }
  }
  const auto& prefill = intervals.stages[static_cast<std::size_t>(Stage::kPrefill)];
  EXPECT_EQ(prefill->start, at_ms(30));
  EXPECT_EQ(prefill->end, at_ms(100));

  RequestTimeline aborted(kT0);
  aborted.mark(Moment::kPreprocessed, at_ms(5));
  aborted.mark(Moment::kScheduled, at_ms(20));
  aborted.finish(FinishReason::kAbort, at_ms(50));
  const StageIntervals cut = stage_intervals(aborted);
  EXPECT_EQ(cut.truncated_stage, Stage::kPrefill);
  EXPECT_EQ(cut.stages[static_cast<std::size_t>(Stage::kPrefill)]->end, at_ms(50));
  EXPECT_FALSE(cut.stages[static_cast<std::size_t>(Stage::kDecode)].has_value());

  RequestTimeline backwards(kT0);  // a mark before its stage's start is clamped, never negative
  backwards.mark(Moment::kPreprocessed, at_ms(10));
  backwards.mark(Moment::kScheduled, at_ms(4));
  backwards.finish(FinishReason::kError, at_ms(12));
  const StageIntervals clamped = stage_intervals(backwards);
  const auto& queue = clamped.stages[static_cast<std::size_t>(Stage::kQueue)];
  ASSERT_TRUE(queue.has_value());
  EXPECT_EQ(queue->start, queue->end);
}

// Tests that TTFT skips the role-only chunk and TPOT is (last - first) / (tokens - 1).
TEST(TimelineSummaryTest, TtftIgnoresRoleOnlyChunkAndTpotIsPerRequest) {
  const TimelineSummary s = summarize(full_server_request());
  ASSERT_TRUE(s.ttft_seconds.has_value());
  EXPECT_NEAR(*s.ttft_seconds, 0.100, kSummaryTol);
  ASSERT_TRUE(s.tpot_seconds.has_value());
  EXPECT_NEAR(*s.tpot_seconds, 0.060 / 3, kSummaryTol);
}

// Tests that the queue starts at preprocess done when no enqueue moment was marked.
TEST(TimelineSummaryTest, QueueFallsBackToPreprocessed) {
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(10));
  t.mark(Moment::kScheduled, at_ms(25));
  t.add_output(at_ms(50), 1);
  t.finish(FinishReason::kLength, at_ms(50));
  const TimelineSummary s = summarize(t);
  EXPECT_NEAR(stage(s, Stage::kQueue), 0.015, kSummaryTol);
  EXPECT_NEAR(stage(s, Stage::kPrefill), 0.025, kSummaryTol);
}

// Tests that one output token gives TTFT and a zero decode stage but no TPOT.
TEST(TimelineSummaryTest, SingleTokenHasNoTpot) {
  RequestTimeline t(kT0);
  t.mark(Moment::kScheduled, at_ms(5));
  t.add_output(at_ms(80), 1);
  t.finish(FinishReason::kLength, at_ms(81));
  const TimelineSummary s = summarize(t);
  EXPECT_NEAR(*s.ttft_seconds, 0.080, kSummaryTol);
  EXPECT_FALSE(s.tpot_seconds.has_value());
  EXPECT_NEAR(stage(s, Stage::kDecode), 0.0, kSummaryTol);
}

// Tests that a single event carrying several tokens has no decode interval, hence no TPOT.
TEST(TimelineSummaryTest, OneMultiTokenEventHasNoTpot) {
  RequestTimeline t(kT0);
  t.add_output(at_ms(80), 5);
  t.finish(FinishReason::kStop, at_ms(81));
  const TimelineSummary s = summarize(t);
  EXPECT_EQ(s.output_tokens, 5U);
  EXPECT_FALSE(s.tpot_seconds.has_value());
}

// Tests TPOT and the output gaps when events carry several tokens (speculative decoding).
TEST(TimelineSummaryTest, MultiTokenEvents) {
  RequestTimeline t(kT0);
  t.add_output(at_ms(100), 1);
  t.add_output(at_ms(130), 3);
  t.add_output(at_ms(150), 2);
  t.finish(FinishReason::kStop, at_ms(150));
  const TimelineSummary s = summarize(t);
  EXPECT_EQ(s.output_tokens, 6U);
  EXPECT_NEAR(*s.tpot_seconds, 0.050 / 5, kSummaryTol);
  std::vector<std::pair<double, std::uint32_t>> gaps;
  for_each_output_gap(t, [&gaps](double gap, std::uint32_t tokens) { gaps.emplace_back(gap, tokens); });
  ASSERT_EQ(gaps.size(), 2U);
  EXPECT_NEAR(gaps[0].first, 0.030, kSummaryTol);
  EXPECT_EQ(gaps[0].second, 3U);
  EXPECT_NEAR(gaps[1].first, 0.020, kSummaryTol);
  EXPECT_EQ(gaps[1].second, 2U);
}

// Tests that an abort in the engine queue records the queue up to the abort and nothing later.
TEST(TimelineSummaryTest, AbortInQueueTruncatesQueue) {
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(10));
  t.finish(FinishReason::kAbort, at_ms(500));
  const TimelineSummary s = summarize(t);
  EXPECT_EQ(s.truncated_stage, Stage::kQueue);
  EXPECT_NEAR(stage(s, Stage::kPreprocess), 0.010, kSummaryTol);
  EXPECT_NEAR(stage(s, Stage::kQueue), 0.490, kSummaryTol);
  EXPECT_LT(stage(s, Stage::kPrefill), 0);
  EXPECT_FALSE(s.ttft_seconds.has_value());
  EXPECT_FALSE(s.generation_seconds.has_value());
  EXPECT_NEAR(s.e2e_seconds, 0.5, kSummaryTol);
  EXPECT_EQ(s.reason, FinishReason::kAbort);
}

// Tests that an abort after scheduling but before the first token truncates prefill, keeps the
// whole queue stage, and gives no TTFT.
TEST(TimelineSummaryTest, AbortBeforeFirstTokenTruncatesPrefill) {
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(10));
  t.mark(Moment::kScheduled, at_ms(30));
  t.add_output(at_ms(35), 0);  // role-only chunk already sent
  t.finish(FinishReason::kAbort, at_ms(200));
  const TimelineSummary s = summarize(t);
  EXPECT_EQ(s.truncated_stage, Stage::kPrefill);
  EXPECT_NEAR(stage(s, Stage::kQueue), 0.020, kSummaryTol);
  EXPECT_NEAR(stage(s, Stage::kPrefill), 0.170, kSummaryTol);
  EXPECT_FALSE(s.ttft_seconds.has_value());
  EXPECT_FALSE(s.tpot_seconds.has_value());
}

// Tests that an abort in mid-decode keeps decode = first -> last token and truncates nothing.
TEST(TimelineSummaryTest, AbortMidDecode) {
  RequestTimeline t(kT0);
  t.mark(Moment::kScheduled, at_ms(10));
  t.add_output(at_ms(100), 1);
  t.add_output(at_ms(120), 1);
  t.finish(FinishReason::kAbort, at_ms(300));
  const TimelineSummary s = summarize(t);
  EXPECT_FALSE(s.truncated_stage.has_value());
  EXPECT_NEAR(stage(s, Stage::kDecode), 0.020, kSummaryTol);
  EXPECT_LT(stage(s, Stage::kPostprocess), 0);
  EXPECT_NEAR(*s.tpot_seconds, 0.020, kSummaryTol);
  EXPECT_NEAR(s.e2e_seconds, 0.300, kSummaryTol);
}

// Tests that an error while preprocessing (e.g. invalid JSON) truncates preprocess at the error.
TEST(TimelineSummaryTest, ErrorInPreprocess) {
  RequestTimeline t(kT0);
  t.finish(FinishReason::kError, at_ms(3));
  const TimelineSummary s = summarize(t);
  EXPECT_EQ(s.truncated_stage, Stage::kPreprocess);
  EXPECT_NEAR(stage(s, Stage::kPreprocess), 0.003, kSummaryTol);
  EXPECT_EQ(s.reason, FinishReason::kError);
  EXPECT_EQ(s.output_tokens, 0U);
}

// Tests that a client disconnect while the response is written truncates send.
TEST(TimelineSummaryTest, DisconnectDuringSendTruncatesSend) {
  RequestTimeline t(kT0);
  t.add_output(at_ms(50), 1);
  t.mark(Moment::kPostprocessed, at_ms(52));
  t.finish(FinishReason::kAbort, at_ms(90));
  const TimelineSummary s = summarize(t);
  EXPECT_EQ(s.truncated_stage, Stage::kSend);
  EXPECT_NEAR(stage(s, Stage::kPostprocess), 0.002, kSummaryTol);
  EXPECT_NEAR(stage(s, Stage::kSend), 0.038, kSummaryTol);
}

// Tests the gateway stage set: gateway_queue, upstream_connect, upstream_ttft, stream, send.
TEST(TimelineSummaryTest, GatewayStages) {
  RequestTimeline t(kT0, Role::kGateway);
  t.mark(Moment::kAdmitted, at_ms(5));
  t.mark(Moment::kUpstreamConnected, at_ms(8));
  t.mark(Moment::kUpstreamRequestSent, at_ms(9));
  t.add_output(at_ms(100), 0);  // upstream's role-only chunk
  t.add_output(at_ms(109), 1);
  t.add_output(at_ms(209), 1);
  t.mark(Moment::kSent, at_ms(210));
  t.finish(FinishReason::kStop, at_ms(210));
  const TimelineSummary s = summarize(t);
  EXPECT_NEAR(stage(s, Stage::kGatewayQueue), 0.005, kSummaryTol);
  EXPECT_NEAR(stage(s, Stage::kUpstreamConnect), 0.003, kSummaryTol);  // starts at admitted
  EXPECT_NEAR(stage(s, Stage::kUpstreamTtft), 0.100, kSummaryTol);
  EXPECT_NEAR(stage(s, Stage::kStream), 0.100, kSummaryTol);
  EXPECT_NEAR(stage(s, Stage::kSend), 0.001, kSummaryTol);
  for (Stage st : {Stage::kQueue, Stage::kPrefill, Stage::kDecode, Stage::kPreprocess}) {
    EXPECT_LT(stage(s, st), 0) << to_string(st);
  }
  EXPECT_NEAR(*s.ttft_seconds, 0.109, kSummaryTol);
  EXPECT_FALSE(s.inference_seconds.has_value());
}

// Tests that a gateway request aborted while waiting for the upstream's first token truncates
// upstream_ttft, and one aborted before admission truncates gateway_queue.
TEST(TimelineSummaryTest, GatewayAborts) {
  RequestTimeline waiting(kT0, Role::kGateway);
  waiting.mark(Moment::kAdmitted, at_ms(1));
  waiting.mark(Moment::kUpstreamConnected, at_ms(2));
  waiting.mark(Moment::kUpstreamRequestSent, at_ms(3));
  waiting.finish(FinishReason::kAbort, at_ms(1003));
  const TimelineSummary s = summarize(waiting);
  EXPECT_EQ(s.truncated_stage, Stage::kUpstreamTtft);
  EXPECT_NEAR(stage(s, Stage::kUpstreamTtft), 1.0, kSummaryTol);

  RequestTimeline queued(kT0, Role::kGateway);
  queued.finish(FinishReason::kAbort, at_ms(40));
  const TimelineSummary q = summarize(queued);
  EXPECT_EQ(q.truncated_stage, Stage::kGatewayQueue);
  EXPECT_NEAR(stage(q, Stage::kGatewayQueue), 0.040, kSummaryTol);
}

// Tests that an unfinished timeline is summarized as an error ending at its latest moment.
TEST(TimelineSummaryTest, UnfinishedIsErrorAtLatestMoment) {
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(10));
  t.mark(Moment::kScheduled, at_ms(20));
  const TimelineSummary s = summarize(t);
  EXPECT_EQ(s.reason, FinishReason::kError);
  EXPECT_NEAR(s.e2e_seconds, 0.020, kSummaryTol);
  EXPECT_EQ(s.truncated_stage, Stage::kPrefill);
  EXPECT_NEAR(stage(s, Stage::kPrefill), 0.0, kSummaryTol);
}

// Tests that out-of-order marks give 0, never a negative duration.
TEST(TimelineSummaryTest, NegativeIntervalsClampToZero) {
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(50));
  t.mark(Moment::kScheduled, at_ms(40));  // before preprocess done: caller passed a stale time
  t.add_output(at_ms(60), 1);
  t.add_output(at_ms(55), 1);  // out of order
  t.finish(FinishReason::kStop, at_ms(70));
  const TimelineSummary s = summarize(t);
  EXPECT_EQ(stage(s, Stage::kQueue), 0.0);
  EXPECT_EQ(stage(s, Stage::kDecode), 0.0);
  EXPECT_FALSE(s.tpot_seconds.has_value());
  for_each_output_gap(t, [](double gap, std::uint32_t) { EXPECT_EQ(gap, 0.0); });
}

// Tests that several dependency calls add up in the dependency stage.
TEST(TimelineSummaryTest, DependencyStageSumsCalls) {
  RequestTimeline t(kT0);
  t.add_dependency("embedding", at_ms(1), at_ms(11));
  t.add_dependency("rerank", at_ms(11), at_ms(16));
  t.finish(FinishReason::kError, at_ms(20));
  const TimelineSummary s = summarize(t);
  EXPECT_NEAR(stage(s, Stage::kDependency), 0.015, kSummaryTol);
}

// disagg_request: a disaggregated request. preprocess 0-10, enqueued (to the router) 10, routed
// 12, scheduled on the prefill worker 20, prefilled 50, KV transferred 58, admitted by the decode
// worker 63, tokens 70/80/90, postprocessed 92, sent 95.
RequestTimeline disagg_request() {
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(10));
  t.mark(Moment::kEnqueued, at_ms(10));
  t.mark(Moment::kRouted, at_ms(12));
  t.mark(Moment::kScheduled, at_ms(20));
  t.mark(Moment::kPrefilled, at_ms(50));
  t.mark(Moment::kKvTransferred, at_ms(58));
  t.mark(Moment::kDecodeScheduled, at_ms(63));
  for (int ms : {70, 80, 90}) t.add_output(at_ms(ms), 1);
  t.mark(Moment::kPostprocessed, at_ms(92));
  t.mark(Moment::kSent, at_ms(95));
  t.finish(FinishReason::kStop, at_ms(95));
  return t;
}

// Tests the disaggregated stages: route, queue = prefill pool's wait + decode pool's wait,
// prefill on the prefill worker, kv_transfer, decode from the decode worker's admission; they
// add up to e2e, and the decode pool's wait is its own interval.
TEST(TimelineSummaryTest, DisaggregatedStagesAddUpToE2e) {
  const RequestTimeline t = disagg_request();
  const StageIntervals intervals = stage_intervals(t);
  const TimelineSummary s = summarize(t, intervals);
  const auto check = [&s](Stage st, double want_ms) {
    EXPECT_NEAR(stage(s, st), want_ms / 1000, kSummaryTol) << to_string(st) << ": got " << stage(s, st);
  };
  check(Stage::kPreprocess, 10);
  check(Stage::kRoute, 2);
  check(Stage::kQueue, 8 + 5);
  check(Stage::kPrefill, 30);
  check(Stage::kKvTransfer, 8);
  check(Stage::kDecode, 27);
  check(Stage::kPostprocess, 2);
  check(Stage::kSend, 3);
  double total = 0;
  for (const auto& v : s.stage_seconds) total += v.value_or(0);
  EXPECT_NEAR(total, s.e2e_seconds, kSummaryTol);
  ASSERT_TRUE(intervals.decode_queue.has_value());
  EXPECT_EQ(intervals.decode_queue->start, at_ms(58));
  EXPECT_EQ(intervals.decode_queue->end, at_ms(63));
  EXPECT_NEAR(*s.ttft_seconds, 0.070, kSummaryTol);
}

// Tests a disaggregated request cut short during the KV transfer: kv_transfer is the truncated
// stage and ends at the request's end; no decode stage exists.
TEST(TimelineSummaryTest, DisaggregatedRequestCutDuringTransfer) {
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(10));
  t.mark(Moment::kEnqueued, at_ms(10));
  t.mark(Moment::kRouted, at_ms(12));
  t.mark(Moment::kScheduled, at_ms(20));
  t.mark(Moment::kPrefilled, at_ms(50));
  t.finish(FinishReason::kAbort, at_ms(55));
  const TimelineSummary s = summarize(t);
  EXPECT_EQ(s.truncated_stage, Stage::kKvTransfer);
  EXPECT_NEAR(stage(s, Stage::kKvTransfer), 0.005, kSummaryTol);
  EXPECT_LT(stage(s, Stage::kDecode), 0);
}

}  // namespace
}  // namespace inferscope::timeline
