// Integration tests of bad input and overload answers of `inferscope serve`: every case gets the
// OpenAI error JSON with the right status, and nothing from a bad request becomes a label value.
#include <gtest/gtest.h>

#include "serve_test_support.h"

namespace inferscope::serve::testing {
namespace {

// check_error asserts an OpenAI error answer and returns its inner "error" object.
nlohmann::json check_error(const HttpReply& r, int status) {
  EXPECT_EQ(r.status, status) << r.body;
  auto body = nlohmann::json::parse(r.body, nullptr, false);
  EXPECT_TRUE(body.is_object() && body.contains("error")) << r.body;
  if (!body.is_object() || !body.contains("error")) return {};
  auto error = body["error"];
  for (const char* key : {"message", "type", "param", "code"}) EXPECT_TRUE(error.contains(key)) << key;
  EXPECT_EQ(r.header("Content-Type"), "application/json");
  return error;
}

// Tests that invalid JSON and wrong field types get 400 invalid_request_error naming the field.
TEST(ServeErrorsTest, BadJsonAndTypesAre400) {
  TestServer s(fast_options());
  ASSERT_TRUE(s.ok());
  auto e = check_error(s.post("/v1/chat/completions", "{\"messages\": ["), 400);
  EXPECT_EQ(e["type"], "invalid_request_error");
  e = check_error(s.post("/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"max_tokens":"9"})"), 400);
  EXPECT_EQ(e["param"], "max_tokens");
  e = check_error(s.post("/v1/completions", R"({"prompt":"x","stream":1})"), 400);
  EXPECT_EQ(e["param"], "stream");
  // The server keeps serving good requests after bad ones.
  EXPECT_EQ(s.post("/v1/completions", R"({"prompt":"x","max_tokens":1})").status, 200);
}

// Tests that an unknown model is a 404 model_not_found and never appears as a label value.
TEST(ServeErrorsTest, UnknownModelIs404AndNotALabel) {
  TestServer s(fast_options());
  ASSERT_TRUE(s.ok());
  auto e = check_error(s.post("/v1/chat/completions", R"({"model":"nope-model-xyz","messages":[{"role":"user","content":"x"}]})"), 404);
  EXPECT_EQ(e["code"], "model_not_found");
  HttpReply m = s.get("/metrics");
  ASSERT_EQ(m.status, 200);
  EXPECT_EQ(m.body.find("nope-model-xyz"), std::string::npos);
}

// Tests that prompt + max_tokens over the context length is 400 context_length_exceeded.
TEST(ServeErrorsTest, ContextLengthExceeded) {
  ServerOptions o = fast_options();
  o.engine.max_model_len = 256;
  TestServer s(o);
  ASSERT_TRUE(s.ok());
  auto e = check_error(s.post("/v1/chat/completions", chat_body(words(300), 10)), 400);
  EXPECT_EQ(e["code"], "context_length_exceeded");
  e = check_error(s.post("/v1/chat/completions", chat_body(words(100), 200)), 400);
  EXPECT_EQ(e["code"], "context_length_exceeded");
  EXPECT_EQ(s.post("/v1/chat/completions", chat_body(words(100), 20)).status, 200);
}

// Tests that a body over --max-body-bytes gets 413 and the connection is closed after it.
TEST(ServeErrorsTest, BodyOverLimitIs413) {
  ServerOptions o = fast_options();
  o.max_body_bytes = 1024;
  TestServer s(o);
  ASSERT_TRUE(s.ok());
  check_error(s.post("/v1/chat/completions", chat_body(std::string(4000, 'a'), 4)), 413);
  EXPECT_EQ(s.post("/v1/chat/completions", chat_body("small", 1)).status, 200);
}

// Tests 405 (with Allow) for a wrong method and 404 for an unknown path.
TEST(ServeErrorsTest, WrongMethodAndUnknownPath) {
  TestServer s(fast_options());
  ASSERT_TRUE(s.ok());
  HttpReply r = s.get("/v1/chat/completions");
  check_error(r, 405);
  EXPECT_EQ(r.header("Allow"), "POST");
  r = s.post("/v1/models", "{}");
  check_error(r, 405);
  EXPECT_EQ(r.header("Allow"), "GET");
  check_error(s.get("/v2/nothing"), 404);
  check_error(s.get("/admin/faults"), 404);  // no --enable-admin: the route does not exist
}

// Tests that the waiting-queue bound answers 503 with Retry-After while the engine cannot schedule.
TEST(ServeErrorsTest, OverloadIs503WithRetryAfter) {
  ServerOptions o = fast_options();
  o.engine.max_waiting = 2;
  o.faults.worker_stall = {60000, 1000};  // no scheduling for 60 model seconds (3 s real)
  TestServer s(o);
  ASSERT_TRUE(s.ok());
  std::vector<std::unique_ptr<RawStream>> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(std::make_unique<RawStream>(s.port(), "/v1/chat/completions", chat_body("hold", 4, true)));
    ASSERT_TRUE(held.back()->read_until("\r\n\r\n"));  // headers are sent at submit
  }
  HttpReply r = s.post("/v1/chat/completions", chat_body("one too many", 4, true));
  auto e = check_error(r, 503);
  EXPECT_EQ(r.header("Retry-After"), "1");
  EXPECT_EQ(e["type"], "server_error");
  for (auto& stream : held) stream->close();
}

// Tests that the error_rate fault answers 500 with the OpenAI error JSON.
TEST(ServeErrorsTest, ErrorRateFaultIs500) {
  ServerOptions o = fast_options();
  o.faults.error_rate = 1.0;
  TestServer s(o);
  ASSERT_TRUE(s.ok());
  auto e = check_error(s.post("/v1/completions", R"({"prompt":"x","max_tokens":2})"), 500);
  EXPECT_EQ(e["type"], "server_error");
}

// Tests that /admin/faults exists only with --enable-admin and sets, lists and clears faults.
TEST(ServeErrorsTest, AdminFaultsRoundTrip) {
  ServerOptions o = fast_options();
  o.enable_admin = true;
  TestServer s(o);
  ASSERT_TRUE(s.ok());
  HttpReply r = s.get("/admin/faults");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(nlohmann::json::parse(r.body), nlohmann::json::object());
  r = s.post("/admin/faults", R"({"decode_slowdown": 3})");
  ASSERT_EQ(r.status, 200) << r.body;
  r = s.post("/admin/faults", R"({"network_delay_ms": 5})");  // merged, not replaced
  auto listed = nlohmann::json::parse(s.get("/admin/faults").body);
  EXPECT_EQ(listed["decode_slowdown"], 3);
  EXPECT_EQ(listed["network_delay_ms"], 5);
  EXPECT_EQ(s.server().engine().faults().decode_slowdown, 3);
  check_error(s.post("/admin/faults", R"({"no_such_fault": 1})"), 400);
  check_error(s.post("/admin/faults", "not json"), 400);
  r = request(s.port(), http::verb::delete_, "/admin/faults");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(nlohmann::json::parse(s.get("/admin/faults").body), nlohmann::json::object());
  check_error(request(s.port(), http::verb::put, "/admin/faults", "{}"), 405);
}

}  // namespace
}  // namespace inferscope::serve::testing
