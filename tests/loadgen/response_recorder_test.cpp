#include "loadgen/response_recorder.h"

#include <fstream>
#include <sstream>

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

std::string testdata(const char* name) {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR "/tests/loadgen/testdata/") + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// record_body feeds `body` in `step`-byte reads (1 ms apart) to a streamed record and ends it.
RequestRecord record_body(const std::string& body, std::size_t step) {
  Fixture fx(true);
  ResponseRecorder r(fx.record, fx.parser);
  std::int64_t t = 2000;
  for (std::size_t i = 0; i < body.size(); i += step, t += 1'000'000) r.on_body(std::string_view(body).substr(i, step), t);
  r.on_end(t);
  return fx.record;
}

// Tests that llama.cpp's real mid-stream failure (HTTP 200, an `error: {...}` SSE line, then
// data: [DONE]) is a stream error however the bytes are split, not a 0-token success.
TEST(ResponseRecorderTest, LlamaCppErrorLineIsStreamError) {
  std::string body = testdata("llamacpp-c392e50-stream-error.sse");
  ASSERT_NE(body.find("error: {"), std::string::npos) << "missing sample";
  for (std::size_t step : {body.size(), std::size_t{7}, std::size_t{1}}) {
    RequestRecord rec = record_body(body, step);
    EXPECT_EQ(rec.error, ErrorKind::kStreamError) << "step " << step << " got " << to_string(rec.error);
    EXPECT_FALSE(rec.ok());
  }
}

// Tests that vLLM's shape of a mid-stream failure (data: {"error": ...} after content, then
// [DONE]) is a stream error even though output was already received.
TEST(ResponseRecorderTest, VllmErrorEventAfterContentIsStreamError) {
  std::string body = testdata("vllm-shape-stream-error.sse");
  ASSERT_NE(body.find("\"error\""), std::string::npos) << "missing sample";
  RequestRecord rec = record_body(body, 64);
  EXPECT_EQ(rec.error, ErrorKind::kStreamError) << to_string(rec.error);
  EXPECT_EQ(rec.token_events, 1u);  // the "Hello" chunk arrived before the error
  EXPECT_FALSE(rec.ok());
}

// Tests that a stream ending cleanly with neither output nor a finish_reason is kEmptyResponse,
// while a finish_reason alone (an immediate end of sequence) is a valid, empty answer.
TEST(ResponseRecorderTest, EmptyStreamIsAFailure) {
  auto check = [](const std::string& body, ErrorKind want) {
    RequestRecord rec = record_body(body, body.size());
    EXPECT_EQ(rec.error, want) << "body " << body << " got " << to_string(rec.error);
  };
  check("data: [DONE]\n\n", ErrorKind::kEmptyResponse);
  check("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\ndata: [DONE]\n\n",
        ErrorKind::kEmptyResponse);
  check(std::string(kFinalNoUsage) + "data: [DONE]\n\n", ErrorKind::kNone);
  check(chunk("a") + "data: [DONE]\n\n", ErrorKind::kNone);
  Fixture fx(false);
  ResponseRecorder r(fx.record, fx.parser);
  r.on_body(R"({"id":"x","choices":[]})", 2000);
  r.on_end(3000);
  EXPECT_EQ(fx.record.error, ErrorKind::kEmptyResponse);
}

// Tests that the server's usage.prompt_tokens replaces the client's input estimate and marks it.
TEST(ResponseRecorderTest, UsageReplacesInputEstimate) {
  Fixture fx(true);
  fx.record.input_tokens = 100;
  fx.record.input_token_source = TokenSource::kEstimated;
  ResponseRecorder r(fx.record, fx.parser);
  r.on_body(chunk("a") + kFinalWithUsage + "data: [DONE]\n\n", 2000);
  r.on_end(2000);
  EXPECT_EQ(fx.record.input_tokens, 7u);
  EXPECT_EQ(fx.record.input_token_source, TokenSource::kUsage);
  Fixture plain(true);
  plain.record.input_tokens = 100;
  plain.record.input_token_source = TokenSource::kEstimated;
  ResponseRecorder p(plain.record, plain.parser);
  p.on_body(chunk("a") + kFinalNoUsage + "data: [DONE]\n\n", 2000);
  p.on_end(2000);
  EXPECT_EQ(plain.record.input_tokens, 100u);
  EXPECT_EQ(plain.record.input_token_source, TokenSource::kEstimated);
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
