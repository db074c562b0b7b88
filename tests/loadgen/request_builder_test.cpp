#include "loadgen/request_builder.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>


namespace inferscope::loadgen {
namespace {

nlohmann::json body_of(const std::string& wire) { return nlohmann::json::parse(wire.substr(wire.find("\r\n\r\n") + 4)); }

// Tests the wire bytes: request line, Host, Content-Length, auth and extra headers, chat body.
TEST(RequestBuilderTest, ChatStreamingRequest) {
  auto t = parse_base_url("http://127.0.0.1:8000/prefix/");
  ASSERT_TRUE(t);
  RequestOptions o;
  o.model = "m\"1";
  o.api_key = "k";
  o.headers = {{"X-Test", "yes"}};
  o.ignore_eos = true;
  RequestBuilder b(*t, o);
  RequestSpec spec;
  spec.prompt = "line\n\"quoted\"\x01";
  spec.max_tokens = 12;
  std::string wire = b.build(spec);
  EXPECT_EQ(wire.rfind("POST /prefix/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n", 0), 0u);
  EXPECT_NE(wire.find("Authorization: Bearer k\r\n"), std::string::npos);
  EXPECT_NE(wire.find("X-Test: yes\r\n"), std::string::npos);
  std::size_t body_len = wire.size() - wire.find("\r\n\r\n") - 4;
  EXPECT_NE(wire.find("Content-Length: " + std::to_string(body_len) + "\r\n"), std::string::npos);
  nlohmann::json j = body_of(wire);
  EXPECT_EQ(j["model"], "m\"1");
  EXPECT_EQ(j["messages"][0]["content"], spec.prompt);
  EXPECT_EQ(j["max_tokens"], 12);
  EXPECT_EQ(j["stream"], true);
  EXPECT_EQ(j["stream_options"]["include_usage"], true);
  EXPECT_EQ(j["ignore_eos"], true);
}

// Tests --lora-adapters: requests name the adapters in turn as their model, in place of --model.
TEST(RequestBuilderTest, LoraAdaptersInTurn) {
  auto t = parse_base_url("http://127.0.0.1:8000");
  ASSERT_TRUE(t);
  RequestOptions o;
  o.model = "base";
  o.lora_names = {"lora-1", "lora-2", "lora-3"};
  RequestBuilder b(*t, o);
  RequestSpec spec;
  spec.prompt = "hi";
  spec.max_tokens = 4;
  for (const char* expected : {"lora-1", "lora-2", "lora-3", "lora-1"}) EXPECT_EQ(body_of(b.build(spec))["model"], expected);
}

// Tests completions bodies, non-streaming, and dataset messages passed through verbatim.
TEST(RequestBuilderTest, CompletionsAndMessages) {
  auto t = parse_base_url("https://example.test");
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->tls);
  EXPECT_EQ(t->port, "443");
  RequestOptions o;
  o.chat = false;
  o.stream = false;
  o.endpoint = "/v1/completions";
  RequestSpec spec;
  spec.prompt = "abc";
  nlohmann::json j = body_of(RequestBuilder(*t, o).build(spec));
  EXPECT_EQ(j["prompt"], "abc");
  EXPECT_EQ(j["stream"], false);
  o.chat = true;
  o.stream = true;
  o.include_usage = false;
  spec.messages_json = R"([{"role":"system","content":"s"},{"role":"user","content":"u"}])";
  j = body_of(RequestBuilder(*t, o).build(spec));
  EXPECT_EQ(j["messages"].size(), 2u);
  EXPECT_FALSE(j.contains("stream_options"));
}

// Tests base URL parsing errors and IPv6 literals.
TEST(RequestBuilderTest, BaseUrls) {
  auto v6 = parse_base_url("http://[::1]:9000");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, "9000");
  for (const char* bad : {"ftp://x", "http://", "http://h:0", "http://h:99999", "http://h:x1", "127.0.0.1:80"}) {
    auto r = parse_base_url(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("--base-url"), std::string::npos);
  }
}

}  // namespace
}  // namespace inferscope::loadgen
