// `inferscope up` (INFERSCOPE_BINARY) following its targets' kinds while it runs, with Debian's
// Prometheus and Alertmanager: a serve that starts after up (3 s, or down for the first 60 s) gets
// the full serve rule set and its error-ratio alert fires; a target that switches from inferscope's
// names to a replayed vLLM recording (tests/dialect/testdata) gets vLLM's rules, while a target with an
// explicit kind on the same exposition keeps its rules.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "net/blocking_client.h"
#include "net/http_server.h"
#include "net/router.h"
#include "serve/server.h"
#include "up/child_process.h"
#include "alerts/rules_generator.h"
#include "up/stack_test_support.h"
#include "load_loop.h"
#include "up_process.h"

namespace inferscope::up {
namespace {

using namespace std::chrono_literals;
using testing::query_value;
using testing::LoadLoop;
using testing::TempDir;
using testing::UpProcess;
using testing::wait_until;

std::unique_ptr<serve::Server> start_serve(std::uint16_t port) {
  serve::ServerOptions o;
  o.port = port;
  o.engine.time_scale = 20;
  o.model_names = {"sim"};
  o.enable_admin = true;
  auto s = serve::Server::start(o);
  EXPECT_TRUE(s) << s.error().message;
  return s ? std::move(*s) : nullptr;
}

// expected_alerts lists the alerting rules the generator writes for a job of `kind`, sorted.
std::vector<std::string> expected_alerts(const std::string& job, dialect::DialectId kind) {
  alerts::RulesConfig config;
  config.targets.push_back({.job = job, .dialect = kind});
  auto generated = alerts::generate_rules(config);
  EXPECT_TRUE(generated) << generated.error().message;
  std::vector<std::string> names;
  if (!generated) return names;
  std::istringstream text(generated->files.at(1).text);
  for (std::string line; std::getline(text, line);) {
    if (const auto at = line.find("- alert: "); at != std::string::npos) names.push_back(line.substr(at + 9));
  }
  std::sort(names.begin(), names.end());
  return names;
}

// loaded_alerts lists the alerting rules Prometheus has loaded in the job's group, sorted.
std::vector<std::string> loaded_alerts(const std::string& prometheus, const std::string& job) {
  std::vector<std::string> names;
  auto reply = net::blocking_http_request("GET", prometheus + "/api/v1/rules?type=alert");
  if (!reply || reply->status != 200) return names;
  const auto j = nlohmann::json::parse(reply->body, nullptr, false);
  if (!j.is_object() || !j.contains("data")) return names;
  for (const auto& group : j["data"].value("groups", nlohmann::json::array())) {
    if (group.value("name", "") != "inferscope-target-" + job) continue;
    for (const auto& rule : group.value("rules", nlohmann::json::array())) names.push_back(rule.value("name", ""));
  }
  std::sort(names.begin(), names.end());
  return names;
}

nlohmann::json target_status(const testing::ReadyUrls& urls, const std::string& job) {
  auto reply = net::blocking_http_request("GET", urls.api + "/api/status");
  if (!reply || reply->status != 200) return nullptr;
  const auto status = nlohmann::json::parse(reply->body, nullptr, false);
  if (!status.is_object()) return nullptr;
  for (const auto& t : status.value("targets", nlohmann::json::array())) {
    if (t.value("job", "") == job) return t;
  }
  return nullptr;
}

std::string status_text(const testing::ReadyUrls& urls) {
  auto r = run_command(INFERSCOPE_BINARY, {"up", "--status", "--port", std::to_string(urls.api_port())}, 30s);
  return r ? r->output : r.error().message;
}

void stop_up(UpProcess& up) {
  ASSERT_EQ(::kill(up.process().pid(), SIGTERM), 0);
  EXPECT_TRUE(up.wait_line("inferscope up: stopped", 30s)) << up.output();
}

// late_serve: up first, serve on its target's port `late` after up started. Within 30 s of serve
// answering, the job has the full serve rule set in Prometheus, and an error_rate fault fires
// InferscopeErrorRatioHigh for it.
void late_serve(std::chrono::seconds late) {
  TempDir dir;
  // The port serve will have: taken by a first serve, given back, taken again later.
  std::uint16_t port = 0;
  {
    auto first = start_serve(0);
    ASSERT_TRUE(first);
    port = first->port();
  }
  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "targets:\n  - name: demo\n    url: http://127.0.0.1:" << port << "/metrics\n"
                        << "scrape_interval: 1s\n"
                           "alerts:\n  for:\n    InferscopeErrorRatioHigh: 0s\n";
  const auto up_started = std::chrono::steady_clock::now();
  UpProcess up({"up", "--config", config.string(), "--port", "0", "--prometheus-port", "0", "--alertmanager-port", "0",
                "--state-dir", (dir.path() / "state").string()});
  ASSERT_TRUE(up.started()) << up.start_error();
  const auto urls = up.wait_ready(60s);
  ASSERT_TRUE(urls) << up.output();
  EXPECT_TRUE(up.wait_line("target demo: kind unknown yet", 1s)) << up.output();
  if (std::chrono::steady_clock::now() + 5s < up_started + late) {
    // Still down: the status says since when, on the API and in `up --status`.
    nlohmann::json demo;
    ASSERT_TRUE(wait_until([&] { return (demo = target_status(*urls, "demo")).is_object(); }, 15s))
        << "Prometheus does not list the target\n" << up.output();
    EXPECT_EQ(demo.value("kind_note", "").rfind("kind unknown yet (not answering since 20", 0), 0u) << demo.dump();
    const std::string text = status_text(*urls);
    EXPECT_NE(text.find("kind unknown yet (not answering since 20"), std::string::npos) << text;
    EXPECT_TRUE(loaded_alerts(urls->prometheus, "demo") == std::vector<std::string>{alerts::kTargetDown})
        << "a target of unknown kind has only the generic alerts";
    // The dashboard's target list says the same (once Prometheus has scraped the job's `up`).
    EXPECT_TRUE(wait_until(
        [&] {
          auto meta = net::blocking_http_request("GET", urls->api + "/api/dashboard/meta");
          if (!meta || meta->status != 200) return false;
          const auto j = nlohmann::json::parse(meta->body, nullptr, false);
          if (!j.is_object()) return false;
          for (const auto& t : j.value("targets", nlohmann::json::array())) {
            if (t.value("job", "") == "demo") return t.value("note", "").starts_with("kind unknown yet (not answering since");
          }
          return false;
        },
        15s))
        << "the dashboard does not say that demo's kind is unknown";
  }
  std::this_thread::sleep_until(up_started + late);
  auto serve = start_serve(port);
  ASSERT_TRUE(serve);
  const auto answering = std::chrono::steady_clock::now();
  LoadLoop load(port);

  const std::vector<std::string> expected = expected_alerts("demo", dialect::DialectId::kInferscope);
  ASSERT_GT(expected.size(), 10u);
  const auto line = up.wait_line("target demo: detected inferscope, ", 30s);
  ASSERT_TRUE(line) << up.output();
  EXPECT_NE(line->find("target demo: detected inferscope, " + std::to_string(expected.size()) + " alerts"),
            std::string::npos)
      << *line;
  ASSERT_TRUE(wait_until([&] { return loaded_alerts(urls->prometheus, "demo") == expected; },
                         std::chrono::duration_cast<std::chrono::seconds>(answering + 30s - std::chrono::steady_clock::now())))
      << "Prometheus has not the serve rule set 30 s after serve answered\n" << up.output();
  std::printf("%s; serve rule set loaded %.1f s after serve answered\n", line->c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - answering).count());
  // Prometheus lists the target again once it applied the reload's new target labels.
  nlohmann::json demo;
  EXPECT_TRUE(wait_until(
      [&] {
        demo = target_status(*urls, "demo");
        return demo.is_object() && demo.value("dialect", "") == "inferscope" && !demo.contains("kind_note");
      },
      15s))
      << demo.dump();

