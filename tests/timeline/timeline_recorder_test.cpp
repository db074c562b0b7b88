// Tests of TimelineRecorder: observations checked by rendering the registry and parsing it back.
#include <inferscope/timeline/timeline_recorder.h>

#include <string>

#include <gtest/gtest.h>
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/exposition_parser.h>

#include "support/registry_scrape.h"

namespace inferscope::timeline {
namespace {

using metrics::ParsedExposition;
using metrics::value_of;

using inferscope::testing::at_ms;
using inferscope::testing::kT0;
using inferscope::testing::scrape;
constexpr double kTol = 1e-9;
constexpr std::string_view kChat = "/v1/chat/completions";

TimelineRecorderOptions options() {
  TimelineRecorderOptions o;
  o.model_names = {"llama"};
  o.routes = {std::string(kChat)};
  o.dependency_names = {"embedding"};
  return o;
}

// One streamed request: scheduled 30, role chunk 40, tokens 100 (1), 130 (3), 150 (2), sent 160.
RequestTimeline streamed_request() {
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(10));
  t.add_dependency("embedding", at_ms(10), at_ms(14));
  t.add_dependency("vector-db", at_ms(14), at_ms(15));
  t.mark(Moment::kScheduled, at_ms(30));
  t.add_output(at_ms(40), 0);
  t.add_output(at_ms(100), 1);
  t.add_output(at_ms(130), 3);
  t.add_output(at_ms(150), 2);
  t.mark(Moment::kPostprocessed, at_ms(155));
  t.mark(Moment::kSent, at_ms(160));
  t.set_prompt_tokens(12);
  t.finish(FinishReason::kStop, at_ms(160));
  return t;
}

// Tests that a finished request lands in every family with the right values and labels.
TEST(TimelineRecorderTest, RecordsFinishedRequest) {
  metrics::Registry registry;
  TimelineRecorder recorder(registry, options());
  RequestTimeline t = streamed_request();
  recorder.begin(t);
  EXPECT_EQ(value_of(scrape(registry), "inferscope_requests_in_flight"), 1.0);
  recorder.record(t, {"llama", kChat, 200});
  const ParsedExposition e = scrape(registry);

  EXPECT_EQ(value_of(e, "inferscope_requests_in_flight"), 0.0);
  EXPECT_EQ(value_of(e, "inferscope_requests_total",
                     {{"model", "llama"}, {"route", kChat}, {"status_class", "2xx"}, {"finish_reason", "stop"}}),
            1.0);
  EXPECT_NEAR(*value_of(e, "inferscope_request_duration_seconds_sum", {{"status_class", "2xx"}}), 0.160, kTol);
  const auto stage_sum = [&e](std::string_view stage) {
    return value_of(e, "inferscope_stage_duration_seconds_sum", {{"model", "llama"}, {"stage", stage}});
  };
  EXPECT_NEAR(*stage_sum("preprocess"), 0.010, kTol);
  EXPECT_NEAR(*stage_sum("dependency"), 0.005, kTol);
  EXPECT_NEAR(*stage_sum("queue"), 0.020, kTol);
  EXPECT_NEAR(*stage_sum("prefill"), 0.070, kTol);
  EXPECT_NEAR(*stage_sum("decode"), 0.050, kTol);
  EXPECT_NEAR(*stage_sum("postprocess"), 0.005, kTol);
  EXPECT_NEAR(*stage_sum("send"), 0.005, kTol);
  EXPECT_FALSE(stage_sum("gateway_queue").has_value());
  EXPECT_EQ(value_of(e, "inferscope_dependency_duration_seconds_count", {{"dependency", "embedding"}}), 1.0);
  EXPECT_NEAR(*value_of(e, "inferscope_dependency_duration_seconds_sum", {{"dependency", "other"}}), 0.001, kTol);

  EXPECT_NEAR(*value_of(e, "inferscope_time_to_first_token_seconds_sum"), 0.100, kTol);
  EXPECT_NEAR(*value_of(e, "inferscope_time_per_output_token_seconds_sum"), 0.010, kTol);
  EXPECT_EQ(value_of(e, "inferscope_prompt_tokens_total", {{"model", "llama"}}), 12.0);
  EXPECT_EQ(value_of(e, "inferscope_generation_tokens_total", {{"model", "llama"}}), 6.0);
  EXPECT_EQ(value_of(e, "inferscope_request_generation_tokens_bucket", {{"le", "5"}}), 0.0);
  EXPECT_EQ(value_of(e, "inferscope_request_generation_tokens_bucket", {{"le", "10"}}), 1.0);
}

// Tests that ITL is observed once per token: an event with k tokens gives k samples of gap/k.
TEST(TimelineRecorderTest, InterTokenLatencyPerToken) {
  metrics::Registry registry;
  TimelineRecorder recorder(registry, options());
  recorder.record(streamed_request(), {"llama", kChat, 200});
  const ParsedExposition e = scrape(registry);
  // Gaps: 30 ms carrying 3 tokens (3 x 10 ms), 20 ms carrying 2 tokens (2 x 10 ms).
  EXPECT_EQ(value_of(e, "inferscope_inter_token_latency_seconds_count"), 5.0);
  EXPECT_NEAR(*value_of(e, "inferscope_inter_token_latency_seconds_sum"), 0.050, kTol);
  EXPECT_EQ(value_of(e, "inferscope_inter_token_latency_seconds_bucket", {{"le", "0.0075"}}), 0.0);
  EXPECT_EQ(value_of(e, "inferscope_inter_token_latency_seconds_bucket", {{"le", "0.01"}}), 5.0);
}

// Tests that an abort before the first token records no TTFT, counts the truncated stage and
// still counts the request and its e2e time.
TEST(TimelineRecorderTest, AbortBeforeFirstToken) {
  metrics::Registry registry;
  TimelineRecorder recorder(registry, options());
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(10));
  t.finish(FinishReason::kAbort, at_ms(510));
  recorder.record(t, {"llama", kChat, 200});
  const ParsedExposition e = scrape(registry);
  EXPECT_FALSE(value_of(e, "inferscope_time_to_first_token_seconds_count").has_value());
  EXPECT_EQ(value_of(e, "inferscope_stage_truncated_total", {{"stage", "queue"}}), 1.0);
  EXPECT_NEAR(*value_of(e, "inferscope_stage_duration_seconds_sum", {{"stage", "queue"}}), 0.5, kTol);
  EXPECT_FALSE(value_of(e, "inferscope_stage_duration_seconds_count", {{"stage", "prefill"}}).has_value());
  EXPECT_EQ(value_of(e, "inferscope_requests_total", {{"finish_reason", "abort"}}), 1.0);
  EXPECT_FALSE(value_of(e, "inferscope_generation_tokens_total").has_value());
}

