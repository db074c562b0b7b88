// Tests of the gateway's spans (gateway_trace.h): the traceparent it forwards names its CLIENT span
// with the sampled flag as decided; an invalid incoming one starts a new trace; the CLIENT span
// hangs under the root beside the stage spans; llama.cpp's timings become derived prefill and
// decode spans under the CLIENT span, as long as llama.cpp said, ending when they were read.
#include "gateway/gateway_trace.h"

#include "trace/otlp.h"
#include "trace/span_writer.h"

#include <gtest/gtest.h>

namespace inferscope::gateway {
namespace {

using namespace std::chrono_literals;
using timeline::Moment;

// gateway_spans writes a proxied request's spans and reads them back with the OTLP decoder.
std::vector<trace::Span> gateway_spans(const GatewayTrace& trace, const timeline::RequestTimeline& timeline,
                                       const trace::RequestFacts& facts, const UpstreamCallFacts& call) {
  trace::SpanBytes bytes;
  trace::SpanWriter writer(bytes);
  write_gateway_spans(writer, trace, timeline, facts, call);
  auto spans = trace::decode_spans_field(bytes.view());
  EXPECT_TRUE(spans) << spans.error().message;
  if (!spans) return {};
  EXPECT_EQ(spans->size(), writer.spans());
  return std::move(*spans);
}

trace::TraceSettings tracing(double ratio) {
  trace::TraceSettings s;
  s.otlp_endpoint = "http://127.0.0.1:4318/v1/traces";
  s.policy.sample_ratio = ratio;
  return s;
}

const trace::Span* named(const std::vector<trace::Span>& spans, std::string_view name, trace::SpanKind kind) {
  for (const trace::Span& s : spans) {
    if (s.name == name && s.kind == kind) return &s;
  }
  return nullptr;
}

// Tests the traceparent sent upstream: same trace, the CLIENT span as parent, flags as decided.
TEST(GatewayTraceTest, UpstreamTraceparentNamesTheClientSpan) {
  EXPECT_FALSE(GatewayTrace::begin(trace::TraceSettings{}, "").has_value());  // tracing off

  const auto continued = GatewayTrace::begin(tracing(0), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  ASSERT_TRUE(continued);
  EXPECT_TRUE(continued->continued());
  EXPECT_EQ(continued->upstream_traceparent(),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-" + trace::to_hex(continued->upstream_span_id()) + "-01");
  EXPECT_NE(continued->upstream_span_id(), continued->request().root_span_id);

  const auto unsampled = GatewayTrace::begin(tracing(1), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  EXPECT_TRUE(unsampled->upstream_traceparent().ends_with("-00"));  // the caller's decision wins

  const auto invalid = GatewayTrace::begin(tracing(1), "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01");
  ASSERT_TRUE(invalid);
  EXPECT_FALSE(invalid->continued());
  const std::string header = invalid->upstream_traceparent();
  EXPECT_EQ(header.find("4bf92f3577b34da6a3ce929d0e0e4736"), std::string::npos);
  EXPECT_TRUE(header.ends_with("-03")) << header;  // new: random trace id, sampled at ratio 1
  EXPECT_TRUE(trace::parse_traceparent(header).has_value());
}

// gateway_timeline is a finished streamed request through the gateway, `at(ms)` after arrival.
struct GatewayRequest {
  timeline::TimePoint t0 = timeline::Clock::now();
  timeline::RequestTimeline timeline{t0, timeline::Role::kGateway};
  timeline::TimePoint at(int ms) const { return t0 + std::chrono::milliseconds(ms); }
  GatewayRequest() {
    timeline.mark(Moment::kAdmitted, at(1));
    timeline.mark(Moment::kPreprocessed, at(2));
    timeline.mark(Moment::kUpstreamConnectStart, at(2));
    timeline.mark(Moment::kUpstreamConnected, at(3));
    timeline.mark(Moment::kUpstreamRequestSent, at(4));
    timeline.add_output(at(30), 1);
    timeline.add_output(at(90), 1);
    timeline.mark(Moment::kSent, at(92));
    timeline.finish(timeline::FinishReason::kStop, at(92));
  }
};

trace::RequestFacts chat_facts() {
  trace::RequestFacts f;
  f.operation = "chat";
  f.request_model = "tiny";
  f.route = "/v1/chat/completions";
  f.http_status = 200;
  return f;
}

// Tests the span tree: root, stage children, the CLIENT span with the HTTP client attributes, and
// llama.cpp's timings as derived children of the CLIENT span, ending when they were read.
TEST(GatewayTraceTest, ClientSpanAndDerivedEngineSpans) {
  const auto trace = GatewayTrace::begin(tracing(1), "");
  GatewayRequest r;
  UpstreamCallFacts call;
  call.upstream = "llama";
  call.server_address = "127.0.0.1";
  call.server_port = "8001";
  call.start = r.at(2);
  call.end = r.at(91);
  call.http_status = 200;
  call.timings = EngineTimings{.prompt_ms = 20.5, .predicted_ms = 60, .prompt_n = 71, .predicted_n = 64};
  call.timings_read = r.at(91);
  const auto spans = gateway_spans(*trace, r.timeline, chat_facts(), call);

  const trace::Span* root = named(spans, "chat tiny", trace::SpanKind::kServer);
  const trace::Span* client = named(spans, "chat tiny", trace::SpanKind::kClient);
  ASSERT_TRUE(root != nullptr && client != nullptr);
  EXPECT_EQ(client->span_id, trace->upstream_span_id());
  EXPECT_EQ(client->parent_span_id, root->span_id);
  EXPECT_EQ(client->trace_id, root->trace_id);
  EXPECT_EQ(client->end_unix_ns - client->start_unix_ns, 89'000'000u);
  EXPECT_EQ(*client->attribute("server.port"), trace::AttributeValue(std::int64_t{8001}));
  EXPECT_EQ(*client->attribute("inferscope.upstream"), trace::AttributeValue(std::string("llama")));
  EXPECT_EQ(*client->attribute("http.response.status_code"), trace::AttributeValue(std::int64_t{200}));
  EXPECT_EQ(client->attribute("error.type"), nullptr);
  for (const char* stage : {"gateway_queue", "preprocess", "upstream_connect", "upstream_ttft", "stream", "send"}) {
    const trace::Span* s = named(spans, stage, trace::SpanKind::kInternal);
    ASSERT_NE(s, nullptr) << stage;
    EXPECT_EQ(s->parent_span_id, root->span_id) << stage;
  }
  const trace::Span* decode = nullptr;
  const trace::Span* prefill = nullptr;
  for (const trace::Span& s : spans) {
    if (s.parent_span_id != client->span_id) continue;
    (s.name == "decode" ? decode : prefill) = &s;
    EXPECT_EQ(*s.attribute("inferscope.derived"), trace::AttributeValue(true));
  }
  ASSERT_TRUE(decode != nullptr && prefill != nullptr);
  EXPECT_EQ(prefill->name, "prefill");
  EXPECT_EQ(decode->end_unix_ns, client->end_unix_ns);  // read when the call ended
  EXPECT_EQ(decode->end_unix_ns - decode->start_unix_ns, 60'000'000u);
  EXPECT_EQ(prefill->end_unix_ns, decode->start_unix_ns);
  EXPECT_EQ(prefill->end_unix_ns - prefill->start_unix_ns, 20'500'000u);
  EXPECT_EQ(*decode->attribute("gen_ai.usage.output_tokens"), trace::AttributeValue(std::int64_t{64}));
  EXPECT_EQ(*prefill->attribute("gen_ai.usage.input_tokens"), trace::AttributeValue(std::int64_t{71}));
  EXPECT_EQ(spans.size(), 1u + 6u + 1u + 2u);
}

// Tests timings longer than the call (a replayed stream): the derived spans start no earlier than
// the call; a failed call carries error.type and an ERROR status; no call, no CLIENT span.
TEST(GatewayTraceTest, DerivedSpansStayInsideTheCallAndFailuresShow) {
  const auto trace = GatewayTrace::begin(tracing(1), "");
  GatewayRequest r;
  UpstreamCallFacts call;
  call.start = r.at(2);
  call.end = r.at(91);
  call.error_type = "truncated_stream";
  call.timings = EngineTimings{.prompt_ms = 500, .predicted_ms = 80};
  call.timings_read = r.at(91);
  const auto spans = gateway_spans(*trace, r.timeline, chat_facts(), call);
  const trace::Span* client = named(spans, "chat tiny", trace::SpanKind::kClient);
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->status.code, trace::StatusCode::kError);
  EXPECT_EQ(*client->attribute("error.type"), trace::AttributeValue(std::string("truncated_stream")));
  const trace::Span* prefill = named(spans, "prefill", trace::SpanKind::kInternal);
  ASSERT_NE(prefill, nullptr);
  EXPECT_EQ(prefill->parent_span_id, client->span_id);
  EXPECT_EQ(prefill->start_unix_ns, client->start_unix_ns);
  EXPECT_EQ(prefill->end_unix_ns - prefill->start_unix_ns, 9'000'000u);  // 2 ms .. 11 ms

  UpstreamCallFacts none;  // rejected before any upstream was tried
  const auto alone = gateway_spans(*trace, r.timeline, chat_facts(), none);
  EXPECT_EQ(named(alone, "chat tiny", trace::SpanKind::kClient), nullptr);
}

}  // namespace
}  // namespace inferscope::gateway
