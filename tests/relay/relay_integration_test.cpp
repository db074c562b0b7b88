// Relay integration tests: fake robots that verify signatures with the openssl command line
// (independently of the relay's own HMAC code), a fake SMTP server, and Debian's real
// Alertmanager posting its webhook to the relay.

#include <sqlite3.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <inferscope/metrics/registry.h>

#include "fake_servers.h"
#include "relay/http_poster.h"
#include "relay/relay.h"
#include "relay_test_util.h"
#include "support/peers.h"
#include "support/test_process.h"
#include "support/wait_until.h"

namespace inferscope::relay {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::FakeHttpServer;
using testing::FakeRequest;
using testing::FakeResponse;
using testing::FakeSmtpServer;
using testing::TempDir;
using inferscope::testing::wait_until;
using testing::webhook_body;

// shell runs a command and returns its stdout without the trailing newline.
std::string shell(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  ::pclose(pipe);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// openssl_feishu_sign computes Feishu's sign with openssl: key = "timestamp\nsecret", empty message.
std::string openssl_feishu_sign(const std::string& timestamp, const std::string& secret) {
  return shell("printf '' | openssl dgst -sha256 -hmac \"$(printf '" + timestamp + "\\n" + secret +
               "')\" -binary | base64");
}

// openssl_dingtalk_sign computes DingTalk's sign with openssl: key = secret, message = "timestamp\nsecret".
std::string openssl_dingtalk_sign(const std::string& timestamp, const std::string& secret) {
  return shell("printf '" + timestamp + "\\n" + secret + "' | openssl dgst -sha256 -hmac '" + secret + "' -binary | base64");
}

std::string url_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string query_param(const std::string& target, const std::string& name) {
  const std::regex re("[?&]" + name + "=([^&]*)");
  std::smatch m;
  return std::regex_search(target, m, re) ? m[1].str() : std::string();
}

class RelayIntegrationTest : public ::testing::Test {
 protected:
  SecretSource secret_file(const std::string& name, const std::string& value) {
    const std::string path = (dir_.path() / name).string();
    std::ofstream(path) << value << "\n";
    return SecretSource{.env = "", .file = path};
  }
  ChannelConfig channel(ChannelKind kind, const std::string& name, const std::string& url, const std::string& secret = "") {
    ChannelConfig c;
    c.kind = kind;
    c.name = name;
    c.url = secret_file(name + ".url", url);
    if (!secret.empty()) c.secret = secret_file(name + ".secret", secret);
    return c;
  }
  RelayConfig config(std::vector<ChannelConfig> channels) {
    RelayConfig c;
    c.database_path = (dir_.path() / "relay.db").string();
    c.channels = std::move(channels);
    c.retry.initial_backoff = 200ms;
    c.retry.max_backoff = 1s;
    return c;
  }
  TempDir dir_;
};

// Tests Feishu and DingTalk signing against robots that check each signature with `openssl dgst`
// and answer like the real services (code/errcode 0, or 19021/310000). A channel with the wrong
// secret is refused and keeps retrying, so the check can fail.
TEST_F(RelayIntegrationTest, SignaturesVerifiedByOpenssl) {
  const std::string feishu_secret = "demo-secret", dingtalk_secret = "SEC0123456789abcdef";
  std::atomic<int> feishu_ok{0}, feishu_bad{0}, dingtalk_ok{0}, dingtalk_bad{0};
  FakeHttpServer feishu([&](const FakeRequest& r) {
    const json body = json::parse(r.body, nullptr, false);
    const std::string ts = body.value("timestamp", ""), sign = body.value("sign", "");
    const auto age = std::chrono::system_clock::now().time_since_epoch() - std::chrono::seconds(std::stoll(ts.empty() ? "0" : ts));
    if (!ts.empty() && sign == openssl_feishu_sign(ts, feishu_secret) && age < 1h && body["msg_type"] == "interactive") {
      ++feishu_ok;
      return FakeResponse{200, R"({"code":0,"msg":"success","data":{}})"};
    }
    ++feishu_bad;
    return FakeResponse{200, R"({"code":19021,"msg":"sign match fail or timestamp is not within one hour from current time"})"};
  });
  FakeHttpServer dingtalk([&](const FakeRequest& r) {
    const std::string ts = query_param(r.target, "timestamp"), sign = url_decode(query_param(r.target, "sign"));
    if (query_param(r.target, "access_token") == "tok" && !ts.empty() && sign == openssl_dingtalk_sign(ts, dingtalk_secret) &&
        ts.size() == 13) {
      ++dingtalk_ok;
      return FakeResponse{200, R"({"errcode":0,"errmsg":"ok"})"};
    }
    ++dingtalk_bad;
    return FakeResponse{200, R"({"errcode":310000,"errmsg":"sign not match"})"};
  });
  // The openssl pipelines themselves reproduce the reference vectors.
  ASSERT_EQ(openssl_feishu_sign("1599360473", "demo-secret"), "3/MaVZ8JLIy4TUG+7KSFJqvUkTKd+HWY8g+56DZWq8s=");
  ASSERT_EQ(openssl_dingtalk_sign("1577262236757", "SEC0123456789abcdef"), "Pgr6tpIpjVrMPPJUPkaI9sivFPPTYOy5zIOMF2GPFMA=");

  metrics::Registry registry;
  auto relay = Relay::open(config({channel(ChannelKind::kFeishu, "lark", feishu.url("/open-apis/bot/v2/hook/t"), feishu_secret),
                                   channel(ChannelKind::kDingTalk, "dt", dingtalk.url("/robot/send?access_token=tok"), dingtalk_secret),
                                   channel(ChannelKind::kDingTalk, "dt-wrong", dingtalk.url("/robot/send?access_token=tok"), "SECwrong")}),
                           registry);
  ASSERT_TRUE(relay) << relay.error().message;
  (*relay)->start();
  ASSERT_EQ((*relay)->handle_webhook(webhook_body("LatencyHigh", "firing", {"f1"})).status, 200);
  wait_until([&] { return feishu_ok > 0 && dingtalk_ok > 0 && dingtalk_bad >= 2; }, 20s, 20ms);
  (*relay)->stop();
  EXPECT_EQ(feishu_ok.load(), 1);
  EXPECT_EQ(feishu_bad.load(), 0);
  EXPECT_EQ(dingtalk_ok.load(), 1);
  EXPECT_GE(dingtalk_bad.load(), 2);  // the wrong secret: refused, retried
  const RelayStatus status = *(*relay)->status();
  for (const ChannelStatus& c : status.channels) {
    if (c.name == "dt-wrong") {
      EXPECT_EQ(c.delivered, 0);
      EXPECT_NE(c.last_error.find("errcode 310000"), std::string::npos) << c.last_error;
    } else {
      EXPECT_EQ(c.delivered, 1) << c.name;
    }
  }
}

// Tests email over SMTP (libcurl) to a loopback fake server: envelope, encoded subject, body.
TEST_F(RelayIntegrationTest, EmailOverSmtp) {
  FakeSmtpServer smtp;
  ChannelConfig mail = channel(ChannelKind::kEmail, "mail", smtp.url());
  mail.email_from = "inferscope@example.org";
  mail.email_to = {"oncall@example.org", "Lead <lead@example.org>"};
  metrics::Registry registry;
  auto relay = Relay::open(config({mail}), registry);
  ASSERT_TRUE(relay) << relay.error().message;
  ASSERT_EQ((*relay)->handle_webhook(webhook_body("KVCacheFull", "firing", {"f1"}, "relay", "KV 97% 模型 m1")).status, 200);
  EXPECT_EQ((*relay)->deliver_due(), 1);
  const auto emails = smtp.emails();
  ASSERT_EQ(emails.size(), 1u);
  EXPECT_NE(emails[0].mail_from.find("<inferscope@example.org>"), std::string::npos);
  ASSERT_EQ(emails[0].rcpt_to.size(), 2u);
  EXPECT_NE(emails[0].rcpt_to[1].find("lead@example.org"), std::string::npos);
  const std::string& data = emails[0].data;
  const auto subject_at = data.find("Subject: =?UTF-8?B?");
  ASSERT_NE(subject_at, std::string::npos) << data;
  const std::string subject64 = data.substr(subject_at + 19, data.find("?=", subject_at) - subject_at - 19);
  EXPECT_EQ(shell("printf '%s' '" + subject64 + "' | base64 -d"), "[FIRING:1] KVCacheFull");
  const std::string body64 = data.substr(data.find("\r\n\r\n") + 4);
  std::string joined;
  for (char c : body64) {
    if (c != '\r' && c != '\n') joined += c;
  }
  const std::string text = shell("printf '%s' '" + joined + "' | base64 -d");
  EXPECT_NE(text.find("Description: KV 97% 模型 m1"), std::string::npos) << text;
  EXPECT_EQ((*(*relay)->status()).channels[0].delivered, 1);
}

// listening_port waits for Alertmanager's `msg="Listening on" address=127.0.0.1:PORT` log line.
int listening_port(const std::string& log_path, std::chrono::seconds deadline) {
  const std::regex re("Listening on\"? address=127\\.0\\.0\\.1:([0-9]+)");
  int port = 0;
  wait_until(
      [&] {
        std::ifstream in(log_path);
        std::stringstream text;
        text << in.rdbuf();
        std::smatch m;
        const std::string s = text.str();
        if (std::regex_search(s, m, re)) port = std::stoi(m[1].str());
        return port != 0;
      },
      deadline, 50ms);
  return port;
}

// Tests the relay behind Debian's real Alertmanager: the webhook arrives, a 503 while the outbox
// is locked makes Alertmanager retry, the firing and then the resolved notification reach the robot.
TEST_F(RelayIntegrationTest, RealAlertmanagerRetriesAndDelivers) {
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kAlertmanager}));
  FakeHttpServer robot;
  metrics::Registry registry;
  RelayConfig c = config({channel(ChannelKind::kSlack, "slack", robot.url("/services/T/B/X"))});
  c.db_busy_timeout = 50ms;
  auto opened = Relay::open(c, registry);
  ASSERT_TRUE(opened) << opened.error().message;
  Relay& relay = **opened;
  relay.start();
  std::atomic<int> answered_503{0};
  FakeHttpServer relay_http([&](const FakeRequest& r) {
    if (r.method != "POST" || r.target != "/api/alertmanager/webhook") return FakeResponse{404, "{}"};
    const WebhookReply reply = relay.handle_webhook(r.body);
    if (reply.status == 503) ++answered_503;
    return FakeResponse{reply.status, reply.body};
  });
  std::ofstream(dir_.path() / "alertmanager.yml") << "route:\n  receiver: relay\n  group_by: ['alertname']\n"
                                               << "  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
                                               << "receivers:\n  - name: relay\n    webhook_configs:\n"
                                               << "      - url: '" << relay_http.url("/api/alertmanager/webhook") << "'\n"
                                               << "        send_resolved: true\n";
  // Lock the outbox first: the first webhook must get 503 and be retried by Alertmanager.
  sqlite3* lock = nullptr;
  ASSERT_EQ(sqlite3_open(c.database_path.c_str(), &lock), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(lock, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  const std::string log = (dir_.path() / "alertmanager.log").string();
  inferscope::testing::TestProcess am({.binary = inferscope::testing::kAlertmanager.path,
                                       .args = {"--config.file=" + (dir_.path() / "alertmanager.yml").string(),
                                                "--storage.path=" + (dir_.path() / "am").string(),
                                                "--web.listen-address=127.0.0.1:0", "--cluster.listen-address=",
                                                "--web.external-url=http://127.0.0.1:9093"},
                                       .stdout_file = log,
                                       .stderr_file = log});
  ASSERT_TRUE(am.started()) << am.start_error();
  const int port = listening_port(log, 10s);
  ASSERT_GT(port, 0) << "Alertmanager did not log its port; see " << log;
  const std::string api = "http://127.0.0.1:" + std::to_string(port) + "/api/v2/alerts";
  HttpPoster poster(5000ms);
  const std::string alert = R"([{"labels":{"alertname":"RelayE2E","model":"m1","severity":"critical"},)"
                            R"("annotations":{"summary":"p99 high","runbook":"check the decode stage"}}])";
  ASSERT_TRUE(wait_until(  // the API may lag the log line
      [&] {
        auto posted = poster.post(api, alert);
        return posted && posted->status == 200;
      },
      5s, 100ms));
  const auto wait_for = [](const std::function<bool()>& done, std::chrono::seconds limit) {
    return wait_until(done, limit, 50ms);
  };
  EXPECT_TRUE(wait_for([&] { return answered_503 >= 1; }, 20s));
  sqlite3_exec(lock, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(lock);
  const auto robot_saw = [&](const std::string& what) {
    for (const FakeRequest& r : robot.requests()) {
      if (r.body.find(what) != std::string::npos) return true;
    }
    return false;
  };
  ASSERT_TRUE(wait_for([&] { return robot_saw("[FIRING:1] RelayE2E"); }, 30s)) << "no firing notification";
  EXPECT_TRUE(robot_saw("check the decode stage"));
  // Resolve: the same labels with endsAt in the past.
  const std::string resolve = R"([{"labels":{"alertname":"RelayE2E","model":"m1","severity":"critical"},)"
                              R"("annotations":{"summary":"p99 high"},"endsAt":"2020-01-01T00:00:00Z"}])";
  ASSERT_TRUE(poster.post(api, resolve));
  EXPECT_TRUE(wait_for([&] { return robot_saw("[RESOLVED] RelayE2E"); }, 30s)) << "no resolved notification";
  relay.stop();
  auto fired = relay.alerts_fired_between(std::chrono::system_clock::now() - 1h, std::chrono::system_clock::now() + 1h);
  ASSERT_TRUE(fired);
  ASSERT_EQ(fired->size(), 1u);
  EXPECT_EQ((*fired)[0].labels.at("model"), "m1");
}

}  // namespace
}  // namespace inferscope::relay