// Tests that unconfigured models and routes map to "other" and status classes are bounded.
TEST(TimelineRecorderTest, UnboundedValuesMapToOther) {
  metrics::Registry registry;
  TimelineRecorder recorder(registry, options());
  const auto check = [&](std::string_view model, std::string_view route, int status,
                         std::string_view want_model, std::string_view want_route, std::string_view want_class) {
    RequestTimeline t(kT0);
    t.finish(FinishReason::kError, at_ms(1));
    recorder.record(t, {model, route, status});
    const ParsedExposition e = scrape(registry);
    EXPECT_TRUE(value_of(e, "inferscope_requests_total",
                         {{"model", want_model}, {"route", want_route}, {"status_class", want_class}})
                    .has_value())
        << model << " " << route << " " << status;
  };
  check("llama", kChat, 200, "llama", kChat, "2xx");
  check("secret-user-prompt", "/v1/x?user=1", 404, "other", "other", "4xx");
  check("llama", kChat, 503, "llama", kChat, "5xx");
  check("llama", kChat, 0, "llama", kChat, "none");
  check("llama", kChat, 999, "llama", kChat, "none");
  EXPECT_EQ(recorder.model_label("nope"), "other");
  EXPECT_EQ(recorder.model_index("llama"), 0U);
  EXPECT_EQ(status_class(429), "4xx");
}

// Tests that the stage histogram has the fine buckets starting at 1 ms.
TEST(TimelineRecorderTest, FineBucketsFromOneMillisecond) {
  metrics::Registry registry;
  TimelineRecorder recorder(registry, options());
  recorder.record(streamed_request(), {"llama", kChat, 200});
  const ParsedExposition e = scrape(registry);
  const auto samples = metrics::find_samples(e, "inferscope_stage_duration_seconds_bucket", {{"stage", "send"}});
  ASSERT_FALSE(samples.empty());
  EXPECT_EQ(metrics::label_value(*samples.front(), "le"), "0.001");
  EXPECT_EQ(metrics::label_value(*samples.back(), "le"), "+Inf");
}

// Tests that a second recorder on the same registry is refused (duplicate families).
TEST(TimelineRecorderTest, DuplicateRegistrationThrows) {
  metrics::Registry registry;
  TimelineRecorder recorder(registry, options());
  EXPECT_THROW(TimelineRecorder(registry, options()), std::invalid_argument);
}

}  // namespace
}  // namespace inferscope::timeline
