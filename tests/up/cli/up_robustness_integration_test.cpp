// Robustness of `inferscope up` (INFERSCOPE_BINARY) with Debian's Prometheus, Alertmanager and
// node-exporter on loopback ephemeral ports: a stalled (SIGSTOPped) Prometheus does not stall
// Alertmanager's webhook or /metrics, and `--node-exporter` runs, scrapes, restarts and cleans up
// Debian's node-exporter.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "serve/server.h"
#include "net/blocking_client.h"
#include "up/stack_test_support.h"
#include "support/stopped_process.h"
#include "up_process.h"

namespace inferscope::up {
namespace {

using namespace std::chrono_literals;
using testing::child_of;
using testing::get_status;
using testing::process_alive;
using testing::TempDir;
using testing::UpProcess;
using testing::ephemeral_args;
using testing::wait_until;

// RawRequest writes one HTTP request on its own connection at once and reads the answer later,
// so the test knows the request is at the server before it goes on.
class RawRequest {
 public:
  RawRequest(std::uint16_t port, const std::string& request) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{60, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
          ::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size());
  }
  ~RawRequest() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return ok_; }
  // answer reads until the server closes (requests carry Connection: close) or 60 s pass.
  std::string answer() {
    std::string out;
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      out.append(buffer, static_cast<std::size_t>(n));
    }
    return out;
  }

 private:
  int fd_ = -1;
  bool ok_ = false;
};

std::string get_request(const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
}

constexpr const char* kWebhookBody = R"({"receiver":"inferscope","status":"firing","alerts":[{"status":"firing",
 "labels":{"alertname":"StalledPrometheusTest","severity":"warning","job":"sim"},"annotations":{"summary":"test"},
 "startsAt":"2026-11-30T03:26:28.51Z","endsAt":"0001-01-01T00:00:00Z",
 "generatorURL":"http://stalled-host:0/graph?g0.expr=up","fingerprint":"5a1ed0000000f00d"}],
 "groupLabels":{"alertname":"StalledPrometheusTest"},"commonLabels":{"alertname":"StalledPrometheusTest"},
 "commonAnnotations":{},"externalURL":"http://stalled-host:0","version":"4",
 "groupKey":"{}:{alertname=\"StalledPrometheusTest\"}","truncatedAlerts":0})";

// Tests that with Prometheus SIGSTOPped, while calls that wait on it (/api/status, /api/alerts,
// /api/doctor, /api/dashboard/data) hang until their timeouts, Alertmanager's webhook is stored
// (200) and /metrics answers before any of those calls has returned; and that the hung calls do
// return once Prometheus runs again.
TEST(UpRobustnessIntegrationTest, StalledPrometheusDoesNotStallWebhookOrMetrics) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  TempDir dir;
  serve::ServerOptions o;
  o.port = 0;
  o.model_names = {"sim"};
  auto serve = serve::Server::start(o);
  ASSERT_TRUE(serve) << serve.error().message;
  const std::string target = "sim=http://127.0.0.1:" + std::to_string((*serve)->port()) + "/metrics";
  std::vector<std::string> args = {"up", "--target", target};
  for (const std::string& a : ephemeral_args(dir)) args.push_back(a);
  UpProcess up(args);
  ASSERT_TRUE(up.started()) << up.start_error();
  const auto urls = up.wait_ready(60s);
  ASSERT_TRUE(urls) << up.output();
  const nlohmann::json prometheus = child_of(get_status(*urls), "prometheus");
  ASSERT_TRUE(prometheus.is_object()) << up.output();
  // Resumed when the test ends, also on failure (up then stops it).
  inferscope::testing::StoppedProcess stalled(prometheus["pid"].get<int>(), 10s);
  ASSERT_TRUE(stalled.stopped()) << "Prometheus did not stop";

  const std::uint16_t port = urls->api_port();
  const std::vector<std::string> hung_paths = {"/api/status", "/api/alerts", "/api/doctor?window=5m",
                                               "/api/dashboard/data?range=15m", "/api/status", "/api/dashboard/meta"};
  std::vector<std::unique_ptr<RawRequest>> hung;
  for (const std::string& path : hung_paths) {
    hung.push_back(std::make_unique<RawRequest>(port, get_request(path)));
    ASSERT_TRUE(hung.back()->ok()) << path;
  }
  std::vector<std::string> hung_answers(hung.size());
  // Which calls have returned: a failure names them, and prints their answers once every reader is
  // done (one failed run on a loaded machine said only "1 of 6").
  std::vector<std::atomic<bool>> hung_done(hung.size());
  std::vector<std::thread> readers;
  for (std::size_t i = 0; i < hung.size(); ++i) {
    readers.emplace_back([&, i] {
      hung_answers[i] = hung[i]->answer();
      hung_done[i] = true;
    });
  }
  auto returned_calls = [&] {
    std::vector<std::size_t> returned;
    for (std::size_t i = 0; i < hung.size(); ++i) {
      if (hung_done[i]) returned.push_back(i);
    }
    return returned;
  };
  auto paths_of = [&](const std::vector<std::size_t>& calls) {
    std::string paths;
    for (std::size_t i : calls) paths += " " + hung_paths[i];
    return paths;
  };

  const auto webhook_sent = std::chrono::steady_clock::now();
  RawRequest webhook(port, "POST /api/alertmanager/webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           "Content-Length: " + std::to_string(std::strlen(kWebhookBody)) +
                           "\r\nConnection: close\r\n\r\n" + kWebhookBody);
  ASSERT_TRUE(webhook.ok());
  const std::string stored = webhook.answer();
  const std::vector<std::size_t> returned_before_webhook = returned_calls();
  const double webhook_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - webhook_sent).count();
  RawRequest metrics(port, get_request("/metrics"));
  ASSERT_TRUE(metrics.ok());
  const std::string scraped = metrics.answer();
  const std::vector<std::size_t> returned_before_metrics = returned_calls();

  EXPECT_NE(stored.find("HTTP/1.1 200"), std::string::npos) << stored;
  EXPECT_NE(scraped.find("HTTP/1.1 200"), std::string::npos) << scraped.substr(0, 300);
  EXPECT_NE(scraped.find("inferscope_up_child_restarts_total"), std::string::npos) << scraped.substr(0, 300);
  EXPECT_TRUE(returned_before_webhook.empty())
      << "the webhook was answered only after a call stalled on Prometheus returned:" << paths_of(returned_before_webhook);
  EXPECT_TRUE(returned_before_metrics.empty())
      << "/metrics was answered only after a call stalled on Prometheus returned:" << paths_of(returned_before_metrics);

  const double stalled_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - webhook_sent).count();
  stalled.resume();
  for (std::thread& t : readers) t.join();
  std::printf("with Prometheus stopped and %zu calls waiting on it: webhook stored in %.1f ms, /metrics answered "
              "%.1f ms after the webhook was sent; %d of those calls had returned by then\n",
              hung.size(), webhook_ms, stalled_ms, static_cast<int>(returned_before_metrics.size()));
  for (std::size_t i = 0; i < hung_answers.size(); ++i) {
    EXPECT_TRUE(hung_answers[i].starts_with("HTTP/1.1 ")) << hung_paths[i] << ": " << hung_answers[i];
  }
  for (std::size_t i : returned_before_metrics) {
    ADD_FAILURE() << hung_paths[i] << " returned while Prometheus was stopped: "
                  << hung_answers[i].substr(0, hung_answers[i].find("\r\n\r\n") + 200);
  }
  ASSERT_EQ(::kill(up.process().pid(), SIGTERM), 0);
  EXPECT_TRUE(up.wait_line("inferscope up: stopped", 30s)) << up.output();
}

