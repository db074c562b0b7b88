// Tests of one request's spans (request_spans.h): the root's GenAI name and attributes, vLLM's
// latency attributes, one child per stage whose length is exactly the summarized stage seconds,
// parents, flags, and the head/tail export decision.
#include "trace/request_spans.h"

#include "trace/otlp.h"
#include "trace/span_writer.h"

#include <inferscope/timeline/timeline_summary.h>

#include <gtest/gtest.h>

namespace inferscope::trace {
namespace {

using timeline::FinishReason;
using timeline::Moment;
using timeline::RequestTimeline;
using timeline::Stage;

const timeline::TimePoint kT0 = timeline::Clock::now();
timeline::TimePoint at_ms(double ms) {
  return kT0 + std::chrono::duration_cast<timeline::Clock::duration>(std::chrono::duration<double, std::milli>(ms));
}

RequestTimeline served_request() {
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(2));
  t.add_dependency("embedding", at_ms(2), at_ms(3.5));
  t.mark(Moment::kEnqueued, at_ms(4));
  t.mark(Moment::kScheduled, at_ms(30.25));
  for (int ms : {100, 120, 140, 160}) t.add_output(at_ms(ms), 1);
  t.mark(Moment::kPostprocessed, at_ms(161));
  t.mark(Moment::kSent, at_ms(170));
  t.set_prompt_tokens(42);
  t.finish(FinishReason::kStop, at_ms(170));
  return t;
}

// request_spans writes a request's spans and reads them back with the OTLP decoder, so every
// test below checks the wire bytes the exporter sends.
std::vector<Span> request_spans(const RequestTrace& trace, const RequestTimeline& t, const RequestFacts& facts) {
  SpanBytes bytes;
  SpanWriter writer(bytes);
  write_request_spans(writer, trace, t, facts);
  auto spans = decode_spans_field(bytes.view());
  EXPECT_TRUE(spans) << spans.error().message;
  if (!spans) return {};
  EXPECT_EQ(spans->size(), writer.spans());
  return std::move(*spans);
}

const AttributeValue& attr(const Span& s, std::string_view key) {
  static const AttributeValue kMissing = std::string("<missing>");
  const AttributeValue* v = s.attribute(key);
  return v != nullptr ? *v : kMissing;
}

// Tests the root span: GenAI name, SERVER kind, arrival -> end, remote parent, attributes.
TEST(RequestSpansTest, RootFollowsGenAiAndVllmNames) {
  const auto incoming = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  const RequestTrace trace = RequestTrace::begin(incoming, 0.0);
  EXPECT_TRUE(trace.head_sampled);  // the parent's flag wins over ratio 0
  const RequestTimeline t = served_request();
  const auto spans = request_spans(trace, t, {.operation = "chat", .request_model = "sim-8b",
                                              .response_model = "sim-8b", .route = "/v1/chat/completions",
                                              .http_status = 200, .max_tokens = 64});
  const Span& root = spans.front();
  EXPECT_EQ(root.name, "chat sim-8b");
  EXPECT_EQ(root.kind, SpanKind::kServer);
  EXPECT_EQ(root.trace_id, incoming->trace_id);
  EXPECT_EQ(root.parent_span_id, incoming->parent_id);
  EXPECT_EQ(root.span_id, trace.root_span_id);
  EXPECT_EQ(root.flags, 0x301U);
  EXPECT_EQ(root.end_unix_ns - root.start_unix_ns, 170'000'000U);
  EXPECT_EQ(root.status.code, StatusCode::kUnset);
  EXPECT_EQ(attr(root, "gen_ai.operation.name"), AttributeValue(std::string("chat")));
  EXPECT_EQ(attr(root, "gen_ai.provider.name"), AttributeValue(std::string("inferscope")));
  EXPECT_EQ(attr(root, "gen_ai.request.model"), AttributeValue(std::string("sim-8b")));
  EXPECT_EQ(attr(root, "gen_ai.response.model"), AttributeValue(std::string("sim-8b")));
  EXPECT_EQ(attr(root, "gen_ai.request.max_tokens"), AttributeValue(std::int64_t{64}));
  EXPECT_EQ(attr(root, "gen_ai.response.finish_reasons"), AttributeValue(StringList{"stop"}));
  EXPECT_EQ(attr(root, "gen_ai.usage.input_tokens"), AttributeValue(std::int64_t{42}));
  EXPECT_EQ(attr(root, "gen_ai.usage.output_tokens"), AttributeValue(std::int64_t{4}));
  EXPECT_EQ(attr(root, "http.response.status_code"), AttributeValue(std::int64_t{200}));
  EXPECT_EQ(attr(root, "http.route"), AttributeValue(std::string("/v1/chat/completions")));
  const timeline::TimelineSummary s = timeline::summarize(t);
  EXPECT_EQ(attr(root, "gen_ai.latency.time_to_first_token"), AttributeValue(*s.ttft_seconds));
  EXPECT_EQ(attr(root, "gen_ai.latency.e2e"), AttributeValue(*s.generation_seconds));
  EXPECT_EQ(attr(root, "gen_ai.latency.time_in_queue"), AttributeValue(*s.stage_seconds[3]));
  EXPECT_EQ(attr(root, "gen_ai.latency.time_in_model_prefill"), AttributeValue(*s.stage_seconds[4]));
  EXPECT_EQ(attr(root, "gen_ai.latency.time_in_model_decode"), AttributeValue(*s.stage_seconds[5]));
  EXPECT_EQ(attr(root, "gen_ai.latency.time_in_model_inference"), AttributeValue(*s.inference_seconds));
  EXPECT_EQ(root.attribute("error.type"), nullptr);
}

// Tests that each stage the request went through is one child whose length in ns equals the
// summarized stage duration (the histogram observation), in time order, parented on the root.
TEST(RequestSpansTest, OneChildPerStageWithTheHistogramsDuration) {
  const RequestTrace trace = RequestTrace::begin(std::nullopt, 1.0);
  const RequestTimeline t = served_request();
  const auto spans = request_spans(trace, t, {.operation = "text_completion", .response_model = "m",
                                              .http_status = 200});
  const timeline::TimelineSummary s = timeline::summarize(t);
  std::vector<std::string> names;
  for (std::size_t i = 1; i < spans.size(); ++i) {
    const Span& span = spans[i];
    names.push_back(span.name);
    EXPECT_EQ(span.trace_id, trace.trace_id);
    EXPECT_EQ(span.parent_span_id, trace.root_span_id);
    EXPECT_EQ(span.kind, SpanKind::kInternal);
    EXPECT_EQ(span.flags, 0x101U);
    EXPECT_GE(span.start_unix_ns, spans[i - 1].start_unix_ns);
    const auto stage = timeline::parse_stage(span.name);
    ASSERT_TRUE(stage.has_value()) << span.name;
    const double seconds = static_cast<double>(span.end_unix_ns - span.start_unix_ns) / 1e9;
    EXPECT_NEAR(seconds, *s.stage_seconds[static_cast<std::size_t>(*stage)], 1e-9) << span.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"preprocess", "dependency", "queue", "prefill", "decode",
                                              "postprocess", "send"}));
  EXPECT_TRUE(spans.front().is_root());
  EXPECT_EQ(spans.front().name, "text_completion m");
  EXPECT_EQ(spans.front().flags, 0x101U);
  EXPECT_EQ(attr(spans[2], "inferscope.dependency"), AttributeValue(std::string("embedding")));
}

