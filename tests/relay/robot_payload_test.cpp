#include "relay/robot_payload.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "relay/robot_signature.h"
#include "relay_test_util.h"

namespace inferscope::relay {
namespace {

using nlohmann::json;

using testing::kNow;

ComposedMessage message() { return {"[FIRING:1] A", "**A** fired", 1, false}; }

std::vector<Notification> firing() {
  Notification n;
  n.status = "firing";
  n.group_key = "g";
  n.alerts.push_back(Alert{.status = "firing", .labels = {{"alertname", "A"}}, .fingerprint = "f"});
  return {n};
}

// Tests the Feishu card shape and that the body carries timestamp (seconds) and sign.
TEST(RobotPayloadTest, FeishuSignedCard) {
  const auto r = build_robot_request(ChannelKind::kFeishu, message(), firing(), "http://h/hook/t", "demo-secret", kNow);
  EXPECT_EQ(r.url, "http://h/hook/t");
  const json body = json::parse(r.body);
  EXPECT_EQ(body["msg_type"], "interactive");
  EXPECT_EQ(body["card"]["header"]["title"]["content"], "[FIRING:1] A");
  EXPECT_EQ(body["card"]["header"]["template"], "red");
  EXPECT_EQ(body["card"]["elements"][0]["text"]["tag"], "lark_md");
  EXPECT_EQ(body["card"]["elements"][0]["text"]["content"], "**A** fired");
  EXPECT_EQ(body["timestamp"], "1577262236");
  EXPECT_EQ(body["sign"], feishu_signature(1577262236, "demo-secret"));
  const auto unsigned_r = build_robot_request(ChannelKind::kFeishu, message(), firing(), "http://h/x", "", kNow);
  EXPECT_FALSE(json::parse(unsigned_r.body).contains("sign"));
}

// Tests that DingTalk's signature goes into the URL (milliseconds, URL-encoded), not the body.
TEST(RobotPayloadTest, DingTalkSignedUrl) {
  const auto r = build_robot_request(ChannelKind::kDingTalk, message(), firing(),
                                     "http://h/robot/send?access_token=tok", "SEC0123456789abcdef", kNow);
  EXPECT_EQ(r.url, "http://h/robot/send?access_token=tok&timestamp=1577262236757&sign=Pgr6tpIpjVrMPPJUPkaI9sivFPPTYOy5zIOMF2GPFMA%3D");
  const json body = json::parse(r.body);
  EXPECT_EQ(body["msgtype"], "markdown");
  EXPECT_EQ(body["markdown"]["title"], "[FIRING:1] A");
  EXPECT_FALSE(body.contains("sign"));
}

// Tests the WeCom, Slack and generic webhook bodies.
TEST(RobotPayloadTest, OtherBodies) {
  EXPECT_EQ(json::parse(build_robot_request(ChannelKind::kWeCom, message(), firing(), "u", "", kNow).body),
            json::parse(R"({"msgtype":"markdown","markdown":{"content":"**A** fired"}})"));
  EXPECT_EQ(json::parse(build_robot_request(ChannelKind::kSlack, message(), firing(), "u", "", kNow).body),
            json::parse(R"({"text":"**A** fired"})"));
  const json hook = json::parse(build_robot_request(ChannelKind::kWebhook, message(), firing(), "u", "", kNow).body);
  EXPECT_EQ(hook["version"], "inferscope.relay/1");
  EXPECT_EQ(hook["notifications"][0]["groupKey"], "g");
  EXPECT_EQ(hook["notifications"][0]["version"], "4");
}

// Tests that the body's error code decides, not only the HTTP status.
TEST(RobotPayloadTest, ReplyCodes) {
  auto check = [](ChannelKind kind, long status, const std::string& body, bool ok, bool throttled) {
    const ReplyCheck c = check_robot_reply(kind, status, body);
    EXPECT_EQ(c.ok, ok) << status << " " << body << " -> " << c.error;
    EXPECT_EQ(c.throttled, throttled) << status << " " << body;
    if (!ok) {
      EXPECT_FALSE(c.error.empty());
    }
  };
  check(ChannelKind::kDingTalk, 200, R"({"errcode":0,"errmsg":"ok"})", true, false);
  check(ChannelKind::kDingTalk, 200, R"({"errcode":310000,"errmsg":"sign not match"})", false, false);
  check(ChannelKind::kDingTalk, 200, R"({"errcode":130101,"errmsg":"send too fast"})", false, true);
  check(ChannelKind::kDingTalk, 200, "<html>", false, false);
  check(ChannelKind::kWeCom, 200, R"({"errcode":0,"errmsg":"ok"})", true, false);
  check(ChannelKind::kWeCom, 200, R"({"errcode":45009,"errmsg":"api freq out of limit"})", false, true);
  check(ChannelKind::kFeishu, 200, R"({"code":0,"msg":"success","data":{}})", true, false);
  check(ChannelKind::kFeishu, 200, R"({"StatusCode":0,"StatusMessage":"success"})", true, false);
  check(ChannelKind::kFeishu, 200, R"({"code":19021,"msg":"sign match fail"})", false, false);
  check(ChannelKind::kSlack, 200, "ok", true, false);
  check(ChannelKind::kSlack, 500, "oops", false, false);
  check(ChannelKind::kWebhook, 204, "", true, false);
  check(ChannelKind::kWebhook, 429, "", false, true);
  check(ChannelKind::kWebhook, 404, "", false, false);
}

}  // namespace
}  // namespace inferscope::relay
