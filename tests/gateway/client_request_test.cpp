// Tests of the client-request inspection and the include_usage rewrite.
#include "gateway/client_request.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace inferscope::gateway {
namespace {

// Tests that model, stream and include_usage are read and bad types are named.
TEST(ClientRequestTest, ReadsFieldsAndNamesBadOnes) {
  auto r = inspect_client_request(R"({"model":"m","stream":true,"messages":[]})");
  EXPECT_FALSE(r.error);
  EXPECT_EQ(r.model, "m");
  EXPECT_TRUE(r.needs_usage());
  r = inspect_client_request(R"({"model":"m","stream":true,"stream_options":{"include_usage":true}})");
  EXPECT_FALSE(r.needs_usage());
  r = inspect_client_request(R"({"stream":false})");
  EXPECT_FALSE(r.needs_usage());
  auto check = [](const char* body, const char* param) {
    auto got = inspect_client_request(body);
    ASSERT_TRUE(got.error) << body;
    EXPECT_EQ(got.error_param, param) << body;
  };
  check(R"({"model":3})", "model");
  check(R"({"stream":"yes"})", "stream");
  check(R"({"stream_options":[]})", "stream_options");
  check(R"({"stream_options":{"include_usage":1}})", "stream_options");
  check(R"({"stream":true,"stream":"x"})", "stream");
  check("[1,2]", "");
  check("{not json", "");
}

// Tests that with_include_usage adds the option, keeps other bytes and keeps other options.
TEST(ClientRequestTest, IncludeUsageIsAdded) {
  const std::string body = R"({"model":"m","stream":true,"messages":[{"role":"user","content":"stream_options"}]})";
  const std::string out = with_include_usage(body);
  EXPECT_EQ(out, R"({"stream_options":{"include_usage":true},"model":"m","stream":true,"messages":[{"role":"user","content":"stream_options"}]})");
  EXPECT_TRUE(inspect_client_request(out).include_usage);
  const std::string other = with_include_usage(R"({"stream":true,"stream_options":{"continuous_usage_stats":true}})");
  auto json = nlohmann::json::parse(other);
  EXPECT_EQ(json["stream_options"]["include_usage"], true);
  EXPECT_EQ(json["stream_options"]["continuous_usage_stats"], true);
  EXPECT_EQ(with_include_usage("{}"), R"({"stream_options":{"include_usage":true}})");
}

}  // namespace
}  // namespace inferscope::gateway