// Tests a disaggregated request's spans: route, a queue per pool (inferscope.pool), prefill,
// kv_transfer and decode on one time axis, their lengths adding up to the request's e2e.
TEST(RequestSpansTest, DisaggregatedRequestHasFiveStagesOnOneAxis) {
  const RequestTrace trace = RequestTrace::begin(std::nullopt, 1.0);
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(2));
  t.mark(Moment::kEnqueued, at_ms(2));
  t.mark(Moment::kRouted, at_ms(3));
  t.mark(Moment::kScheduled, at_ms(10));
  t.mark(Moment::kPrefilled, at_ms(40));
  t.mark(Moment::kKvTransferred, at_ms(47));
  t.mark(Moment::kDecodeScheduled, at_ms(50));
  for (int ms : {60, 70, 80}) t.add_output(at_ms(ms), 1);
  t.mark(Moment::kPostprocessed, at_ms(81));
  t.mark(Moment::kSent, at_ms(83));
  t.finish(FinishReason::kStop, at_ms(83));
  const auto spans = request_spans(trace, t, {.operation = "chat", .response_model = "m", .http_status = 200});
  std::vector<std::string> names;
  std::vector<std::string> pools;
  std::uint64_t total_ns = 0;
  for (std::size_t i = 1; i < spans.size(); ++i) {
    names.push_back(spans[i].name);
    total_ns += spans[i].end_unix_ns - spans[i].start_unix_ns;
    EXPECT_GE(spans[i].start_unix_ns, spans[i - 1].start_unix_ns);
    if (spans[i].name == "queue") pools.push_back(std::get<std::string>(attr(spans[i], "inferscope.pool")));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"preprocess", "route", "queue", "prefill", "kv_transfer", "queue",
                                              "decode", "postprocess", "send"}));
  EXPECT_EQ(pools, (std::vector<std::string>{"prefill", "decode"}));
  EXPECT_NEAR(static_cast<double>(total_ns) / 1e6, 83.0, 1e-3);
  EXPECT_EQ(spans[5].end_unix_ns - spans[5].start_unix_ns, 7'000'000u);  // kv_transfer 40 -> 47 ms
}