// Tests that `up --node-exporter` starts Debian's node-exporter on an ephemeral port, that its
// Prometheus scrapes it (target up, kind node, node_* series), that a killed node-exporter is
// restarted and scraped again, and that none is left running after up exits. The config also sets
// external_urls (a proxy path): Prometheus gets it as --web.external-url and up still reaches
// both children at their root.
TEST(UpRobustnessIntegrationTest, NodeExporterIsScrapedRestartedAndGone) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kNodeExporter}));
  TempDir dir;
  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "external_urls:\n  prometheus: http://proxy.invalid:8080/prom/\n"
                           "  alertmanager: http://proxy.invalid:8080/am/\n";
  std::vector<std::string> args = {"up", "--node-exporter", "--config", config.string()};
  for (const std::string& a : ephemeral_args(dir)) args.push_back(a);
  UpProcess up(args);
  ASSERT_TRUE(up.started()) << up.start_error();
  const auto urls = up.wait_ready(60s);
  ASSERT_TRUE(urls) << up.output();
  auto flags = net::blocking_http_request("GET", urls->prometheus + "/api/v1/status/flags", {}, {}, 10s);
  ASSERT_TRUE(flags && flags->status == 200) << (flags ? flags->body : flags.error().message);
  const auto flag_values = nlohmann::json::parse(flags->body, nullptr, false);
  ASSERT_TRUE(flag_values.is_object()) << flags->body;
  EXPECT_EQ(flag_values["data"].value("web.external-url", ""), "http://proxy.invalid:8080/prom/") << flags->body;

  const nlohmann::json first = child_of(get_status(*urls), "node-exporter");
  ASSERT_TRUE(first.is_object()) << up.output();
  const int first_pid = first["pid"].get<int>();
  const int node_port = first["port"].get<int>();
  EXPECT_TRUE(first["running"].get<bool>());
  EXPECT_GT(node_port, 0);
  EXPECT_TRUE(process_alive(first_pid));
  const auto node_target_up = [&] {
    const nlohmann::json status = get_status(*urls);
    if (!status.is_object()) return false;
    for (const auto& t : status["targets"]) {
      if (t.value("kind", "") == "node" && t.value("health", "") == "up" &&
          t.value("url", "").find(":" + std::to_string(node_port) + "/") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  ASSERT_TRUE(wait_until(node_target_up, 30s)) << get_status(*urls).dump() << "\n" << up.output();
  EXPECT_TRUE(wait_until([&] { return testing::query_value(urls->prometheus, "count(node_cpu_seconds_total{job=\"node\"})") > 0; },
                         30s))
      << "no node_* series scraped from node-exporter";

  ASSERT_EQ(::kill(first_pid, SIGKILL), 0);
  ASSERT_TRUE(up.wait_line("inferscope up: node-exporter restarted", 60s)) << up.output();
  int second_pid = 0;
  ASSERT_TRUE(wait_until(
      [&] {
        const nlohmann::json c = child_of(get_status(*urls), "node-exporter");
        if (!c.is_object() || !c.value("running", false) || c.value("restarts", 0) < 1) return false;
        second_pid = c["pid"].get<int>();
        return second_pid != first_pid && c["port"].get<int>() == node_port;
      },
      30s))
      << get_status(*urls).dump();
  EXPECT_TRUE(process_alive(second_pid));
  EXPECT_TRUE(wait_until(node_target_up, 30s)) << "the restarted node-exporter is not scraped";

  ASSERT_EQ(::kill(up.process().pid(), SIGTERM), 0);
  EXPECT_TRUE(up.wait_line("inferscope up: stopped", 30s)) << up.output();
  EXPECT_TRUE(wait_until([&] { return !process_alive(second_pid); }, 10s)) << "node-exporter outlived up";
}

}  // namespace
}  // namespace inferscope::up