  // Healthy traffic first, so the ratio starts below the threshold; then every request fails.
  std::this_thread::sleep_for(3s);
  auto injected = net::blocking_http_request("POST", "http://127.0.0.1:" + std::to_string(port) + "/admin/faults",
                                        R"({"error_rate": 1.0})", "application/json");
  ASSERT_TRUE(injected && injected->status == 200) << (injected ? injected->body : injected.error().message);
  EXPECT_TRUE(wait_until(
      [&] {
        return query_value(urls->prometheus,
                           R"(ALERTS{alertname="InferscopeErrorRatioHigh",job="demo",alertstate="firing"})") == 1.0;
      },
      60s))
      << up.output();
  stop_up(up);
}

// Tests that a serve started 3 s after up gets its rules and alerts without a restart of up.
TEST(UpLateTargetIntegrationTest, ServeStartedThreeSecondsAfterUp) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  late_serve(3s);
}

// Tests the same with the target down for the first 60 s (back-off must not leave it waiting).
TEST(UpLateTargetIntegrationTest, ServeDownForTheFirstMinute) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  late_serve(60s);
}

// SwitchingTarget answers /metrics with whatever exposition the test sets.
class SwitchingTarget {
 public:
  explicit SwitchingTarget(std::string exposition) : exposition_(std::move(exposition)) {
    router_.get("/metrics", [this](const net::Request&) {
      std::lock_guard lock(mutex_);
      net::Response r = net::Response::text(exposition_);
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      return r;
    });
    auto s = net::HttpServer::start({.port = 0, .log_name = "switching-target"}, router_.handler());
    EXPECT_TRUE(s) << s.error().message;
    if (s) server_ = std::move(*s);
  }
  void set(std::string exposition) {
    std::lock_guard lock(mutex_);
    exposition_ = std::move(exposition);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/metrics"; }
  bool running() const { return server_ != nullptr; }

 private:
  std::mutex mutex_;
  std::string exposition_;
  net::Router router_;
  std::unique_ptr<net::HttpServer> server_;
};

// Tests that a target switched from inferscope's names to a replayed vLLM recording gets vLLM's
// rules without a restart of up and the event line says so, while `--target NAME=KIND@URL` on the
// same exposition keeps its kind.
TEST(UpLateTargetIntegrationTest, TargetSwitchedToVllmNamesGetsVllmRules) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  TempDir dir;
  auto serve = start_serve(0);
  ASSERT_TRUE(serve);
  auto inferscope_names = net::blocking_http_request("GET", "http://127.0.0.1:" + std::to_string(serve->port()) + "/metrics");
  ASSERT_TRUE(inferscope_names && inferscope_names->status == 200);
  std::ifstream sample(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/dialect/testdata/vllm-0.11.0-qwen2.5-3b-metrics.txt");
  ASSERT_TRUE(sample) << "missing tests/dialect/testdata/vllm-0.11.0-qwen2.5-3b-metrics.txt";
  const std::string vllm_names((std::istreambuf_iterator<char>(sample)), std::istreambuf_iterator<char>());
  SwitchingTarget target(inferscope_names->body);
  ASSERT_TRUE(target.running());

  UpProcess up({"up", "--target", "demo=" + target.url(), "--target", "pinned=inferscope@" + target.url(), "--port", "0",
                "--prometheus-port", "0", "--alertmanager-port", "0", "--scrape-interval", "1s", "--state-dir",
                (dir.path() / "state").string()});
  ASSERT_TRUE(up.started()) << up.start_error();
  const auto urls = up.wait_ready(60s);
  ASSERT_TRUE(urls) << up.output();
  const std::vector<std::string> inferscope_alerts = expected_alerts("demo", dialect::DialectId::kInferscope);
  EXPECT_TRUE(up.wait_line("target demo: detected inferscope, " + std::to_string(inferscope_alerts.size()) + " alerts", 1s))
      << up.output();
  ASSERT_TRUE(wait_until([&] { return loaded_alerts(urls->prometheus, "demo") == inferscope_alerts; }, 30s))
      << up.output();
  ASSERT_TRUE(wait_until([&] { return query_value(urls->prometheus, "up{job=\"demo\"}") == 1.0; }, 30s));

  target.set(vllm_names);
  const std::vector<std::string> vllm_alerts = expected_alerts("demo", dialect::DialectId::kVllm);
  const auto line = up.wait_line("target demo: detected vllm, ", 30s);
  ASSERT_TRUE(line) << up.output();
  EXPECT_NE(line->find("target demo: detected vllm, " + std::to_string(vllm_alerts.size()) +
                       " alerts (was inferscope; families gained: vllm:"),
            std::string::npos)
      << *line;
  EXPECT_NE(line->find("; lost: inferscope_"), std::string::npos) << *line;
  std::printf("%s\n", line->c_str());
  EXPECT_TRUE(wait_until([&] { return loaded_alerts(urls->prometheus, "demo") == vllm_alerts; }, 30s)) << up.output();
  nlohmann::json demo;
  EXPECT_TRUE(wait_until(
      [&] {
        demo = target_status(*urls, "demo");
        return demo.is_object() && demo.value("dialect", "") == "vllm";
      },
      15s))
      << demo.dump();
  // The pinned target scrapes the same vLLM names but keeps the kind it was given.
  EXPECT_EQ(loaded_alerts(urls->prometheus, "pinned"), expected_alerts("pinned", dialect::DialectId::kInferscope));
  EXPECT_EQ(up.output().find("target pinned:"), std::string::npos) << up.output();
  stop_up(up);
}

}  // namespace
}  // namespace inferscope::up