// Tests that a 5xx is an error span (status, error.type) and an aborted prefill a truncated stage.
TEST(RequestSpansTest, ErrorsAndTruncatedStages) {
  RequestTimeline t(kT0);
  t.mark(Moment::kPreprocessed, at_ms(1));
  t.mark(Moment::kScheduled, at_ms(5));
  t.finish(FinishReason::kError, at_ms(9));
  EXPECT_TRUE(is_failed_request(t, 500));
  EXPECT_TRUE(is_failed_request(t, 0));
  EXPECT_FALSE(is_failed_request(t, 400));
  const auto spans = request_spans(RequestTrace::begin(std::nullopt, 1.0), t,
                                   {.operation = "chat", .response_model = "m", .http_status = 500});
  EXPECT_EQ(spans.front().status.code, StatusCode::kError);
  EXPECT_EQ(attr(spans.front(), "error.type"), AttributeValue(std::string("500")));
  EXPECT_EQ(spans.front().attribute("gen_ai.response.finish_reasons"), nullptr);
  EXPECT_EQ(spans.front().attribute("gen_ai.latency.time_in_model_prefill"), nullptr);  // cut short
  EXPECT_EQ(spans.back().name, "prefill");
  EXPECT_EQ(attr(spans.back(), "inferscope.stage.truncated"), AttributeValue(true));
  EXPECT_EQ(spans.back().end_unix_ns - spans.back().start_unix_ns, 4'000'000U);
}

// Tests the export rule: head-sampled, failed or slow.
TEST(RequestSpansTest, PolicyKeepsSampledFailedAndSlow) {
  const auto unsampled = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  const RequestTrace trace = RequestTrace::begin(unsampled, 1.0);
  EXPECT_FALSE(trace.head_sampled);
  EXPECT_EQ(trace.trace_flags & kSampledFlag, 0);
  const TracePolicy policy{.sample_ratio = 1.0, .slow_seconds = 2.0};
  EXPECT_FALSE(policy.keep(trace, false, 1.9));
  EXPECT_TRUE(policy.keep(trace, false, 2.0));
  EXPECT_TRUE(policy.keep(trace, true, 0.1));
  EXPECT_FALSE(TracePolicy{}.keep(trace, false, 100));
  EXPECT_TRUE(TracePolicy{}.keep(RequestTrace::begin(std::nullopt, 1.0), false, 0));
  EXPECT_EQ(RequestTrace::begin(std::nullopt, 1.0).trace_flags, 0x03);  // sampled + random
}

}  // namespace
}  // namespace inferscope::trace
