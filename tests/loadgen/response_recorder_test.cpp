#include "loadgen/response_recorder.h"

#include <gtest/gtest.h>

namespace inferscope::loadgen {
namespace {

std::string chunk(const std::string& content) {
  return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + content + "\"},\"finish_reason\":null}]}\n\n";
}
const char kFinalWithUsage[] =
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":5}}\n\n";
const char kFinalNoUsage[] = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";

struct Fixture {
  RequestRecord record;
  OpenAiEventParser parser;
  Fixture(bool streaming) {
    record.streaming = streaming;
    record.started_ns = 1000;
  }
};

// Tests that TTFT anchors at the first content event, skipping a role-only chunk, and that usage
// gives the output token count when the server sends it.
TEST(ResponseRecorderTest, StreamWithUsage) {
  Fixture fx(true);
  ResponseRecorder r(fx.record, fx.parser);
  r.on_body("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n", 2000);
  r.on_body(chunk("a") + chunk("b"), 5000);
  r.on_body(chunk("c") + kFinalWithUsage + "data: [DONE]\n\n", 9000);
  r.on_end(9500);
  EXPECT_EQ(fx.record.error, ErrorKind::kNone);
  EXPECT_EQ(fx.record.first_event_ns, 2000);
  EXPECT_EQ(fx.record.first_content_ns, 5000);
  EXPECT_EQ(fx.record.last_token_ns, 9000);
  EXPECT_EQ(fx.record.end_ns, 9500);
  EXPECT_EQ(fx.record.token_events, 3u);
  EXPECT_EQ(fx.record.events, 6u);
  EXPECT_EQ(fx.record.output_tokens, 5u);
  EXPECT_EQ(fx.record.input_tokens, 7u);
  EXPECT_EQ(fx.record.token_source, TokenSource::kUsage);
  EXPECT_EQ(fx.record.token_event_us, (std::vector<std::uint32_t>{4, 4, 8}));
}

// Tests that without usage the content events are counted and the source says so.
TEST(ResponseRecorderTest, StreamWithoutUsageCounts) {
  Fixture fx(true);
  ResponseRecorder r(fx.record, fx.parser);
  r.on_body(chunk("a") + chunk("b") + kFinalNoUsage + "data: [DONE]\n\n", 3000);
  r.on_end(3000);
  EXPECT_EQ(fx.record.error, ErrorKind::kNone);
  EXPECT_EQ(fx.record.output_tokens, 2u);
  EXPECT_EQ(fx.record.token_source, TokenSource::kCounted);
}

// Tests the stream error kinds: cut before [DONE], bad JSON, an error object.
TEST(ResponseRecorderTest, StreamErrorKinds) {
  auto run = [](const std::string& body) {
    Fixture fx(true);
    ResponseRecorder r(fx.record, fx.parser);
    r.on_body(body, 2000);
    r.on_end(3000);
    return fx.record.error;
  };
  EXPECT_EQ(run(chunk("a") + chunk("b")), ErrorKind::kTruncatedStream);
  EXPECT_EQ(run(chunk("a") + "data: {\"choices\":[{\"delta\n\n" + "data: [DONE]\n\n"), ErrorKind::kMalformedStream);
  EXPECT_EQ(run(chunk("a") + "data: {\"error\":{\"message\":\"x\"}}\n\ndata: [DONE]\n\n"), ErrorKind::kStreamError);
  // A finish_reason without [DONE] is a complete answer from a server that omits the sentinel.
  EXPECT_EQ(run(chunk("a") + kFinalNoUsage), ErrorKind::kNone);
}

// Tests a non-streamed body: usage wins, otherwise the content is estimated at 4 bytes a token.
TEST(ResponseRecorderTest, NonStreamed) {
  {
    Fixture fx(false);
    ResponseRecorder r(fx.record, fx.parser);
    r.on_body(R"({"choices":[{"message":{"content":"hello"}}],)", 2000);
    r.on_body(R"("usage":{"prompt_tokens":3,"completion_tokens":12}})", 2500);
    r.on_end(3000);
    EXPECT_EQ(fx.record.error, ErrorKind::kNone);
    EXPECT_EQ(fx.record.output_tokens, 12u);
    EXPECT_EQ(fx.record.token_source, TokenSource::kUsage);
    EXPECT_EQ(fx.record.first_content_ns, 3000);
  }
  {
    Fixture fx(false);
    ResponseRecorder r(fx.record, fx.parser);
    r.on_body(R"({"choices":[{"message":{"content":"abcdefghi"}}]})", 2000);
    r.on_end(3000);
    EXPECT_EQ(fx.record.output_tokens, 3u);
    EXPECT_EQ(fx.record.token_source, TokenSource::kEstimated);
  }
  {
    Fixture fx(false);
    ResponseRecorder r(fx.record, fx.parser);
    r.on_body(R"({"choices":[{"message":)", 2000);
    r.on_end(3000);
    EXPECT_EQ(fx.record.error, ErrorKind::kMalformedStream);
  }
}

}  // namespace
}  // namespace inferscope::loadgen
