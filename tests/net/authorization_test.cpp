// Tests of the Authorization header parser: Basic and Bearer as clients send them, and the
// malformed headers a server must refuse without repeating the secret.
#include "net/authorization.h"

#include <gtest/gtest.h>

namespace inferscope::net {
namespace {

TEST(Authorization, ParsesBasicAsCurlSendsIt) {
  // curl -u alice:open-sesame sends exactly this value.
  auto parsed = parse_authorization("Basic YWxpY2U6b3Blbi1zZXNhbWU=");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->scheme, AuthScheme::basic);
  EXPECT_EQ(parsed->user, "alice");
  EXPECT_EQ(parsed->password, "open-sesame");
  EXPECT_TRUE(parsed->token.empty());
}

TEST(Authorization, BasicPasswordMayHoldColonsAndBeEmpty) {
  auto colons = parse_authorization(basic_authorization("bob", "a:b:c"));
  ASSERT_TRUE(colons.ok());
  EXPECT_EQ(colons->user, "bob");
  EXPECT_EQ(colons->password, "a:b:c");
  auto empty = parse_authorization("basic   " + base64_encode("bob:"));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->password, "");
}

TEST(Authorization, ParsesBearerToken68) {
  auto parsed = parse_authorization("Bearer abc.DEF-123_~+/==");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->scheme, AuthScheme::bearer);
  EXPECT_EQ(parsed->token, "abc.DEF-123_~+/==");
  EXPECT_TRUE(parsed->user.empty());
  EXPECT_TRUE(parse_authorization("bEaReR t0k").ok());
}

TEST(Authorization, Base64MatchesRfc4648Vectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64_encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
}

TEST(Authorization, RefusesMalformedHeadersWithoutTheSecret) {
  const std::string secret = "s3cr3t-value";
  const std::vector<std::string> bad = {
      "",
      "Basic",
      "Basic ",
      "Basic " + secret,                           // not base64 (length)
      "Basic " + base64_encode(secret),            // no colon
      "Basic " + base64_encode(":" + secret),      // empty user
      "Basic " + base64_encode("u:" + secret + "\n"),  // control character
      "Basic Zm9vYmE",                             // unpadded
      "Basic Zm9vYh==",                            // non-zero spare bits
      "Bearer " + secret + " x",                   // space inside a token
      "Bearer =" + secret,                         // padding first
      "Token " + secret,
      secret,
      "Bearer " + std::string(kMaxAuthorizationBytes, 'a'),
  };
  for (const std::string& value : bad) {
    auto parsed = parse_authorization(value);
    ASSERT_FALSE(parsed.ok()) << value;
    const std::string& message = parsed.error().message;
    EXPECT_EQ(message.rfind("cannot parse Authorization header: ", 0), 0u) << message;
    EXPECT_EQ(message.find(secret), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(Authorization, RoundTripsEveryByteOfAUserAndPassword) {
  std::string password;
  for (int c = 0x20; c < 0x7f; ++c) password.push_back(static_cast<char>(c));
  password += "\xc3\xa9";  // UTF-8 is allowed (RFC 7617 charset)
  auto parsed = parse_authorization(basic_authorization("ops", password));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->password, password);
}

}  // namespace
}  // namespace inferscope::net
