#include "relay/relay.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <inferscope/metrics/exposition.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "fake_servers.h"
#include "relay/fired_alerts.h"
#include "relay_test_util.h"

namespace inferscope::relay {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::FakeHttpServer;
using testing::FakeRequest;
using testing::FakeResponse;
using testing::TempDir;
using testing::webhook_body;

// WallClock is a hand-moved wall clock for RelayOptions::wall_clock.
struct WallClock {
  std::atomic<std::int64_t> ms{1796000000000};  // 2026-11-29
  void advance(std::chrono::milliseconds by) { ms += by.count(); }
  std::function<std::chrono::system_clock::time_point()> fn() {
    return [this] { return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms.load())); };
  }
};

// Fixture: a temp dir, a clock, and helpers to write secrets to files and open relays.
class RelayTest : public ::testing::Test {
 protected:
  SecretSource secret_file(const std::string& name, const std::string& value) {
    const std::string path = (dir_.path() / name).string();
    std::ofstream(path) << value << "\n";
    return SecretSource{.env = "", .file = path};
  }
  ChannelConfig channel(ChannelKind kind, const std::string& name, const std::string& url) {
    ChannelConfig c;
    c.kind = kind;
    c.name = name;
    c.url = secret_file(name + ".url", url);
    return c;
  }
  RelayConfig config(std::vector<ChannelConfig> channels) {
    RelayConfig c;
    c.database_path = (dir_.path() / "relay.db").string();
    c.channels = std::move(channels);
    c.retry.initial_backoff = 1s;
    c.retry.jitter = 0.0;
    return c;
  }
  std::unique_ptr<Relay> open(RelayConfig c, metrics::Registry& registry) {
    RelayOptions options;
    options.wall_clock = clock_.fn();
    options.on_event = [this](const RelayEvent& e) {
      std::lock_guard lock(events_mutex_);
      events_.push_back(e.kind + " " + e.channel + " " + e.text);
    };
    auto relay = Relay::open(std::move(c), registry, std::move(options));
    if (!relay) ADD_FAILURE() << relay.error().message;
    return relay ? std::move(*relay) : nullptr;
  }
  static std::string exposition(metrics::Registry& registry) {
    std::string text;
    metrics::render(registry, metrics::ExpositionFormat::kPrometheusText004, text);
    return text;
  }

  TempDir dir_;
  WallClock clock_;
  std::mutex events_mutex_;
  std::vector<std::string> events_;
};

// Tests the happy path: 200 "stored" only after the commit, then one delivery with the
// notification as JSON, counted as delivered.
TEST_F(RelayTest, StoresThenDelivers) {
  FakeHttpServer hook;
  metrics::Registry registry;
  auto relay = open(config({channel(ChannelKind::kWebhook, "hook", hook.url("/in?token=s3cret"))}), registry);
  ASSERT_TRUE(relay);
  const WebhookReply reply = relay->handle_webhook(webhook_body("LatencyHigh", "firing", {"f1", "f2"}));
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(json::parse(reply.body)["status"], "stored");
  EXPECT_TRUE(hook.requests().empty());
  EXPECT_EQ((*relay->status()).channels[0].pending, 1);
  EXPECT_EQ(relay->deliver_due(), 1);
  const auto requests = hook.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].target, "/in?token=s3cret");
  const json body = json::parse(requests[0].body);
  EXPECT_EQ(body["notifications"][0]["alerts"].size(), 2u);
  EXPECT_NE(body["text"].get<std::string>().find("[FIRING:2] LatencyHigh"), std::string::npos);
  const RelayStatus status = *relay->status();
  EXPECT_EQ(status.channels[0].pending, 0);
  EXPECT_EQ(status.channels[0].delivered, 1);
  const std::string text = exposition(registry);
  EXPECT_NE(text.find("inferscope_notifications_total{channel=\"hook\",result=\"delivered\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("inferscope_notifications_total{channel=\"hook\",result=\"failed\"} 0"), std::string::npos);
  EXPECT_NE(text.find("inferscope_relay_delivery_latency_seconds_count{channel=\"hook\"} 1"), std::string::npos);
  EXPECT_NE(text.find("inferscope_relay_outbox_depth{channel=\"hook\"} 0"), std::string::npos);
  EXPECT_EQ(relay->deliver_due(), 0);  // nothing left
}

