// Tests of RequestTimeline recording and of the Stage/FinishReason names.
#include <inferscope/timeline/request_timeline.h>
#include <inferscope/timeline/stage.h>

#include <gtest/gtest.h>

#include "support/registry_scrape.h"

namespace inferscope::timeline {
namespace {

using inferscope::testing::at_ms;
using inferscope::testing::kT0;

// Tests that the first mark of a moment wins and that arrival comes from the constructor.
TEST(RequestTimelineTest, FirstMarkWins) {
  RequestTimeline t(kT0);
  EXPECT_EQ(t.moment(Moment::kArrival), kT0);
  EXPECT_FALSE(t.moment(Moment::kScheduled).has_value());
  t.mark(Moment::kScheduled, at_ms(30));
  t.mark(Moment::kScheduled, at_ms(90));  // re-scheduled after a preemption
  t.mark(Moment::kArrival, at_ms(5));
  EXPECT_EQ(t.moment(Moment::kScheduled), at_ms(30));
  EXPECT_EQ(t.moment(Moment::kArrival), kT0);
}

// Tests that 0-token events are counted but never become the first output.
TEST(RequestTimelineTest, EmptyEventsAreNotOutputs) {
  RequestTimeline t(kT0);
  t.add_output(at_ms(10), 0);
  EXPECT_FALSE(t.first_output().has_value());
  t.add_output(at_ms(20), 2);
  t.add_output(at_ms(25), 0);
  t.add_output(at_ms(30), 1);
  EXPECT_EQ(t.first_output(), at_ms(20));
  EXPECT_EQ(t.last_output(), at_ms(30));
  EXPECT_EQ(t.outputs().size(), 2U);
  EXPECT_EQ(t.output_tokens(), 3U);
  EXPECT_EQ(t.empty_events(), 2U);
}

// Tests that set_output_tokens overrides the event sum and 0 clears the override.
TEST(RequestTimelineTest, OutputTokenOverride) {
  RequestTimeline t(kT0, Role::kGateway);
  t.add_output(at_ms(10), 1);
  t.add_output(at_ms(20), 1);
  t.set_output_tokens(7);
  EXPECT_EQ(t.output_tokens(), 7U);
  t.set_output_tokens(0);
  EXPECT_EQ(t.output_tokens(), 2U);
  EXPECT_EQ(t.role(), Role::kGateway);
}

// Tests that finish keeps the first reason and time, and end() of an unfinished timeline is the
// latest recorded time.
TEST(RequestTimelineTest, FinishAndEnd) {
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(10));
  t.add_dependency("embedding", at_ms(11), at_ms(40));
  EXPECT_FALSE(t.finished());
  EXPECT_EQ(t.end(), at_ms(40));
  t.finish(FinishReason::kAbort, at_ms(50));
  t.finish(FinishReason::kStop, at_ms(60));
  EXPECT_TRUE(t.finished());
  EXPECT_EQ(t.finish_reason(), FinishReason::kAbort);
  EXPECT_EQ(t.end(), at_ms(50));
  ASSERT_EQ(t.dependencies().size(), 1U);
  EXPECT_EQ(t.dependencies()[0].name, "embedding");
}

// Tests that every stage name round-trips and unknown names are rejected.
TEST(StageTest, NamesRoundTrip) {
  for (Stage stage : kAllStages) {
    EXPECT_EQ(parse_stage(to_string(stage)), stage) << to_string(stage);
  }
  EXPECT_EQ(to_string(Stage::kGatewayQueue), "gateway_queue");
  EXPECT_EQ(to_string(Stage::kUpstreamTtft), "upstream_ttft");
  EXPECT_FALSE(parse_stage("tokenize").has_value());
  EXPECT_EQ(to_string(FinishReason::kLength), "length");
  EXPECT_EQ(to_string(FinishReason::kAbort), "abort");
}

}  // namespace
}  // namespace inferscope::timeline
