// Tests of documents (the periodic report): cutting per channel limit, each channel kind's request
// (signatures against the same vectors as alerts), multipart email, durable outbox rows across a
// reopen and an old-schema file, and the synchronous send of `inferscope report --send`. Delivery
// by the relay's threads (alone, retried, failed and counted) is tested in relay_test.cpp.
#include "relay/document.h"

#include <sqlite3.h>

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fake_servers.h"
#include "relay/channel.h"
#include "relay/outbox.h"
#include "relay/robot_payload.h"
#include "relay/robot_signature.h"
#include "relay/smtp_sender.h"
#include "relay/utf8_truncate.h"
#include "relay_test_util.h"

namespace inferscope::relay {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::FakeHttpServer;
using testing::FakeRequest;
using testing::FakeResponse;
using testing::FakeSmtpServer;
using testing::TempDir;

using testing::kNow;

// big_document has a Markdown of `lines` lines of 3-byte characters (so a byte cut can split one).
Document big_document(int lines) {
  Document d{"inferscope report 2026-11-29 09:00 - 2026-11-30 09:00 UTC", "# Report\n", "<html><body>full</body></html>"};
  for (int i = 0; i < lines; ++i) d.markdown += "| model-" + std::to_string(i) + " | 延迟 p99 1.25 s |\n";
  return d;
}

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    }
    i += n;
  }
  return true;
}

// Tests that a document that fits is sent whole, and one that does not is cut at a UTF-8 boundary
// to at most each kind's default limit, with the truncation marker and the note about the HTML.
TEST(DocumentTest, CutToEachChannelLimit) {
  const Document small{"t", "# small\n", ""};
  const ComposedMessage whole = compose_document(small, 4096);
  EXPECT_EQ(whole.text, small.markdown);
  EXPECT_FALSE(whole.truncated);
  EXPECT_EQ(whole.title, "t");
  const Document big = big_document(3000);  // ~80 KB
  for (ChannelKind kind : {ChannelKind::kWeCom, ChannelKind::kDingTalk, ChannelKind::kFeishu, ChannelKind::kSlack}) {
    const std::size_t limit = default_max_message_bytes(kind);
    const ComposedMessage m = compose_document(big, limit);
    EXPECT_TRUE(m.truncated);
    EXPECT_LE(m.text.size(), limit);
    EXPECT_GT(m.text.size(), limit - 8);  // nearly full: at most a split character is dropped
    EXPECT_TRUE(valid_utf8(m.text));
    const std::string tail = std::string(kTruncatedMarker) + std::string(kDocumentCutNote);
    ASSERT_GE(m.text.size(), tail.size());
    EXPECT_EQ(m.text.substr(m.text.size() - tail.size()), tail);
    EXPECT_EQ(m.text.rfind(big.markdown.substr(0, 100), 0), 0u);
  }
  EXPECT_EQ(compose_document(big, 0).text, big.markdown);  // webhook/email default: unlimited
}

// Tests that robots get the chat text (no tables) and the webhook/email the Markdown with tables;
// a document without a chat text gives robots the Markdown, as before.
TEST(DocumentTest, RobotsGetTheChatText) {
  const Document d{"t", "| a | b |\n|---|---|\n| 1 | 2 |\n", "<p>x</p>", "- a 1 (was 2, -50 %)\n"};
  for (MarkupStyle style : {MarkupStyle::kDingTalk, MarkupStyle::kLarkMd, MarkupStyle::kWeCom, MarkupStyle::kSlack})
    EXPECT_EQ(compose_document(d, 4096, style).text, d.chat);
  EXPECT_EQ(compose_document(d, 0, MarkupStyle::kPlain).text, d.markdown);
  EXPECT_EQ(compose_document(d, 0).text, d.markdown);
  const Document old_form{"t", "# md\n", ""};
  EXPECT_EQ(compose_document(old_form, 4096, MarkupStyle::kWeCom).text, old_form.markdown);
  // The chat text is cut to the robot's limit like the Markdown was.
  Document long_chat = d;
  for (int i = 0; i < 500; ++i) long_chat.chat += "- e2e p95 1.20 s (was 900 ms, +33 %)\n";
  const ComposedMessage cut = compose_document(long_chat, 4096, MarkupStyle::kWeCom);
  EXPECT_TRUE(cut.truncated);
  EXPECT_LE(cut.text.size(), 4096u);
  EXPECT_EQ(cut.text.rfind(d.chat, 0), 0u);
}

