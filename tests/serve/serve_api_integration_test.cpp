// Integration tests of the OpenAI API of `inferscope serve` over real HTTP on loopback: response
// shapes of both endpoints, streaming and not, and the small routes.
#include <gtest/gtest.h>

#include "serve_test_support.h"

namespace inferscope::serve::testing {
namespace {

// Tests that a chat stream is role chunk, content chunks, finish chunk, [DONE], with no usage chunk
// unless asked, and stable id/object/created/model fields (the default, OpenAI stream shape).
TEST(ServeApiTest, ChatStreamHasOpenAiShape) {
  TestServer s(fast_options());
  ASSERT_TRUE(s.ok());
  HttpReply r = s.post("/v1/chat/completions", chat_body("Hello there", 5, true, {{"ignore_eos", true}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("Content-Type").rfind("text/event-stream", 0), 0u);
  auto events = sse_payloads(r.body);
  ASSERT_EQ(events.size(), 1u + 5u + 1u + 1u) << r.body;
  EXPECT_EQ(events.back(), "[DONE]");
  auto first = nlohmann::json::parse(events[0]);
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["model"], "sim-a");
  const std::string id = first["id"];
  EXPECT_EQ(id.rfind("chatcmpl-", 0), 0u);
  for (std::size_t i = 1; i <= 5; ++i) {
    auto chunk = nlohmann::json::parse(events[i]);
    EXPECT_EQ(chunk["id"], id);
    EXPECT_EQ(chunk["created"], first["created"]);
    EXPECT_FALSE(chunk["choices"][0]["delta"]["content"].get<std::string>().empty());
    EXPECT_TRUE(chunk["choices"][0]["finish_reason"].is_null());
  }
  auto finish = nlohmann::json::parse(events[6]);
  EXPECT_EQ(finish["choices"][0]["finish_reason"], "length");
  EXPECT_FALSE(finish.contains("usage"));
}

// Tests the vLLM stream shape (--stream-shape vllm): finish_reason rides on the chunk with the last
// content and no empty finish chunk follows, for chat and completions, with stop and length.
TEST(ServeApiTest, VllmStreamShapePutsFinishReasonOnLastContentChunk) {
  ServerOptions o = fast_options();
  o.stream_shape = StreamShape::kVllm;
  TestServer s(o);
  ASSERT_TRUE(s.ok());
  HttpReply r = s.post("/v1/chat/completions", chat_body("Hello there", 5, true, {{"ignore_eos", true}}));
  ASSERT_EQ(r.status, 200) << r.body;
  auto events = sse_payloads(r.body);
  ASSERT_EQ(events.size(), 1u + 5u + 1u) << r.body;  // role, 5 content (the last one finishing), [DONE]
  EXPECT_EQ(events.back(), "[DONE]");
  for (std::size_t i = 1; i <= 5; ++i) {
    auto chunk = nlohmann::json::parse(events[i]);
    EXPECT_FALSE(chunk["choices"][0]["delta"]["content"].get<std::string>().empty()) << events[i];
    if (i < 5) {
      EXPECT_TRUE(chunk["choices"][0]["finish_reason"].is_null()) << events[i];
    }
  }
  EXPECT_EQ(nlohmann::json::parse(events[5])["choices"][0]["finish_reason"], "length");

  // Completions, ending at the natural EOS (finish "stop"), with a usage chunk after the last content.
  HttpReply c = s.post("/v1/completions", nlohmann::json{{"model", "sim-a"}, {"prompt", "Once"}, {"max_tokens", 4000},
                                                         {"stream", true}, {"seed", 3},
                                                         {"stream_options", {{"include_usage", true}}}}.dump());
  ASSERT_EQ(c.status, 200) << c.body;
  auto cevents = sse_payloads(c.body);
  ASSERT_GE(cevents.size(), 3u) << c.body;
  auto last = nlohmann::json::parse(cevents[cevents.size() - 3]);
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop") << c.body;
  EXPECT_FALSE(last["choices"][0]["text"].get<std::string>().empty());
  EXPECT_TRUE(nlohmann::json::parse(cevents[cevents.size() - 2])["choices"].empty());  // usage
}

// Tests that stream_options.include_usage adds one usage chunk (choices: []) before [DONE].
TEST(ServeApiTest, StreamUsageChunkOnlyWhenAsked) {
  TestServer s(fast_options());
  ASSERT_TRUE(s.ok());
  HttpReply r = s.post("/v1/chat/completions",
                       chat_body("Hi", 3, true, {{"ignore_eos", true}, {"stream_options", {{"include_usage", true}}}}));
  ASSERT_EQ(r.status, 200) << r.body;
  auto events = sse_payloads(r.body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back(), "[DONE]");
  auto usage = nlohmann::json::parse(events[events.size() - 2]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 3);
  EXPECT_GT(usage["usage"]["prompt_tokens"], 0);
  EXPECT_EQ(usage["usage"]["total_tokens"], usage["usage"]["prompt_tokens"].get<int>() + 3);
}

// Tests that a non-streaming chat answer carries the message, finish_reason and usage.
TEST(ServeApiTest, ChatWholeHasUsage) {
  TestServer s(fast_options());
  ASSERT_TRUE(s.ok());
  HttpReply r = s.post("/v1/chat/completions", chat_body("Hello", 4, false, {{"ignore_eos", true}}));
  ASSERT_EQ(r.status, 200) << r.body;
  auto body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
  EXPECT_FALSE(body["choices"][0]["message"]["content"].get<std::string>().empty());
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["usage"]["completion_tokens"], 4);
}

// Tests /v1/completions streaming (text chunks, no role chunk) and non-streaming.
TEST(ServeApiTest, CompletionsBothModes) {
  TestServer s(fast_options());
  ASSERT_TRUE(s.ok());
  HttpReply r = s.post("/v1/completions",
                       R"({"model":"sim-b","prompt":"Once upon","max_tokens":3,"ignore_eos":true,"stream":true})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto events = sse_payloads(r.body);
  ASSERT_EQ(events.size(), 3u + 1u + 1u) << r.body;
  auto first = nlohmann::json::parse(events[0]);
  EXPECT_EQ(first["object"], "text_completion");
  EXPECT_EQ(first["model"], "sim-b");
  EXPECT_FALSE(first["choices"][0]["text"].get<std::string>().empty());
  EXPECT_EQ(nlohmann::json::parse(events[3])["choices"][0]["finish_reason"], "length");

  r = s.post("/v1/completions", R"({"prompt":[11,12,13],"max_tokens":2,"min_tokens":2})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["model"], "sim-a");  // the first served name is the default
  EXPECT_EQ(body["usage"]["prompt_tokens"], 3);
  EXPECT_EQ(body["usage"]["completion_tokens"], 2);
}

// Tests that without ignore_eos the output ends at its natural length (stop) within max_tokens.
TEST(ServeApiTest, NaturalLengthStops) {
  TestServer s(fast_options());
  ASSERT_TRUE(s.ok());
  int stops = 0;
  for (int seed = 0; seed < 8; ++seed) {
    HttpReply r = s.post("/v1/completions", nlohmann::json{{"prompt", "x"}, {"max_tokens", 400}, {"seed", seed}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    auto body = nlohmann::json::parse(r.body);
    EXPECT_LE(body["usage"]["completion_tokens"].get<int>(), 400);
    if (body["choices"][0]["finish_reason"] == "stop") ++stops;
  }
  EXPECT_GT(stops, 0);
}

// Tests /v1/models, /health and /metrics.
TEST(ServeApiTest, SmallRoutes) {
  TestServer s(fast_options());
  ASSERT_TRUE(s.ok());
  HttpReply models = s.get("/v1/models");
  ASSERT_EQ(models.status, 200);
  auto body = nlohmann::json::parse(models.body);
  EXPECT_EQ(body["object"], "list");
  ASSERT_EQ(body["data"].size(), 2u);
  EXPECT_EQ(body["data"][1]["id"], "sim-b");
  EXPECT_EQ(s.get("/health").status, 200);
  HttpReply m = s.get("/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_EQ(m.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
}

}  // namespace
}  // namespace inferscope::serve::testing

namespace inferscope::serve::testing {
namespace {

// Tests that --metrics-port serves the same registry on a second port.
TEST(ServeApiTest, SeparateMetricsPort) {
  ServerOptions o = fast_options();
  o.metrics_port = 0;
  TestServer s(o);
  ASSERT_TRUE(s.ok());
  ASSERT_NE(s.server().metrics_port(), 0);
  ASSERT_EQ(s.post("/v1/completions", R"({"prompt":"x","max_tokens":1})").status, 200);
  HttpReply r = request(s.server().metrics_port(), http::verb::get, "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("vllm:e2e_request_latency_seconds_count{"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::serve::testing
