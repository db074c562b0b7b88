// Tests for serve/openai_response.h and serve/chat_template.h: every event is valid JSON of the
// OpenAI shape, and escaping survives any byte the token text may carry.
#include "serve/openai_response.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "serve/chat_template.h"

namespace inferscope::serve {
namespace {

// parse_event strips the SSE framing of exactly one event and parses its JSON.
nlohmann::json parse_event(const std::string& event) {
  EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
  EXPECT_EQ(event.substr(event.size() - 2), "\n\n") << event;
  return nlohmann::json::parse(event.substr(6, event.size() - 8));
}

// Tests that chat chunks have the role-first, content, finish and usage shapes OpenAI sends.
TEST(OpenAiResponseTest, ChatChunksHaveOpenAiShape) {
  ResponseFormatter f(Endpoint::kChat, "chatcmpl-x", 1700000000, "sim\"model");
  std::string out;
  f.append_role_chunk(out);
  auto role = parse_event(out);
  EXPECT_EQ(role["object"], "chat.completion.chunk");
  EXPECT_EQ(role["id"], "chatcmpl-x");
  EXPECT_EQ(role["created"], 1700000000);
  EXPECT_EQ(role["model"], "sim\"model");
  EXPECT_EQ(role["choices"][0]["delta"]["role"], "assistant");
  EXPECT_TRUE(role["choices"][0]["finish_reason"].is_null());

  out.clear();
  f.append_content_chunk("a\"b\\c\n\x01\xc3\xa9", out);
  auto content = parse_event(out);
  EXPECT_EQ(content["choices"][0]["delta"]["content"], "a\"b\\c\n\x01\xc3\xa9");
  EXPECT_FALSE(content["choices"][0]["delta"].contains("role"));

  out.clear();
  f.append_finish_chunk("length", out);
  auto finish = parse_event(out);
  EXPECT_EQ(finish["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(finish["choices"][0]["delta"].empty());

  out.clear();
  f.append_usage_chunk(Usage{5, 3}, out);
  auto usage = parse_event(out);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["total_tokens"], 8);

  out.clear();
  ResponseFormatter::append_done(out);
  EXPECT_EQ(out, "data: [DONE]\n\n");
}

// Tests that completions chunks carry text, and that there is no role chunk.
TEST(OpenAiResponseTest, CompletionChunksCarryText) {
  ResponseFormatter f(Endpoint::kCompletions, "cmpl-x", 1, "m");
  std::string out;
  f.append_role_chunk(out);
  EXPECT_TRUE(out.empty());
  f.append_content_chunk(" hello", out);
  auto content = parse_event(out);
  EXPECT_EQ(content["object"], "text_completion");
  EXPECT_EQ(content["choices"][0]["text"], " hello");
  out.clear();
  f.append_finish_chunk("stop", out);
  EXPECT_EQ(parse_event(out)["choices"][0]["text"], "");
}

// Tests that non-streaming bodies carry the message (or text), finish_reason and usage.
TEST(OpenAiResponseTest, FullBodiesHaveUsage) {
  auto chat = nlohmann::json::parse(
      ResponseFormatter(Endpoint::kChat, "chatcmpl-y", 2, "m").full_body("hi", "stop", Usage{4, 1}));
  EXPECT_EQ(chat["object"], "chat.completion");
  EXPECT_EQ(chat["choices"][0]["message"]["content"], "hi");
  EXPECT_EQ(chat["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(chat["usage"]["prompt_tokens"], 4);
  auto text = nlohmann::json::parse(
      ResponseFormatter(Endpoint::kCompletions, "cmpl-y", 2, "m").full_body("yo", "length", Usage{1, 1}));
  EXPECT_EQ(text["object"], "text_completion");
  EXPECT_EQ(text["choices"][0]["text"], "yo");
  EXPECT_EQ(text["usage"]["total_tokens"], 2);
}

// Tests that ids carry the OpenAI prefixes and differ between calls.
TEST(OpenAiResponseTest, IdsAreUniqueAndPrefixed) {
  auto a = make_response_id(Endpoint::kChat);
  EXPECT_EQ(a.rfind("chatcmpl-", 0), 0u);
  EXPECT_NE(a, make_response_id(Endpoint::kChat));
  EXPECT_EQ(make_response_id(Endpoint::kCompletions).rfind("cmpl-", 0), 0u);
}

// Tests that the chat template keeps every turn and ends with the assistant generation prompt.
TEST(ChatTemplateTest, RendersChatMl) {
  std::vector<ChatMessage> messages{{"system", "s"}, {"user", "u"}};
  EXPECT_EQ(apply_chat_template(messages),
            "<|im_start|>system\ns<|im_end|>\n<|im_start|>user\nu<|im_end|>\n<|im_start|>assistant\n");
}

}  // namespace
}  // namespace inferscope::serve
