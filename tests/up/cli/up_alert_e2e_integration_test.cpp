// End-to-end alerting through `inferscope up` (INFERSCOPE_BINARY): an error-rate fault injected
// into an in-process `inferscope serve` fires InferscopeErrorRatioHigh in the real Prometheus,
// Alertmanager posts to up's relay, and the relay delivers "firing" and then "resolved" to two fake
// robots on loopback: a generic webhook and a DingTalk robot that checks the signature with its own
// HMAC (OpenSSL), independently of the relay's code.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <fstream>
#include <thread>

#include <inferscope/metrics/metrics_server.h>
#include <inferscope/metrics/registry.h>

#include "net/blocking_client.h"
#include "net/http_server.h"
#include "net/router.h"
#include "serve/server.h"
#include "up/stack_test_support.h"
#include "load_loop.h"
#include "up_process.h"

namespace inferscope::up {
namespace {

using namespace std::chrono_literals;
using testing::LoadLoop;
using testing::TempDir;
using testing::UpProcess;
using testing::wait_until;

constexpr const char* kDingTalkSecret = "SECinferscope-e2e-secret";

std::string base64(const unsigned char* data, unsigned length) {
  std::string out(4 * ((length + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(length));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string query_param(std::string_view query, const std::string& name) {
  for (std::size_t start = 0; start <= query.size();) {
    std::size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view pair = query.substr(start, end - start);
    if (pair.starts_with(name + "=")) return percent_decode(pair.substr(name.size() + 1));
    start = end + 1;
  }
  return {};
}

// dingtalk_signature_ok recomputes DingTalk's sign = base64(HMAC-SHA256(secret, ts + "\n" + secret)).
bool dingtalk_signature_ok(std::string_view query) {
  const std::string timestamp = query_param(query, "timestamp");
  const std::string sign = query_param(query, "sign");
  if (timestamp.empty() || sign.empty()) return false;
  const std::string message = timestamp + "\n" + kDingTalkSecret;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  HMAC(EVP_sha256(), kDingTalkSecret, static_cast<int>(std::strlen(kDingTalkSecret)),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &length);
  return base64(mac, length) == sign;
}

// TimedFakeRobots (unlike fake_report_robots.h's FakeRobots) records what the relay delivers, with the arrival time.
struct TimedFakeRobots {
  struct Delivery {
    std::string robot;
    std::string body;
    std::chrono::steady_clock::time_point at;
  };
  std::mutex mutex;
  std::vector<Delivery> deliveries;
  std::atomic<int> bad_signatures{0};
  std::atomic<bool> webhook_fails{false};  // answer 500, as a robot that is down
  std::atomic<int> refused{0};
  net::Router router;
  std::unique_ptr<net::HttpServer> server;

  TimedFakeRobots() {
    router.post("/webhook", [this](const net::Request& r) {
      if (webhook_fails) {
        ++refused;
        return net::Response::json(R"({"ok":false})", 500);
      }
      record("webhook", r.body);
      return net::Response::json(R"({"ok":true})");
    });
    router.post("/dingtalk", [this](const net::Request& r) {
      if (!dingtalk_signature_ok(r.query)) {
        ++bad_signatures;
        return net::Response::json(R"({"errcode":310000,"errmsg":"sign not match"})");
      }
      record("dingtalk", r.body);
      return net::Response::json(R"({"errcode":0,"errmsg":"ok"})");
    });
    auto s = net::HttpServer::start({.port = 0, .log_name = "fake-robots"}, router.handler());
    if (s) server = std::move(*s);
  }
  void record(const std::string& robot, std::string_view body) {
    std::lock_guard lock(mutex);
    deliveries.push_back({robot, std::string(body), std::chrono::steady_clock::now()});
  }
  // body_of returns the first message body the robot received that mentions `alert`, or "".
  std::string body_of(const std::string& robot, const std::string& alert) {
    std::lock_guard lock(mutex);
    for (const Delivery& d : deliveries) {
      if (d.robot == robot && d.body.find(alert) != std::string::npos) return d.body;
    }
    return {};
  }
  // body_with returns the first message body the robot received that mentions `alert` and `text`.
  std::string body_with(const std::string& robot, const std::string& alert, const std::string& text) {
    std::lock_guard lock(mutex);
    for (const Delivery& d : deliveries) {
      if (d.robot == robot && d.body.find(alert) != std::string::npos && d.body.find(text) != std::string::npos) return d.body;
    }
    return {};
  }
  // find returns when the robot first received a message mentioning `alert` in `status`.
  std::optional<std::chrono::steady_clock::time_point> find(const std::string& robot, const std::string& alert,
                                                            const std::string& status) {
    std::lock_guard lock(mutex);
    for (const Delivery& d : deliveries) {
      if (d.robot != robot || d.body.find(alert) == std::string::npos) continue;
      if (robot == "webhook") {
        const auto j = nlohmann::json::parse(d.body, nullptr, false);
        if (j.is_discarded()) continue;
        for (const auto& n : j["notifications"]) {
          if (n.value("status", "") == status) return d.at;
        }
      } else if (d.body.find(status == "firing" ? "FIRING" : "RESOLVED") != std::string::npos) {
        return d.at;
      }
    }
    return std::nullopt;
  }
};

// Tests that a fault reaches both robots as a firing notification and its clearing as resolved.
TEST(UpAlertE2eIntegrationTest, FaultFiresThenResolvesAtFakeRobots) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  TempDir dir;
  TimedFakeRobots robots;
  ASSERT_TRUE(robots.server);
  const std::string robots_url = "http://127.0.0.1:" + std::to_string(robots.server->port());
  ::setenv("INFERSCOPE_E2E_WEBHOOK_URL", (robots_url + "/webhook").c_str(), 1);
  ::setenv("INFERSCOPE_E2E_DINGTALK_URL", (robots_url + "/dingtalk?access_token=e2e").c_str(), 1);
  ::setenv("INFERSCOPE_E2E_DINGTALK_SECRET", kDingTalkSecret, 1);

  serve::ServerOptions o;
  o.port = 0;
  o.engine.time_scale = 20;
  o.model_names = {"sim"};
  o.enable_admin = true;
  auto serve = serve::Server::start(o);
  ASSERT_TRUE(serve) << serve.error().message;
  const std::string serve_url = "http://127.0.0.1:" + std::to_string((*serve)->port());
  LoadLoop load((*serve)->port());

  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "targets:\n  - name: sim\n    url: " << serve_url << "/metrics\n    kind: inferscope\n"
                        << "scrape_interval: 1s\n"
                           "alertmanager:\n  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
                           "alerts:\n  for:\n    InferscopeErrorRatioHigh: 0s\n"
                           "notifications:\n  channels:\n"
                           "    - name: hook\n      kind: webhook\n      url: {env: INFERSCOPE_E2E_WEBHOOK_URL}\n"
                           "    - name: ding\n      kind: dingtalk\n      url: {env: INFERSCOPE_E2E_DINGTALK_URL}\n"
                           "      secret: {env: INFERSCOPE_E2E_DINGTALK_SECRET}\n";
  UpProcess up({"up", "--config", config.string(), "--port", "0", "--prometheus-port", "0", "--alertmanager-port", "0",
                "--state-dir", (dir.path() / "state").string()});
  const auto urls = up.wait_ready(60s);
  ASSERT_TRUE(urls) << up.output();
  // Let healthy traffic be scraped first, so the ratio starts below the threshold.
  std::this_thread::sleep_for(3s);

  const auto fault_at = std::chrono::steady_clock::now();
  auto injected = net::blocking_http_request("POST", serve_url + "/admin/faults", R"({"error_rate": 1.0})", "application/json");
  ASSERT_TRUE(injected && injected->status == 200) << (injected ? injected->body : injected.error().message);
  ASSERT_TRUE(wait_until([&] { return robots.find("webhook", "InferscopeErrorRatioHigh", "firing").has_value(); }, 60s))
      << up.output();
  ASSERT_TRUE(wait_until([&] { return robots.find("dingtalk", "InferscopeErrorRatioHigh", "firing").has_value(); }, 30s))
      << "bad DingTalk signatures: " << robots.bad_signatures.load() << "\n" << up.output();
  EXPECT_TRUE(up.wait_line("inferscope up: alert firing InferscopeErrorRatioHigh job=sim", 5s)) << up.output();
  const auto fired_after = *robots.find("webhook", "InferscopeErrorRatioHigh", "firing") - fault_at;
  // Prometheus and Alertmanager run on ports chosen at start (port 0): the message's links must
  // point at those real ports, not at "http://<hostname>:0/".
  const std::string message = robots.body_of("dingtalk", "InferscopeErrorRatioHigh");
  EXPECT_NE(message.find(urls->prometheus + "/graph?"), std::string::npos) << message;
  EXPECT_EQ(message.find(":0/"), std::string::npos) << message;
  EXPECT_EQ(message.find(":0)"), std::string::npos) << message;

  const auto clear_at = std::chrono::steady_clock::now();
  auto cleared = net::blocking_http_request("DELETE", serve_url + "/admin/faults");
  ASSERT_TRUE(cleared && cleared->status == 200);
  ASSERT_TRUE(wait_until([&] { return robots.find("webhook", "InferscopeErrorRatioHigh", "resolved").has_value(); }, 90s))
      << up.output();
  ASSERT_TRUE(wait_until([&] { return robots.find("dingtalk", "InferscopeErrorRatioHigh", "resolved").has_value(); }, 30s))
      << up.output();
  const auto resolved_after = *robots.find("webhook", "InferscopeErrorRatioHigh", "resolved") - clear_at;
  // The resolved message says what recovered, from the diagnosis the relay kept when the alert
  // fired: the alert's own expression before / during / after, not a fresh verdict of the
  // recovered window ("healthy: ... (within noise)").
  const std::string recovered = robots.body_with("dingtalk", "InferscopeErrorRatioHigh", "RESOLVED");
  EXPECT_NE(recovered.find("**Recovered**"), std::string::npos) << recovered;
  EXPECT_NE(recovered.find("It fired with "), std::string::npos) << recovered;
  EXPECT_NE(recovered.find("- `inferscope:errors:ratio"), std::string::npos) << recovered;
  EXPECT_NE(recovered.find("` (the alert's expression): before "), std::string::npos) << recovered;
  EXPECT_EQ(recovered.find("healthy:"), std::string::npos) << recovered;
  EXPECT_EQ(robots.bad_signatures.load(), 0);
  EXPECT_TRUE(up.wait_line("notification delivered channel=ding", 5s)) << up.output();
  std::printf("fault -> firing at webhook robot: %.1f s; clear -> resolved: %.1f s\n",
              std::chrono::duration<double>(fired_after).count(), std::chrono::duration<double>(resolved_after).count());
  ASSERT_EQ(::kill(up.process().pid(), SIGTERM), 0);
  EXPECT_TRUE(up.wait_line("inferscope up: stopped", 30s)) << up.output();
}

// Tests that a notification the robot could not take before up was SIGKILLed is delivered by the
// next up on the same state dir (the relay's outbox; Alertmanager already has it as sent).
TEST(UpAlertE2eIntegrationTest, PendingNotificationSurvivesSigkill) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  TempDir dir;
  TimedFakeRobots robots;
  ASSERT_TRUE(robots.server);
  robots.webhook_fails = true;
  ::setenv("INFERSCOPE_E2E_WEBHOOK_URL",
           ("http://127.0.0.1:" + std::to_string(robots.server->port()) + "/webhook").c_str(), 1);
  // First a target nobody listens on: InferscopeTargetDown fires at the first evaluation.
  const auto config = dir.path() / "up.yaml";
  const auto write_config = [&](const std::string& target_url) {
    std::ofstream(config) << "targets:\n  - name: gone\n    url: " << target_url << "\n    kind: inferscope\n"
                          << "scrape_interval: 1s\n"
                             "alertmanager:\n  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
                             "alerts:\n  for:\n    InferscopeTargetDown: 0s\n"
                             "notifications:\n  channels:\n"
                             "    - name: hook\n      kind: webhook\n      url: {env: INFERSCOPE_E2E_WEBHOOK_URL}\n";
  };
  write_config("http://127.0.0.1:1/metrics");
  const std::vector<std::string> args{"up", "--config", config.string(), "--port", "0", "--prometheus-port", "0",
                                      "--alertmanager-port", "0", "--state-dir", (dir.path() / "state").string()};
  {
    UpProcess up(args);
    ASSERT_TRUE(up.wait_ready(60s)) << up.output();
    ASSERT_TRUE(up.wait_line("inferscope up: alert firing InferscopeTargetDown job=gone", 60s)) << up.output();
    ASSERT_TRUE(wait_until([&] { return robots.refused.load() > 0; }, 30s)) << up.output();
    ASSERT_EQ(::kill(up.process().pid(), SIGKILL), 0);
    up.process().wait_for(10s);
  }
  EXPECT_FALSE(robots.find("webhook", "InferscopeTargetDown", "firing").has_value());
  robots.webhook_fails = false;
  // The second up scrapes a healthy target under the same job, and starts without the old TSDB and
  // Alertmanager data (whose stale `up == 0` could fire again): only the outbox can deliver now.
  std::filesystem::remove_all(dir.path() / "state" / "prometheus");
  std::filesystem::remove_all(dir.path() / "state" / "alertmanager");
  metrics::Registry healthy_registry;
  auto healthy = metrics::MetricsServer::start(healthy_registry, {.port = 0});
  ASSERT_TRUE(healthy.ok()) << healthy.error().message;
  write_config("http://127.0.0.1:" + std::to_string((*healthy)->port()) + "/metrics");
  UpProcess again(args);
  ASSERT_TRUE(again.wait_ready(60s)) << again.output();
  EXPECT_TRUE(wait_until([&] { return robots.find("webhook", "InferscopeTargetDown", "firing").has_value(); }, 60s))
      << again.output();
  ASSERT_EQ(::kill(again.process().pid(), SIGTERM), 0);
  EXPECT_TRUE(again.wait_line("inferscope up: stopped", 30s)) << again.output();
}

}  // namespace
}  // namespace inferscope::up
