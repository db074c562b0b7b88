#include "loadgen/openai_event.h"

#include <gtest/gtest.h>

namespace inferscope::loadgen {
namespace {

// Tests that a vLLM role-only chunk has choices but no output, so it never anchors TTFT.
TEST(OpenAiEventTest, RoleChunkIsNotOutput) {
  OpenAiEventParser p;
  EventFields f = p.parse(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]})");
  EXPECT_TRUE(f.valid);
  EXPECT_TRUE(f.has_choices);
  EXPECT_FALSE(f.has_content);
  EXPECT_FALSE(f.has_output);
  EXPECT_FALSE(f.finished);
}

// Tests that content, completions text, reasoning and tool calls count as output.
TEST(OpenAiEventTest, OutputKinds) {
  OpenAiEventParser p;
  EXPECT_TRUE(p.parse(R"({"choices":[{"delta":{"content":" time"}}]})").has_content);
  EXPECT_TRUE(p.parse(R"({"choices":[{"text":"hi","finish_reason":null}]})").has_content);
  EventFields r = p.parse(R"({"choices":[{"delta":{"reasoning_content":"hmm"}}]})");
  EXPECT_TRUE(r.has_output);
  EXPECT_FALSE(r.has_content);
  EXPECT_TRUE(p.parse(R"({"choices":[{"delta":{"tool_calls":[{"id":"1"}]}}]})").has_output);
  EXPECT_FALSE(p.parse(R"({"choices":[{"delta":{"tool_calls":[]}}]})").has_output);
}

// Tests that usage and finish_reason are read from llama.cpp's final chunk and vLLM's usage chunk.
TEST(OpenAiEventTest, UsageAndFinish) {
  OpenAiEventParser p;
  EventFields l = p.parse(
      R"({"choices":[{"finish_reason":"length","index":0,"delta":{}}],"created":1,"usage":{"completion_tokens":64,"prompt_tokens":71,"total_tokens":135},"timings":{"prompt_n":71}})");
  EXPECT_TRUE(l.valid);
  EXPECT_TRUE(l.finished);
  EXPECT_EQ(l.completion_tokens, 64u);
  EXPECT_EQ(l.prompt_tokens, 71u);
  EventFields v = p.parse(R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9}})");
  EXPECT_FALSE(v.has_choices);
  EXPECT_EQ(v.completion_tokens, 9u);
}

// Tests that a non-streamed response's message content and an error object are recognised.
TEST(OpenAiEventTest, MessageAndError) {
  OpenAiEventParser p;
  EventFields m = p.parse(R"({"choices":[{"message":{"role":"assistant","content":"abcd efgh"},"finish_reason":"stop"}]})");
  EXPECT_TRUE(m.has_content);
  EXPECT_EQ(m.content_bytes, 9u);
  EXPECT_TRUE(p.parse(R"({"error":{"message":"boom","type":"server_error"}})").is_error);
}

// Tests that broken JSON, non-objects and trailing junk are invalid.
TEST(OpenAiEventTest, MalformedIsInvalid) {
  OpenAiEventParser p;
  for (const char* bad : {"", "{", "[1,2]", "{\"choices\":[{\"delta\":", "{\"a\":1} junk", "not json", "{\"a\":}"}) {
    EXPECT_FALSE(p.parse(bad).valid) << bad;
  }
}

}  // namespace
}  // namespace inferscope::loadgen
