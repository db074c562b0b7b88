// Tests for serve/openai_request.h: field types, ranges and required fields of both endpoints.
#include "serve/openai_request.h"

#include <gtest/gtest.h>

namespace inferscope::serve {
namespace {

// Tests that a full chat body is read field by field, including vLLM's extra fields.
TEST(OpenAiRequestTest, ReadsChatFields) {
  CompletionRequest req;
  auto err = parse_completion_request(
      Endpoint::kChat,
      R"({"model":"m","messages":[{"role":"system","content":"be brief"},)"
      R"({"role":"user","content":[{"type":"text","text":"hi "},{"type":"text","text":"there"}]}],)"
      R"("max_completion_tokens":7,"stream":true,"stream_options":{"include_usage":true},)"
      R"("ignore_eos":true,"min_tokens":3,"seed":42,"temperature":0.5,"n":1,"unknown":{"x":1}})",
      req);
  ASSERT_FALSE(err) << err->message;
  EXPECT_EQ(req.model, "m");
  ASSERT_EQ(req.messages.size(), 2u);
  EXPECT_EQ(req.messages[1].content, "hi there");
  EXPECT_EQ(req.max_tokens, 7u);
  EXPECT_TRUE(req.stream);
  EXPECT_TRUE(req.include_usage);
  EXPECT_TRUE(req.ignore_eos);
  EXPECT_EQ(req.min_tokens, 3u);
  EXPECT_EQ(req.seed, 42u);
}

// Tests that completions accept a string, a one-string array and token ids as the prompt.
TEST(OpenAiRequestTest, ReadsPromptForms) {
  CompletionRequest req;
  ASSERT_FALSE(parse_completion_request(Endpoint::kCompletions, R"({"prompt":"abc"})", req));
  EXPECT_EQ(req.prompt, "abc");
  ASSERT_FALSE(parse_completion_request(Endpoint::kCompletions, R"({"prompt":["xyz"]})", req));
  EXPECT_EQ(req.prompt, "xyz");
  ASSERT_FALSE(parse_completion_request(Endpoint::kCompletions, R"({"prompt":[1,2,3]})", req));
  EXPECT_EQ(req.prompt_token_ids, (std::vector<std::uint32_t>{1, 2, 3}));
  EXPECT_FALSE(req.max_tokens.has_value());
}

// Tests that every malformed body is a 400 naming the field at fault.
TEST(OpenAiRequestTest, RejectsBadBodies) {
  auto check = [](Endpoint endpoint, std::string_view body, std::string_view want_param) {
    CompletionRequest req;
    auto err = parse_completion_request(endpoint, body, req);
    ASSERT_TRUE(err.has_value()) << "accepted: " << body;
    EXPECT_EQ(err->status, 400) << body;
    EXPECT_EQ(err->type, "invalid_request_error") << body;
    EXPECT_EQ(err->param, want_param) << body << " -> " << err->message;
  };
  const auto chat = Endpoint::kChat;
  check(chat, "{not json", "");
  check(chat, "[1,2]", "");
  check(chat, "", "");
  check(chat, R"({"model":"m"})", "messages");
  check(chat, R"({"messages":[]})", "messages");
  check(chat, R"({"messages":"hi"})", "messages");
  check(chat, R"({"messages":[{"content":"x"}]})", "messages");
  check(chat, R"({"messages":[{"role":"user","content":5}]})", "messages");
  check(chat, R"({"model":7,"messages":[{"role":"user","content":"x"}]})", "model");
  check(chat, R"({"messages":[{"role":"user","content":"x"}],"max_tokens":"5"})", "max_tokens");
  check(chat, R"({"messages":[{"role":"user","content":"x"}],"max_tokens":-1})", "max_tokens");
  check(chat, R"({"messages":[{"role":"user","content":"x"}],"max_tokens":0})", "max_tokens");
  check(chat, R"({"messages":[{"role":"user","content":"x"}],"max_tokens":1.5})", "max_tokens");
  check(chat, R"({"messages":[{"role":"user","content":"x"}],"max_tokens":99999999999})", "max_tokens");
  check(chat, R"({"messages":[{"role":"user","content":"x"}],"stream":"yes"})", "stream");
  check(chat, R"({"messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true}})",
        "stream_options");
  check(chat, R"({"messages":[{"role":"user","content":"x"}],"n":2})", "n");
  check(chat, R"({"messages":[{"role":"user","content":"x"}],"temperature":"hot"})", "temperature");
  check(Endpoint::kCompletions, R"({"prompt":""})", "prompt");
  check(Endpoint::kCompletions, R"({"prompt":{"a":1}})", "prompt");
  check(Endpoint::kCompletions, R"({"prompt":[1,-2]})", "prompt");
  check(Endpoint::kCompletions, R"({"messages":[{"role":"user","content":"x"}]})", "prompt");
}

// Tests that null optional fields mean "not given" rather than a type error.
TEST(OpenAiRequestTest, NullMeansAbsent) {
  CompletionRequest req;
  auto err = parse_completion_request(
      Endpoint::kChat,
      R"({"messages":[{"role":"user","content":"x"}],"max_tokens":null,"stream_options":null,"seed":null})",
      req);
  ASSERT_FALSE(err) << err->message;
  EXPECT_FALSE(req.max_tokens.has_value());
  EXPECT_FALSE(req.seed.has_value());
}

}  // namespace
}  // namespace inferscope::serve
