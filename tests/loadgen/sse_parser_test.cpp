#include "loadgen/sse_parser.h"

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace inferscope::loadgen {
namespace {

struct Collected {
  std::vector<std::pair<std::string, std::int64_t>> events;
  SseParser parser{[this](std::string_view d, std::int64_t t) { events.emplace_back(std::string(d), t); }, 64};
};

// Tests that events split on blank lines under LF, CRLF and CR line endings.
TEST(SseParserTest, AllLineEndings) {
  for (std::string eol : {"\n", "\r\n", "\r"}) {
    Collected c;
    c.parser.feed("data: a" + eol + eol + "data: b" + eol + eol, 1);
    ASSERT_EQ(c.events.size(), 2u) << "eol size " << eol.size();
    EXPECT_EQ(c.events[0].first, "a");
    EXPECT_EQ(c.events[1].first, "b");
  }
}

// Tests that a stream fed one byte at a time gives the same events, with a CRLF split across feeds
// counted once, and that each event carries the time of its first byte.
TEST(SseParserTest, ByteAtATimeKeepsFirstByteTime) {
  std::string body = "data: x\r\n\r\n: ping\r\n\r\ndata: y\r\n\r\n";
  Collected c;
  for (std::size_t i = 0; i < body.size(); ++i) c.parser.feed(body.substr(i, 1), static_cast<std::int64_t>(i));
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[0].first, "x");
  EXPECT_EQ(c.events[0].second, 0);
  EXPECT_EQ(c.events[1].first, "y");
  EXPECT_EQ(c.events[1].second, static_cast<std::int64_t>(body.find("data: y")));
}

// Tests that multi-line data joins with newlines, comments and other fields are ignored, a field
// without a space keeps its value, and an event without data is not dispatched.
TEST(SseParserTest, FieldsCommentsAndMultiLineData) {
  Collected c;
  c.parser.feed(": comment\nevent: message\nid: 3\nretry: 10\n\ndata:one\ndata: two\n\n", 5);
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].first, "one\ntwo");
}

// Tests that an event whose data exceeds the bound sets error() and stops dispatching.
TEST(SseParserTest, OversizedEventIsAnError) {
  Collected c;
  c.parser.feed("data: " + std::string(100, 'z') + "\n\ndata: ok\n\n", 1);
  EXPECT_TRUE(c.parser.error());
  EXPECT_TRUE(c.events.empty());
}

// Tests that finish() dispatches a trailing event cut off before its blank line.
TEST(SseParserTest, FinishFlushesTrailingEvent) {
  Collected c;
  c.parser.feed("data: a\n\ndata: partial", 1);
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_TRUE(c.parser.finish());
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[1].first, "partial");
  EXPECT_FALSE(c.parser.finish());
}

// Tests that llama.cpp's non-standard `error:` field is noted (it carries no data event) and that
// other unknown fields are not.
TEST(SseParserTest, ErrorFieldIsNoted) {
  Collected c;
  c.parser.feed("event: x\nid: 1\n\n", 0);
  EXPECT_FALSE(c.parser.error_field_seen());
  c.parser.feed("error: {\"code\":400}\n\ndata: [DONE]\n\n", 1);
  EXPECT_TRUE(c.parser.error_field_seen());
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].first, "[DONE]");
}

// Tests that the real llama.cpp capture (first and last events of a 64-token answer, the middle
// elided by a "..." line that is not a field) yields its 7 data events, ending with [DONE].
TEST(SseParserTest, LlamaCppCapture) {
  std::ifstream in(INFERSCOPE_SOURCE_DIR "/tests/loadgen/testdata/llamacpp-b4748-chat-stream.sse", std::ios::binary);
  ASSERT_TRUE(in) << "missing sample";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string body = ss.str();
  std::vector<std::string> events;
  SseParser p([&](std::string_view d, std::int64_t) { events.emplace_back(d); });
  for (std::size_t i = 0; i < body.size(); i += 1000) p.feed(std::string_view(body).substr(i, 1000), 0);
  EXPECT_FALSE(p.finish());
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(events.back(), "[DONE]");
  EXPECT_NE(events[5].find("\"completion_tokens\":64"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::loadgen