// Tests the stored form round trip and its errors.
TEST(DocumentTest, JsonRoundTrip) {
  const Document d = big_document(3);
  auto back = parse_document(document_to_json(d));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->title, d.title);
  EXPECT_EQ(back->markdown, d.markdown);
  EXPECT_EQ(back->html, d.html);
  Document with_chat = d;
  with_chat.chat = "- e2e p95 1.20 s\n";
  auto chat_back = parse_document(document_to_json(with_chat));
  ASSERT_TRUE(chat_back) << chat_back.error().message;
  EXPECT_EQ(chat_back->chat, with_chat.chat);
  auto stored_before_chat = parse_document(R"({"title":"t","markdown":"m","html":""})");
  ASSERT_TRUE(stored_before_chat) << stored_before_chat.error().message;
  EXPECT_EQ(stored_before_chat->chat, "");
  EXPECT_FALSE(parse_document(R"({"title":"t","markdown":"m","html":"","chat":1})"));
  EXPECT_FALSE(parse_document("[]"));
  auto missing = parse_document(R"({"title":"t","markdown":"m"})");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("'html'"), std::string::npos);
}

// Tests each kind's request: robots are signed exactly like alerts (same test vectors as
// robot_payload_test), the generic webhook carries title, Markdown and HTML.
TEST(DocumentTest, RequestPerKind) {
  const Document d{"Daily report", "**p99** 1.2 s", "<p>p99</p>"};
  const ComposedMessage m = compose_document(d, 0);
  const auto ding = build_document_request(ChannelKind::kDingTalk, m, d, "http://h/robot/send?access_token=tok",
                                           "SEC0123456789abcdef", kNow);
  EXPECT_EQ(ding.url, "http://h/robot/send?access_token=tok&timestamp=1577262236757&sign=Pgr6tpIpjVrMPPJUPkaI9sivFPPTYOy5zIOMF2GPFMA%3D");
  EXPECT_EQ(json::parse(ding.body)["markdown"]["title"], "Daily report");
  EXPECT_EQ(json::parse(ding.body)["markdown"]["text"], "**p99** 1.2 s");
  const json feishu = json::parse(build_document_request(ChannelKind::kFeishu, m, d, "http://h/f", "demo-secret", kNow).body);
  EXPECT_EQ(feishu["timestamp"], "1577262236");
  EXPECT_EQ(feishu["sign"], feishu_signature(1577262236, "demo-secret"));
  EXPECT_EQ(feishu["card"]["header"]["title"]["content"], "Daily report");
  EXPECT_EQ(feishu["card"]["elements"][0]["text"]["content"], "**p99** 1.2 s");
  EXPECT_EQ(json::parse(build_document_request(ChannelKind::kWeCom, m, d, "u", "", kNow).body)["markdown"]["content"],
            "**p99** 1.2 s");
  EXPECT_EQ(json::parse(build_document_request(ChannelKind::kSlack, m, d, "u", "", kNow).body)["text"], "**p99** 1.2 s");
  const json hook = json::parse(build_document_request(ChannelKind::kWebhook, m, d, "u", "", kNow).body);
  EXPECT_EQ(hook["version"], "inferscope.document/1");
  EXPECT_EQ(hook["kind"], "report");
  EXPECT_EQ(hook["title"], "Daily report");
  EXPECT_EQ(hook["markdown"], "**p99** 1.2 s");
  EXPECT_EQ(hook["html"], "<p>p99</p>");
  EXPECT_EQ(hook["truncated"], false);
}

// part_body decodes the base64 body of the MIME part whose Content-Type starts with `type`.
std::string part_body(const std::string& message, const std::string& type) {
  const auto at = message.find("Content-Type: " + type);
  if (at == std::string::npos) return "<no part " + type + ">";
  const auto start = message.find("\r\n\r\n", at) + 4;
  const auto end = message.find("\r\n--", start);
  std::string encoded;
  for (char c : message.substr(start, end - start)) {
    if (c != '\r' && c != '\n') encoded += c;
  }
  // Decode with the standard alphabet.
  static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int bits = 0;
  unsigned value = 0;
  for (char c : encoded) {
    if (c == '=') break;
    value = (value << 6) | static_cast<unsigned>(alphabet.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((value >> bits) & 0xFF);
    }
  }
  return out;
}

// Tests the email: multipart/alternative with the Markdown as text/plain and the HTML as
// text/html, both intact after base64; the boundary closes the message.
TEST(DocumentTest, EmailIsMultipartAlternative) {
  const SmtpSettings settings{"smtp://127.0.0.1:25", "relay@example.org", {"a@example.org"}, "", "", false, 10s};
  const Document d = big_document(50);
  const std::string message = build_alternative_email_message(settings, d.title, d.markdown, d.html, kNow);
  EXPECT_NE(message.find("Content-Type: multipart/alternative; boundary=\"=_inferscope_"), std::string::npos);
  EXPECT_EQ(part_body(message, "text/plain"), d.markdown);
  EXPECT_EQ(part_body(message, "text/html"), d.html);
  const auto boundary_at = message.find("boundary=\"") + 10;
  const std::string boundary = message.substr(boundary_at, message.find('"', boundary_at) - boundary_at);
  EXPECT_NE(message.find("\r\n--" + boundary + "--\r\n"), std::string::npos);
  EXPECT_NE(message.find("Subject: =?UTF-8?B?" + base64_encode(d.title) + "?="), std::string::npos);
  // Without HTML it is the plain single-part message alerts use.
  EXPECT_EQ(build_alternative_email_message(settings, "s", "t", "", kNow), build_email_message(settings, "s", "t", kNow));
}