// Tests that a malformed payload gets 400 with an OpenAI-format error and stores nothing.
TEST_F(RelayTest, MalformedPayloadIs400) {
  FakeHttpServer hook;
  metrics::Registry registry;
  auto relay = open(config({channel(ChannelKind::kWebhook, "hook", hook.url("/in"))}), registry);
  ASSERT_TRUE(relay);
  for (const char* body : {"", "not json", R"({"version":"4"})", R"({"version":"4","status":"firing","groupKey":"k","alerts":[{}]})"}) {
    const WebhookReply reply = relay->handle_webhook(body);
    EXPECT_EQ(reply.status, 400) << body;
    const json error = json::parse(reply.body);
    EXPECT_EQ(error["error"]["type"], "invalid_request_error");
    EXPECT_NE(error["error"]["message"].get<std::string>().find("cannot parse Alertmanager webhook"), std::string::npos);
  }
  EXPECT_EQ((*relay->status()).channels[0].pending, 0);
  EXPECT_NE(exposition(registry).find("inferscope_relay_webhooks_total{result=\"invalid\"} 4"), std::string::npos);
}

// Tests 503 (Alertmanager retries it) while another process holds the database's write lock,
// and 200 once it is released.
TEST_F(RelayTest, LockedDatabaseIs503) {
  FakeHttpServer hook;
  metrics::Registry registry;
  RelayConfig c = config({channel(ChannelKind::kWebhook, "hook", hook.url("/in"))});
  c.db_busy_timeout = 100ms;
  auto relay = open(c, registry);
  ASSERT_TRUE(relay);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(c.database_path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  const WebhookReply locked = relay->handle_webhook(webhook_body("A", "firing", {"f1"}));
  EXPECT_EQ(locked.status, 503);
  EXPECT_EQ(json::parse(locked.body)["error"]["type"], "server_error");
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_EQ(relay->handle_webhook(webhook_body("A", "firing", {"f1"})).status, 200);
  EXPECT_EQ(relay->deliver_due(), 1);
  EXPECT_EQ(hook.requests().size(), 1u);
}

// Tests dedupe: Alertmanager's retry (same group key, status, fingerprints in any order) is
// acknowledged but delivered once; the resolve is not a duplicate.
TEST_F(RelayTest, Dedupe) {
  FakeHttpServer hook;
  metrics::Registry registry;
  auto relay = open(config({channel(ChannelKind::kWebhook, "hook", hook.url("/in"))}), registry);
  ASSERT_TRUE(relay);
  EXPECT_EQ(json::parse(relay->handle_webhook(webhook_body("A", "firing", {"f1", "f2"})).body)["status"], "stored");
  EXPECT_EQ(json::parse(relay->handle_webhook(webhook_body("A", "firing", {"f2", "f1"})).body)["status"], "duplicate");
  EXPECT_EQ(json::parse(relay->handle_webhook(webhook_body("A", "resolved", {"f1", "f2"})).body)["status"], "stored");
  EXPECT_EQ(relay->deliver_due(), 1);  // both merged into one webhook POST
  const json body = json::parse(hook.requests().at(0).body);
  EXPECT_EQ(body["notifications"].size(), 2u);
  EXPECT_NE(exposition(registry).find("inferscope_relay_webhooks_total{result=\"duplicate\"} 1"), std::string::npos);
}

// Tests that a robot answering HTTP 200 with errcode != 0 is retried after the back-off and
// counted as retried, then delivered.
TEST_F(RelayTest, BodyErrorCodeIsRetried) {
  std::atomic<int> calls{0};
  FakeHttpServer robot([&](const FakeRequest&) {
    return ++calls == 1 ? FakeResponse{200, R"({"errcode":310000,"errmsg":"keywords not in content"})"} : FakeResponse{};
  });
  metrics::Registry registry;
  auto relay = open(config({channel(ChannelKind::kWeCom, "wecom", robot.url("/cgi-bin/webhook/send?key=k"))}), registry);
  ASSERT_TRUE(relay);
  ASSERT_EQ(relay->handle_webhook(webhook_body("A", "firing", {"f1"})).status, 200);
  EXPECT_EQ(relay->deliver_due(), 1);
  auto status = *relay->status();
  EXPECT_EQ(status.channels[0].pending, 1);
  EXPECT_NE(status.channels[0].last_error.find("errcode 310000"), std::string::npos) << status.channels[0].last_error;
  EXPECT_EQ(relay->deliver_due(), 0);  // backing off
  clock_.advance(1s);
  EXPECT_EQ(relay->deliver_due(), 1);
  EXPECT_EQ(calls.load(), 2);
  status = *relay->status();
  EXPECT_EQ(status.channels[0].pending, 0);
  EXPECT_EQ(status.channels[0].delivered, 1);
  const std::string text = exposition(registry);
  EXPECT_NE(text.find("inferscope_notifications_total{channel=\"wecom\",result=\"retried\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("inferscope_notifications_total{channel=\"wecom\",result=\"delivered\"} 1"), std::string::npos);
}

// Tests exponential back-off and the final failure: kept in the outbox as failed, counted, an
// event emitted; the robot's URL token never appears in the recorded error.
TEST_F(RelayTest, FinalFailureIsKeptAndCounted) {
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  struct Restore {
    std::shared_ptr<spdlog::logger> logger;
    ~Restore() { spdlog::set_default_logger(logger); }
  } restore{previous};
  FakeHttpServer robot([](const FakeRequest&) { return FakeResponse{500, "upstream broke"}; });
  metrics::Registry registry;
  RelayConfig c = config({channel(ChannelKind::kDingTalk, "dt", robot.url("/robot/send?access_token=T0KEN"))});
  c.retry.max_attempts = 3;
  auto relay = open(c, registry);
  ASSERT_TRUE(relay);
  ASSERT_EQ(relay->handle_webhook(webhook_body("A", "firing", {"f1"})).status, 200);
  EXPECT_EQ(relay->deliver_due(), 1);  // attempt 1, next in 1 s
  clock_.advance(999ms);
  EXPECT_EQ(relay->deliver_due(), 0);
  clock_.advance(1ms);
  EXPECT_EQ(relay->deliver_due(), 1);  // attempt 2, next in 2 s
  clock_.advance(1999ms);
  EXPECT_EQ(relay->deliver_due(), 0);
  clock_.advance(1ms);
  EXPECT_EQ(relay->deliver_due(), 1);  // attempt 3: gives up
  clock_.advance(1h);
  EXPECT_EQ(relay->deliver_due(), 0);
  EXPECT_EQ(robot.requests().size(), 3u);
  const auto status = *relay->status();
  EXPECT_EQ(status.channels[0].failed, 1);
  EXPECT_EQ(status.channels[0].pending, 0);
  EXPECT_NE(status.channels[0].last_error.find("HTTP 500"), std::string::npos);
  EXPECT_EQ(status.channels[0].last_error.find("T0KEN"), std::string::npos);
  const std::string text = exposition(registry);
  EXPECT_NE(text.find("inferscope_notifications_total{channel=\"dt\",result=\"retried\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("inferscope_notifications_total{channel=\"dt\",result=\"failed\"} 1"), std::string::npos);
  std::lock_guard lock(events_mutex_);
  ASSERT_FALSE(events_.empty());
  EXPECT_EQ(events_.back().rfind("failed dt 1 notification(s) [FIRING:1] A", 0), 0u) << events_.back();
  for (const std::string& e : events_) EXPECT_EQ(e.find("T0KEN"), std::string::npos) << e;
  // The final failure is logged with its reason; the URL's token never is.
  EXPECT_NE(log.str().find("channel dt gave up on notification"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("after 3 attempts: HTTP 500: upstream broke"), std::string::npos) << log.str();
  EXPECT_EQ(log.str().find("T0KEN"), std::string::npos) << log.str();
}

// Tests durability: a relay destroyed before delivering leaves the notification in SQLite; a
// new relay on the same file (a restart of `up`) sends it from its own thread.
TEST_F(RelayTest, RestartDeliversPending) {
  FakeHttpServer hook;
  RelayConfig c = config({channel(ChannelKind::kWebhook, "hook", hook.url("/in"))});
  {
    metrics::Registry registry;
    auto relay = open(c, registry);
    ASSERT_TRUE(relay);
    ASSERT_EQ(relay->handle_webhook(webhook_body("A", "firing", {"f1"})).status, 200);
    ASSERT_EQ(relay->handle_webhook(webhook_body("B", "firing", {"f2"})).status, 200);
  }
  EXPECT_TRUE(hook.requests().empty());
  metrics::Registry registry;
  auto relay = open(c, registry);
  ASSERT_TRUE(relay);
  relay->start();
  ASSERT_TRUE(hook.wait_for_requests(1));
  relay->stop();
  std::set<std::string> groups;
  for (const FakeRequest& r : hook.requests()) {
    const json body = json::parse(r.body);
    for (const auto& n : body["notifications"]) groups.insert(n["groupKey"].get<std::string>());
  }
  EXPECT_EQ(groups.size(), 2u);
  EXPECT_EQ((*relay->status()).channels[0].pending, 0);
}

// Tests the DingTalk rate limit: 30 notifications within a minute make at most 20 messages in
// any rolling minute; the 10 held back are merged into one message; none is lost.
TEST_F(RelayTest, RateLimitMergesInsteadOfDropping) {
  FakeHttpServer robot;
  metrics::Registry registry;
  auto relay = open(config({channel(ChannelKind::kDingTalk, "dt", robot.url("/robot/send?access_token=t"))}), registry);
  ASSERT_TRUE(relay);
  std::vector<std::int64_t> sent_at;
  for (int i = 0; i < 30; ++i) {
    ASSERT_EQ(relay->handle_webhook(webhook_body(std::string("Alert") + std::to_string(i), "firing", {std::string("f") + std::to_string(i)})).status, 200);
    relay->deliver_due();
    while (sent_at.size() < robot.requests().size()) sent_at.push_back(clock_.ms.load());
    clock_.advance(1s);
  }
  EXPECT_EQ(robot.requests().size(), 20u);
  clock_.advance(60s);
  EXPECT_EQ(relay->deliver_due(), 1);
  while (sent_at.size() < robot.requests().size()) sent_at.push_back(clock_.ms.load());
  const auto requests = robot.requests();
  ASSERT_EQ(requests.size(), 21u);
  const std::string merged = json::parse(requests.back().body)["markdown"]["text"].get<std::string>();
  EXPECT_NE(merged.find("inferscope: 10 notifications"), std::string::npos) << merged;
  std::set<std::string> seen;
  for (const FakeRequest& r : requests) {
    const std::string text = json::parse(r.body)["markdown"]["text"].get<std::string>();
    for (int i = 0; i < 30; ++i) {
      if (text.find(std::string("[FIRING:1] Alert") + std::to_string(i) + "\n") != std::string::npos) seen.insert(std::to_string(i));
    }
  }
  EXPECT_EQ(seen.size(), 30u);
  for (std::size_t i = 20; i < sent_at.size(); ++i) EXPECT_GE(sent_at[i] - sent_at[i - 20], 60000) << i;
  EXPECT_EQ((*relay->status()).channels[0].delivered, 30);
}

// Tests that a throttle answer (DingTalk errcode 130101) pauses the channel for 10 minutes.
TEST_F(RelayTest, ThrottleAnswerPausesChannel) {
  std::atomic<int> calls{0};
  FakeHttpServer robot([&](const FakeRequest&) {
    return ++calls == 1 ? FakeResponse{200, R"({"errcode":130101,"errmsg":"send too fast"})"} : FakeResponse{};
  });
  metrics::Registry registry;
  auto relay = open(config({channel(ChannelKind::kDingTalk, "dt", robot.url("/robot/send?access_token=t"))}), registry);
  ASSERT_TRUE(relay);
  ASSERT_EQ(relay->handle_webhook(webhook_body("A", "firing", {"f1"})).status, 200);
  EXPECT_EQ(relay->deliver_due(), 1);
  clock_.advance(9min);
  EXPECT_EQ(relay->deliver_due(), 0);
  clock_.advance(1min);
  EXPECT_EQ(relay->deliver_due(), 1);
  EXPECT_EQ((*relay->status()).channels[0].delivered, 1);
}

// Tests WeCom's 4096-byte markdown limit: a huge description is cut with the marker.
TEST_F(RelayTest, TruncatesToServiceLimit) {
  FakeHttpServer robot;
  metrics::Registry registry;
  auto relay = open(config({channel(ChannelKind::kWeCom, "wecom", robot.url("/send?key=k"))}), registry);
  ASSERT_TRUE(relay);
  std::string description;
  for (int i = 0; i < 2000; ++i) description += "延迟";
  ASSERT_EQ(relay->handle_webhook(webhook_body("A", "firing", {"f1"}, "relay", description)).status, 200);
  EXPECT_EQ(relay->deliver_due(), 1);
  const std::string content = json::parse(robot.requests().at(0).body)["markdown"]["content"].get<std::string>();
  EXPECT_LE(content.size(), 4096u);
  EXPECT_NE(content.find("[truncated]"), std::string::npos);
  EXPECT_NE(content.find("[FIRING:1] A"), std::string::npos);
}

// Tests routing by Alertmanager receiver name.
TEST_F(RelayTest, RoutesByReceiver) {
  FakeHttpServer a, b;
  metrics::Registry registry;
  ChannelConfig team_a = channel(ChannelKind::kWebhook, "a", a.url("/a"));
  team_a.receivers = {"team-a"};
  auto relay = open(config({team_a, channel(ChannelKind::kWebhook, "b", b.url("/b"))}), registry);
  ASSERT_TRUE(relay);
  ASSERT_EQ(relay->handle_webhook(webhook_body("X", "firing", {"f1"}, "team-a")).status, 200);
  ASSERT_EQ(relay->handle_webhook(webhook_body("Y", "firing", {"f2"}, "team-b")).status, 200);
  relay->deliver_due();
  EXPECT_EQ(a.requests().size(), 1u);
  ASSERT_EQ(b.requests().size(), 1u);
  EXPECT_EQ(json::parse(b.requests()[0].body)["notifications"].size(), 2u);
}

// Tests the watchdog: the watchdog alert is absorbed (never forwarded); when it stops for the
// timeout the chat channel (not the webhook) gets "alerting pipeline broken"; when it comes back,
// a resolve; the alarm is raised once per outage.
TEST_F(RelayTest, WatchdogAlarmAndRestore) {
  FakeHttpServer chat, hook;
  metrics::Registry registry;
  RelayConfig c = config({channel(ChannelKind::kSlack, "chat", chat.url("/slack")), channel(ChannelKind::kWebhook, "hook", hook.url("/h"))});
  c.watchdog.timeout = 10min;
  auto relay = open(c, registry);
  ASSERT_TRUE(relay);
  const WebhookReply reply = relay->handle_webhook(webhook_body("InferscopeWatchdog", "firing", {"w"}));
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(json::parse(reply.body)["status"], "ignored");
  // Shortest round-trip form of 1796000000.
  EXPECT_NE(exposition(registry).find("inferscope_relay_watchdog_last_seen_timestamp_seconds 1.796e+09\n"), std::string::npos);
  clock_.advance(9min);
  relay->check_watchdog();
  EXPECT_EQ(relay->deliver_due(), 0);
  clock_.advance(2min);
  relay->check_watchdog();
  relay->check_watchdog();  // once per outage
  EXPECT_EQ(relay->deliver_due(), 1);
  ASSERT_EQ(chat.requests().size(), 1u);
  EXPECT_TRUE(hook.requests().empty());
  const std::string alarm = json::parse(chat.requests()[0].body)["text"].get<std::string>();
  EXPECT_NE(alarm.find("alerting pipeline broken: no watchdog for 11 minutes"), std::string::npos) << alarm;
  EXPECT_TRUE((*relay->status()).watchdog_alarm_raised);
  clock_.advance(1min);
  EXPECT_EQ(json::parse(relay->handle_webhook(webhook_body("InferscopeWatchdog", "firing", {"w"})).body)["status"], "ignored");
  EXPECT_EQ(relay->deliver_due(), 1);
  ASSERT_EQ(chat.requests().size(), 2u);
  EXPECT_NE(json::parse(chat.requests()[1].body)["text"].get<std::string>().find("[RESOLVED] InferscopeAlertingPipelineBroken"),
            std::string::npos);
  EXPECT_FALSE((*relay->status()).watchdog_alarm_raised);
}

// Tests that a relay that never saw the watchdog alarms `timeout` after it opened.
TEST_F(RelayTest, WatchdogNeverSeen) {
  FakeHttpServer chat;
  metrics::Registry registry;
  RelayConfig c = config({channel(ChannelKind::kFeishu, "lark", chat.url("/hook"))});
  c.watchdog.timeout = 5min;
  auto relay = open(c, registry);
  ASSERT_TRUE(relay);
  clock_.advance(5min);
  relay->check_watchdog();
  EXPECT_EQ(relay->deliver_due(), 1);
  const json card = json::parse(chat.requests().at(0).body);
  EXPECT_EQ(card["card"]["header"]["template"], "red");
  EXPECT_NE(card["card"]["elements"][0]["text"]["content"].get<std::string>().find("no watchdog for 5 minutes"), std::string::npos);
}

// Tests the diagnosis slot: the doctor's Markdown appears under "Diagnosis" on every channel,
// computed once per notification although two channels and a retry use it.
TEST_F(RelayTest, DiagnosisOncePerNotification) {
  std::atomic<int> calls{0}, wecom_calls{0};
  FakeHttpServer slack;
  FakeHttpServer wecom([&](const FakeRequest&) {
    return ++wecom_calls == 1 ? FakeResponse{500, "busy"} : FakeResponse{};
  });
  metrics::Registry registry;
  RelayOptions options;
  options.wall_clock = clock_.fn();
  options.diagnose = [&](const Notification& n) {
    ++calls;
    return FiringDiagnosis{"decode slowed 3x on " + n.alerts.at(0).labels.at("instance"), ""};
  };
  auto opened = Relay::open(config({channel(ChannelKind::kSlack, "slack", slack.url("/s")),
                                    channel(ChannelKind::kWeCom, "wecom", wecom.url("/w"))}),
                            registry, options);
  ASSERT_TRUE(opened) << opened.error().message;
  Relay& relay = **opened;
  ASSERT_EQ(relay.handle_webhook(webhook_body("A", "firing", {"f1"})).status, 200);
  relay.deliver_due();
  clock_.advance(2s);
  relay.deliver_due();
  EXPECT_EQ(calls.load(), 1);
  ASSERT_EQ(wecom.requests().size(), 2u);
  EXPECT_NE(json::parse(slack.requests().at(0).body)["text"].get<std::string>().find("*Diagnosis*\ndecode slowed 3x on i-f1"),
            std::string::npos);
  EXPECT_NE(json::parse(wecom.requests().at(1).body)["markdown"]["content"].get<std::string>().find("decode slowed 3x on i-f1"),
            std::string::npos);
}

// Tests that a resolved notification says what recovered from the record kept when its alert
// fired (kept in the database: it survives a restart of the relay between firing and resolving),
// and that no fresh diagnosis is made for it.
TEST_F(RelayTest, ResolvedNotificationCarriesTheRecordKeptWhenItFired) {
  FakeHttpServer slack;
  std::atomic<int> diagnose_calls{0};
  std::vector<std::vector<std::string>> recovered_with;
  std::mutex recovered_mutex;
  const auto options = [&] {
    RelayOptions o;
    o.wall_clock = clock_.fn();
    o.diagnose = [&](const Notification& n) {
      ++diagnose_calls;
      return FiringDiagnosis{"decode slowed 3x", "record of " + n.alerts.at(0).fingerprint + " firing"};
    };
    o.recovered = [&](const Notification&, const std::vector<std::string>& records) {
      std::lock_guard lock(recovered_mutex);
      recovered_with.push_back(records);
      return records.at(0).empty() ? std::string() : "recovered: " + records.at(0);
    };
    return o;
  };
  {
    metrics::Registry registry;
    auto opened = Relay::open(config({channel(ChannelKind::kSlack, "slack", slack.url("/s"))}), registry, options());
    ASSERT_TRUE(opened) << opened.error().message;
    ASSERT_EQ((*opened)->handle_webhook(webhook_body("A", "firing", {"f1"})).status, 200);
    (*opened)->deliver_due();
    // A repeat of the same firing (Alertmanager's repeat_interval) keeps the first record.
    clock_.advance(10min);
    ASSERT_EQ((*opened)->handle_webhook(webhook_body("A", "firing", {"f1"}, "relay", "p99 5.0 s")).status, 200);
    clock_.advance(2s);
    (*opened)->deliver_due();
  }
  EXPECT_EQ(diagnose_calls.load(), 2);
  metrics::Registry registry;
  auto reopened = Relay::open(config({channel(ChannelKind::kSlack, "slack", slack.url("/s"))}), registry, options());
  ASSERT_TRUE(reopened) << reopened.error().message;
  // f2 never fired through this relay: it has no record.
  ASSERT_EQ((*reopened)->handle_webhook(webhook_body("A", "resolved", {"f1", "f2"})).status, 200);
  clock_.advance(2s);
  (*reopened)->deliver_due();
  EXPECT_EQ(diagnose_calls.load(), 2);
  ASSERT_EQ(recovered_with.size(), 1u);
  EXPECT_EQ(recovered_with[0], (std::vector<std::string>{"record of f1 firing", ""}));
  ASSERT_EQ(slack.requests().size(), 3u);
  const std::string firing = json::parse(slack.requests().at(0).body)["text"].get<std::string>();
  const std::string resolved = json::parse(slack.requests().at(2).body)["text"].get<std::string>();
  EXPECT_NE(firing.find("decode slowed 3x"), std::string::npos) << firing;
  EXPECT_NE(resolved.find("[RESOLVED]"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("*Recovered*\nrecovered: record of f1 firing"), std::string::npos) << resolved;
  EXPECT_EQ(resolved.find("decode slowed 3x"), std::string::npos) << resolved;
}

// Tests a group whose alerts partly resolved (Alertmanager sends it as one firing notification):
// the firing alert gets the diagnosis, and the resolved one still says what recovered from the
// record kept when it fired.
TEST_F(RelayTest, MixedNotificationSaysWhatRecovered) {
  FakeHttpServer slack;
  RelayOptions o;
  o.wall_clock = clock_.fn();
  o.diagnose = [&](const Notification& n) {
    return FiringDiagnosis{"decode slowed 3x", "record of " + n.alerts.at(0).fingerprint + " firing"};
  };
  std::vector<std::string> recovered_with;
  o.recovered = [&](const Notification& n, const std::vector<std::string>& records) {
    for (const Alert& a : n.alerts) EXPECT_EQ(a.status, "resolved");
    recovered_with = records;
    return records.at(0).empty() ? std::string() : "recovered: " + records.at(0);
  };
  metrics::Registry registry;
  auto relay = Relay::open(config({channel(ChannelKind::kSlack, "slack", slack.url("/s"))}), registry, o);
  ASSERT_TRUE(relay) << relay.error().message;
  ASSERT_EQ((*relay)->handle_webhook(webhook_body("A", "firing", {"f1"})).status, 200);
  (*relay)->deliver_due();
  clock_.advance(5min);
  auto mixed = json::parse(webhook_body("A", "firing", {"f1", "f2"}));
  mixed["alerts"][0]["status"] = "resolved";
  mixed["alerts"][0]["endsAt"] = "2026-11-30T03:10:00Z";
  ASSERT_EQ((*relay)->handle_webhook(mixed.dump()).status, 200);
  clock_.advance(2s);
  (*relay)->deliver_due();
  ASSERT_EQ(slack.requests().size(), 2u);
  EXPECT_EQ(recovered_with, (std::vector<std::string>{"record of f1 firing"}));
  const std::string text = json::parse(slack.requests().at(1).body)["text"].get<std::string>();
  EXPECT_NE(text.find("decode slowed 3x"), std::string::npos) << text;
  EXPECT_NE(text.find("**Recovered** (the resolved alerts of this group)\nrecovered: record of f1 firing"),
            std::string::npos)
      << text;
}

// Tests the history query the report uses.
TEST_F(RelayTest, AlertsFiredBetween) {
  metrics::Registry registry;
  auto relay = open(config({}), registry);
  ASSERT_TRUE(relay);
  ASSERT_EQ(relay->handle_webhook(webhook_body("A", "firing", {"f1"})).status, 200);
  ASSERT_EQ(relay->handle_webhook(webhook_body("A", "resolved", {"f1"})).status, 200);
  const auto t = [](const char* s) { return *parse_rfc3339(s); };
  auto fired = relay->alerts_fired_between(t("2026-11-30T02:00:00Z"), t("2026-11-30T04:00:00Z"));
  ASSERT_TRUE(fired);
  ASSERT_EQ(fired->size(), 1u);
  EXPECT_EQ((*fired)[0].alertname, "A");
  EXPECT_EQ((*fired)[0].starts_at, t("2026-11-30T03:00:00Z"));
  EXPECT_EQ((*fired)[0].ends_at, t("2026-11-30T03:10:00Z"));
  EXPECT_TRUE((*relay->alerts_fired_between(t("2026-11-30T03:10:00Z"), t("2026-11-30T04:00:00Z"))).empty());
  // Another reader (the report) sees the same history while the relay holds the file.
  auto from_file = read_alerts_fired_between((dir_.path() / "relay.db").string(), t("2026-11-30T02:00:00Z"),
                                             t("2026-11-30T04:00:00Z"));
  ASSERT_TRUE(from_file) << from_file.error().message;
  ASSERT_EQ(from_file->size(), 1u);
  EXPECT_EQ((*from_file)[0].labels.at("instance"), "i-f1");
  auto missing = read_alerts_fired_between((dir_.path() / "nope.db").string(), t("2026-11-30T02:00:00Z"),
                                           t("2026-11-30T04:00:00Z"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("nope.db"), std::string::npos);
}

// Tests config errors: a missing env var is named (the value never), duplicate names, bad URLs.
TEST_F(RelayTest, ConfigErrors) {
  auto check = [&](RelayConfig c, const std::string& want) {
    metrics::Registry registry;
    auto relay = Relay::open(std::move(c), registry);
    ASSERT_FALSE(relay) << want;
    EXPECT_NE(relay.error().message.find(want), std::string::npos) << "got " << relay.error().message << "; want " << want;
  };
  ChannelConfig from_env;
  from_env.kind = ChannelKind::kDingTalk;
  from_env.name = "dt";
  from_env.url.env = "INFERSCOPE_RELAY_TEST_UNSET_VARIABLE";
  check(config({from_env}), "environment variable INFERSCOPE_RELAY_TEST_UNSET_VARIABLE: not set");
  check(config({channel(ChannelKind::kWebhook, "x", "http://a"), channel(ChannelKind::kWebhook, "x", "http://b")}), "used twice");
  check(config({channel(ChannelKind::kWebhook, "x", "ftp://a")}), "http:// or https://");
  check(config({channel(ChannelKind::kEmail, "m", "smtp://a")}), "email_from");
  ChannelConfig signed_wecom = channel(ChannelKind::kWeCom, "w", "http://a");
  signed_wecom.secret = secret_file("w.secret", "s");
  check(config({signed_wecom}), "only used by feishu and dingtalk");
  RelayConfig bad_watchdog = config({});
  bad_watchdog.watchdog.channels = {"nope"};
  check(bad_watchdog, "watchdog channel nope");
  RelayConfig no_db = config({});
  no_db.database_path = (dir_.path() / "missing/dir/relay.db").string();
  check(no_db, "missing/dir/relay.db");
}


// report_document has a Markdown of about 30 bytes per line (3-byte characters among them).
Document report_document(int lines) {
  Document d{"inferscope report 2026-11-29 09:00 - 2026-11-30 09:00 UTC", "# Report\n", "<html><body>full</body></html>"};
  for (int i = 0; i < lines; ++i) d.markdown += "| model-" + std::to_string(i) + " | 延迟 p99 1.25 s |\n";
  return d;
}

// Tests that a queued document (the report) is delivered alone, never merged with an alert: to
// the WeCom robot cut to 4096 bytes, to the webhook whole with its HTML, with a "report sent" event.
TEST_F(RelayTest, DocumentIsDeliveredAlone) {
  FakeHttpServer wecom;
  FakeHttpServer hook;
  metrics::Registry registry;
  auto relay = open(config({channel(ChannelKind::kWeCom, "wc", wecom.url("/cgi-bin/webhook/send?key=K")),
                            channel(ChannelKind::kWebhook, "hook", hook.url("/in"))}),
                    registry);
  ASSERT_TRUE(relay);
  ASSERT_EQ(relay->handle_webhook(webhook_body("A", "firing", {"f1"})).status, 200);
  const Document d = report_document(1000);
  ASSERT_TRUE(relay->enqueue_document(d, {"wc", "hook"}));
  EXPECT_EQ(relay->deliver_due(), 4);  // per channel: the alert, then the document
  const auto wc = wecom.requests();
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(json::parse(wc[0].body)["markdown"]["content"].get<std::string>().find("# Report"), std::string::npos);
  const std::string text = json::parse(wc[1].body)["markdown"]["content"];
  EXPECT_LE(text.size(), 4096u);
  EXPECT_NE(text.find(kDocumentCutNote), std::string::npos);
  const auto hk = hook.requests();
  ASSERT_EQ(hk.size(), 2u);
  const json body = json::parse(hk[1].body);
  EXPECT_EQ(body["markdown"], d.markdown);
  EXPECT_EQ(body["html"], d.html);
  {
    std::lock_guard lock(events_mutex_);
    const std::string sent = "report_sent hook report sent to hook (" + std::to_string(hk[1].body.size()) + " bytes)";
    EXPECT_NE(std::find(events_.begin(), events_.end(), sent), events_.end());
  }
  EXPECT_NE(exposition(registry).find("inferscope_notifications_total{channel=\"wc\",result=\"delivered\"} 2"),
            std::string::npos);
  EXPECT_EQ((*relay->status()).channels[0].pending, 0);
}

// Tests that a document for an unknown channel is refused with the configured names, and that
// nothing is queued.
TEST_F(RelayTest, DocumentUnknownChannelListsConfigured) {
  FakeHttpServer hook;
  metrics::Registry registry;
  auto relay = open(config({channel(ChannelKind::kWebhook, "hook", hook.url("/in"))}), registry);
  ASSERT_TRUE(relay);
  auto r = relay->enqueue_document(report_document(1), {"hook", "nope"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "unknown channel \"nope\" (configured: hook)");
  EXPECT_FALSE(relay->enqueue_document(report_document(1), {}));
  EXPECT_EQ(relay->deliver_due(), 0);
  EXPECT_TRUE(hook.requests().empty());
}

// Tests that a document is as durable as an alert: a relay closed before sending leaves it in the
// outbox; the next one sends it, retries a body error code (DingTalk errcode) after 1 s and 2 s,
// gives up after max_attempts, keeps it as failed, counts it and says "report failed".
TEST_F(RelayTest, DocumentRetriedThenFailedAndKept) {
  FakeHttpServer robot([](const FakeRequest&) { return FakeResponse{200, R"({"errcode":310000,"errmsg":"keywords"})"}; });
  RelayConfig c = config({channel(ChannelKind::kDingTalk, "dt", robot.url("/robot/send?access_token=T"))});
  c.retry.max_attempts = 3;
  {
    metrics::Registry first;
    auto relay = open(c, first);
    ASSERT_TRUE(relay);
    ASSERT_TRUE(relay->enqueue_document(report_document(2), {"dt"}));
  }  // up stops before sending
  metrics::Registry registry;
  auto relay = open(c, registry);
  ASSERT_TRUE(relay);
  EXPECT_EQ(relay->deliver_due(), 1);
  clock_.advance(999ms);
  EXPECT_EQ(relay->deliver_due(), 0);
  clock_.advance(1ms);
  EXPECT_EQ(relay->deliver_due(), 1);
  clock_.advance(2000ms);
  EXPECT_EQ(relay->deliver_due(), 1);
  clock_.advance(1h);
  EXPECT_EQ(relay->deliver_due(), 0);
  EXPECT_EQ(robot.requests().size(), 3u);
  const auto status = *relay->status();
  EXPECT_EQ(status.channels[0].failed, 1);
  EXPECT_NE(status.channels[0].last_error.find("errcode 310000"), std::string::npos);
  const std::string text = exposition(registry);
  EXPECT_NE(text.find("inferscope_notifications_total{channel=\"dt\",result=\"retried\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("inferscope_notifications_total{channel=\"dt\",result=\"failed\"} 1"), std::string::npos);
  std::lock_guard lock(events_mutex_);
  ASSERT_FALSE(events_.empty());
  EXPECT_EQ(events_.back().rfind("report_failed dt report failed: channel dt after 3 attempts: HTTP 200 errcode 310000", 0), 0u)
      << events_.back();
}

}  // namespace
}  // namespace inferscope::relay
