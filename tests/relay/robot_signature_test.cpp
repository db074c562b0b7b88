#include "relay/robot_signature.h"

#include <gtest/gtest.h>

namespace inferscope::relay {
namespace {

// Tests Feishu's signature against the reference vector (key = timestamp\nsecret, empty message).
TEST(RobotSignatureTest, FeishuReferenceVector) {
  EXPECT_EQ(feishu_signature(1599360473, "demo-secret"), "3/MaVZ8JLIy4TUG+7KSFJqvUkTKd+HWY8g+56DZWq8s=");
}

// Tests DingTalk's signature and its URL encoding against the reference vector.
TEST(RobotSignatureTest, DingTalkReferenceVector) {
  const std::string sign = dingtalk_signature(1577262236757, "SEC0123456789abcdef");
  EXPECT_EQ(sign, "Pgr6tpIpjVrMPPJUPkaI9sivFPPTYOy5zIOMF2GPFMA=");
  EXPECT_EQ(url_encode(sign), "Pgr6tpIpjVrMPPJUPkaI9sivFPPTYOy5zIOMF2GPFMA%3D");
}

// Tests base64 padding cases and percent-encoding of reserved and non-ASCII bytes.
TEST(RobotSignatureTest, Encoders) {
  auto check = [](const std::string& in, const std::string& want) { EXPECT_EQ(base64_encode(in), want) << in; };
  check("", "");
  check("f", "Zg==");
  check("fo", "Zm8=");
  check("foo", "Zm9v");
  check("foob", "Zm9vYg==");
  EXPECT_EQ(url_encode("a+b/c=d e~-_."), "a%2Bb%2Fc%3Dd%20e~-_.");
  EXPECT_EQ(url_encode("\xe4\xbd\xa0"), "%E4%BD%A0");
}

}  // namespace
}  // namespace inferscope::relay