// Tests that a stored document survives a reopen and comes back as kind "document", after alerts
// stored before it, and that a file written before the kind column existed still opens with its
// rows read as alerts.
TEST(DocumentTest, OutboxKeepsDocumentsAcrossReopen) {
  TempDir dir;
  const std::string path = (dir.path() / "relay.db").string();
  const Document d = big_document(5);
  {
    sqlite3* db = nullptr;  // the schema of the relay before documents
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE TABLE notifications(id INTEGER PRIMARY KEY AUTOINCREMENT, dedupe_key TEXT NOT NULL, "
                           "received_ms INTEGER NOT NULL, payload TEXT NOT NULL);"
                           "CREATE TABLE deliveries(notification_id INTEGER NOT NULL REFERENCES notifications(id), "
                           "channel TEXT NOT NULL, state INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0, "
                           "next_attempt_ms INTEGER NOT NULL, last_error TEXT NOT NULL DEFAULT '', updated_ms INTEGER NOT NULL, "
                           "PRIMARY KEY(notification_id, channel));"
                           "INSERT INTO notifications VALUES(1, 'k', 5, '{\"old\":1}');"
                           "INSERT INTO deliveries(notification_id, channel, next_attempt_ms, updated_ms) VALUES(1, 'c', 5, 5);",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  {
    auto box = Outbox::open(path, 1s);
    ASSERT_TRUE(box) << box.error().message;
    auto id = (*box)->store_document(document_to_json(d), {"c", "mail"}, 10);
    ASSERT_TRUE(id) << id.error().message;
  }
  auto box = Outbox::open(path, 1s);
  ASSERT_TRUE(box);
  auto rows = (*box)->due("c", 100, 10);
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].kind, "alert");
  EXPECT_EQ((*rows)[0].payload, "{\"old\":1}");
  EXPECT_EQ((*rows)[1].kind, "document");
  auto back = parse_document((*rows)[1].payload);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->markdown, d.markdown);
  EXPECT_EQ((*(*box)->due("mail", 100, 10)).size(), 1u);
  EXPECT_EQ((*box)->counts()->at("mail").pending, 1);
}

// Tests the synchronous send of `report --send`: email through a fake SMTP server (multipart),
// a robot that keeps failing (error names the channel and the attempts), an unknown name.
TEST(DocumentSendNowTest, EmailRobotAndUnknown) {
  TempDir dir;
  FakeSmtpServer smtp;
  FakeHttpServer robot([](const FakeRequest&) { return FakeResponse{500, "down"}; });
  const auto url_file = [&](const std::string& name, const std::string& url) {
    std::ofstream((dir.path() / name).string()) << url << "\n";
    return SecretSource{.env = "", .file = (dir.path() / name).string()};
  };
  RelayConfig c;
  ChannelConfig mail;
  mail.kind = ChannelKind::kEmail;
  mail.name = "mail";
  mail.url = url_file("smtp", smtp.url());
  mail.email_from = "relay@example.org";
  mail.email_to = {"ops@example.org"};
  ChannelConfig slack;
  slack.kind = ChannelKind::kSlack;
  slack.name = "slack";
  slack.url = url_file("slack", robot.url("/services/X"));
  c.channels = {mail, slack};
  c.retry.initial_backoff = 10ms;
  const Document d = big_document(20);
  auto sent = send_document_now(c, "mail", d, 3);
  ASSERT_TRUE(sent) << sent.error().message;
  const auto emails = smtp.emails();
  ASSERT_EQ(emails.size(), 1u);
  EXPECT_NE(emails[0].data.find("multipart/alternative"), std::string::npos);
  EXPECT_EQ(part_body(emails[0].data, "text/html"), d.html);
  EXPECT_GT(*sent, d.markdown.size());
  auto failed = send_document_now(c, "slack", d, 2);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().message, "channel slack: HTTP 500: down (after 2 attempts)");
  EXPECT_EQ(robot.requests().size(), 2u);
  auto unknown = send_document_now(c, "pager", d, 1);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "unknown channel \"pager\" (configured: mail, slack)");
}

}  // namespace
}  // namespace inferscope::relay
