// Tests of W3C traceparent parsing/formatting and the head-sampling decision (trace_context.h).
#include "trace/trace_context.h"

#include <gtest/gtest.h>

namespace inferscope::trace {
namespace {

constexpr std::string_view kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

// Tests that the spec's example parses into its ids and flags and formats back unchanged.
TEST(TraceContextTest, ParsesAndFormatsTheSpecExample) {
  const auto parent = parse_traceparent(kValid);
  ASSERT_TRUE(parent.has_value());
  EXPECT_EQ(to_hex(parent->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(to_hex(parent->parent_id), "00f067aa0ba902b7");
  EXPECT_TRUE(parent->sampled());
  EXPECT_EQ(format_traceparent(parent->trace_id, parent->parent_id, parent->flags), kValid);
  const auto unsampled = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ASSERT_TRUE(unsampled.has_value());
  EXPECT_FALSE(unsampled->sampled());
}

// Tests that every form the spec calls invalid is refused (the caller then starts a new trace).
TEST(TraceContextTest, RefusesInvalidHeaders) {
  for (std::string_view bad : {
           "",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",     // short
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",    // uppercase
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",    // zero trace id
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",    // zero parent id
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // version ff
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",  // version 00 with more
           "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // separator
           "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",    // non-hex
           " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   // leading space
           "0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // version not hex
           "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",   // later version, no dash
       }) {
    EXPECT_FALSE(parse_traceparent(bad).has_value()) << "'" << bad << "'";
  }
}

// Tests the spec's forward compatibility: a later version is read by its version-00 prefix.
TEST(TraceContextTest, AcceptsALaterVersionByItsPrefix) {
  const auto parent = parse_traceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future");
  ASSERT_TRUE(parent.has_value());
  EXPECT_EQ(to_hex(parent->parent_id), "00f067aa0ba902b7");
}

// Tests that formatting keeps only the sampled and random bits.
TEST(TraceContextTest, FormatSendsOtherFlagBitsAsZero) {
  const auto parent = parse_traceparent(kValid);
  EXPECT_EQ(format_traceparent(parent->trace_id, parent->parent_id, 0xff).substr(53), "03");
}

// Tests ParentBased sampling: the parent's flag wins; without a parent the ratio decides by trace
// id, the same id always the same way, and about `ratio` of random ids are kept.
TEST(TraceContextTest, HeadSamplingFollowsParentThenRatio) {
  const auto sampled = parse_traceparent(kValid);
  auto unsampled = sampled;
  unsampled->flags = 0;
  const TraceId id = random_trace_id();
  EXPECT_TRUE(head_sampled(id, sampled, 0.0));
  EXPECT_FALSE(head_sampled(id, unsampled, 1.0));
  EXPECT_TRUE(head_sampled(id, std::nullopt, 1.0));
  EXPECT_FALSE(head_sampled(id, std::nullopt, 0.0));
  int kept = 0;
  for (int i = 0; i < 20000; ++i) {
    const TraceId t = random_trace_id();
    const bool first = head_sampled(t, std::nullopt, 0.25);
    EXPECT_EQ(first, head_sampled(t, std::nullopt, 0.25));
    kept += first ? 1 : 0;
  }
  EXPECT_NEAR(kept, 5000, 400);  // binomial sd ~61: 6.5 sd
}

// Tests that random ids are never zero and do not repeat.
TEST(TraceContextTest, RandomIdsAreNonZeroAndDistinct) {
  const TraceId a = random_trace_id();
  const TraceId b = random_trace_id();
  EXPECT_FALSE(is_zero(a));
  EXPECT_NE(a, b);
  EXPECT_NE(random_span_id(), random_span_id());
}

}  // namespace
}  // namespace inferscope::trace
