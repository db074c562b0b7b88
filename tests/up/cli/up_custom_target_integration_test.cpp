// A hand-instrumented service as a `kind: custom` target of `inferscope up` (INFERSCOPE_BINARY):
// a FastAPI app with prometheus_client metrics under its own names (testdata/custom_llm_service.py,
// Debian's python3-fastapi, -uvicorn, -prometheus-client) under load from `inferscope bench`, its
// names mapped to roles in up's config. With a slowdown injected in the service: the e2e p99 rule
// on the mapped histogram fires in the real Prometheus, the dashboard's rows for the mapped roles
// have data through up's API, and the doctor names e2e, with the load and token evidence and the
// note that no stage breakdown exists for this target — on /api/doctor and in the alert's
// notification (the relay's diagnosis reads the mapping too).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>

#include <ctime>
#include <fstream>
#include <regex>
#include <thread>

#include "fake_report_robots.h"
#include "net/blocking_client.h"
#include "up/stack_test_support.h"
#include "up_process.h"

namespace inferscope::up {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TempDir;
using testing::UpProcess;
using testing::wait_until;

constexpr const char* kPython = "/usr/bin/python3";

// HouseService runs testdata/custom_llm_service.py and learns its port from "listening PORT".
// The child (its process group) is terminated on destruction, also when a test fails.
class HouseService {
 public:
  HouseService() {
    auto child = ChildProcess::spawn(
        {.binary = kPython, .args = {std::string(INFERSCOPE_SOURCE_DIR) + "/tests/up/cli/testdata/custom_llm_service.py"}},
        [this](std::string_view line) {
          std::lock_guard lock(mutex_);
          output_ += std::string(line) + "\n";
          static const std::regex kListening(R"(^listening (\d+)$)");
          std::match_results<std::string_view::const_iterator> m;
          if (std::regex_match(line.begin(), line.end(), m, kListening)) port_ = std::stoi(m[1].str());
        });
    if (child) child_ = std::move(*child);
    else output_ = child.error().message;
  }

  // url waits for the port and returns http://127.0.0.1:PORT, or "" when the service did not start.
  std::string url() {
    if (!child_ || !wait_until([this] { std::lock_guard lock(mutex_); return port_ != 0 || child_->try_wait(); }, 60s)) {
      return {};
    }
    std::lock_guard lock(mutex_);
    return port_ == 0 ? std::string() : "http://127.0.0.1:" + std::to_string(port_);
  }

  std::string output() {
    std::lock_guard lock(mutex_);
    return output_;
  }

 private:
  std::unique_ptr<ChildProcess> child_;
  std::mutex mutex_;
  std::string output_;
  int port_ = 0;
};

json get_json(const std::string& url) {
  auto r = net::blocking_http_request("GET", url, "", "", std::chrono::seconds(60));
  if (!r || r->status != 200) return json{{"http_error", r ? std::to_string(r->status) + " " + r->body : r.error().message}};
  return json::parse(r->body, nullptr, false);
}

std::string url_encode(std::string_view text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

constexpr const char* kRoles =
    "    kind: custom\n"
    "    model_label: model\n"
    "    roles:\n"
    "      e2e: llm_request_latency_seconds\n"
    "      requests: llm_requests_total\n"
    "      errors: llm_request_failures_total\n"
    "      prompt_tokens: llm_input_tokens_total\n"
    "      generation_tokens: llm_output_tokens_total\n"
    "      waiting: llm_queue_size\n";

// Tests that `up --check` generates promtool-clean rules from a custom mapping, recording the
// mapped histogram under the uniform names.
TEST(UpCustomTargetIntegrationTest, CheckGeneratesPromtoolCleanRulesFromTheMapping) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  TempDir dir;
  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "targets:\n  - name: house\n    url: http://127.0.0.1:1/metrics\n" << kRoles;
  UpProcess check({"up", "--check", "--config", config.string(), "--state-dir", (dir.path() / "state").string()});
  ASSERT_TRUE(check.started()) << check.start_error();
  ASSERT_TRUE(check.wait_line("inferscope up: check passed", 60s)) << check.output();
  const auto exit = check.process().wait_for(10s);
  ASSERT_TRUE(exit && exit->exit_code == 0) << check.output();
  std::ifstream rules(dir.path() / "state" / "config" / "rules" / "target-house.rules.yml");
  const std::string text((std::istreambuf_iterator<char>(rules)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("record: inferscope:e2e_seconds:p99"), std::string::npos) << check.output();
  EXPECT_NE(text.find("llm_request_latency_seconds_bucket"), std::string::npos) << text;
  EXPECT_NE(text.find("alert: InferscopeE2eP99OverSlo"), std::string::npos) << text;
  // What the mapping lacks is listed, not faked.
  EXPECT_NE(text.find("Roles its mapping lacks"), std::string::npos) << text;
  EXPECT_NE(text.find("InferscopeKvCacheFull is not generated"), std::string::npos) << text;
}

// Tests the whole path under load: rules fire on the mapped e2e histogram, the dashboard's rows
// for the mapped roles have data, and the doctor names e2e with the evidence it has.
TEST(UpCustomTargetIntegrationTest, SlowdownFiresRulesFillsPanelsAndIsDiagnosedOnE2e) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  ASSERT_TRUE(std::filesystem::exists(kPython)) << "install python3-fastapi python3-uvicorn python3-prometheus-client";
  TempDir dir;
  HouseService service;
  const std::string service_url = service.url();
  ASSERT_FALSE(service_url.empty()) << service.output();
  testing::FakeRobots robots;
  ASSERT_TRUE(robots.server);
  ::setenv("INFERSCOPE_CUSTOM_WEBHOOK_URL", ("http://127.0.0.1:" + std::to_string(robots.server->port()) + "/webhook").c_str(), 1);

  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "targets:\n  - name: house\n    url: " << service_url << "/metrics\n" << kRoles
                        << "scrape_interval: 1s\n"
                           "slo:\n  e2e_p99: 500ms\n"
                           "alerts:\n  for:\n    InferscopeE2eP99OverSlo: 0s\n"
                           "alertmanager:\n  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
                           "notifications:\n  channels:\n"
                           "    - name: hook\n      kind: webhook\n      url: {env: INFERSCOPE_CUSTOM_WEBHOOK_URL}\n";
  UpProcess up({"up", "--config", config.string(), "--port", "0", "--prometheus-port", "0", "--alertmanager-port", "0",
                "--state-dir", (dir.path() / "state").string()});
  const auto urls = up.wait_ready(60s);
  ASSERT_TRUE(urls) << up.output();

  // 25 output tokens at 8 ms each: 0.2 s per request, 8 requests/s at constant gaps (Poisson
  // arrivals differ by a third between a 25 s baseline and a 15 s window); x4 later.
  UpProcess bench({"bench", "--base-url", service_url, "--no-stream", "--request-rate", "8", "--arrival", "constant", "--duration", "240s",
                   "--random-input-len", "16", "--random-output-len", "25", "--no-progress", "--seed", "7"});
  ASSERT_TRUE(bench.started()) << bench.start_error();
  const std::string p99 = "inferscope:e2e_seconds:p99{job=\"house\"}";
  ASSERT_TRUE(wait_until([&] { return testing::query_value(urls->prometheus, p99).has_value(); }, 60s))
      << up.output() << bench.output() << service.output();
  // A baseline of healthy traffic, under the SLO.
  std::this_thread::sleep_for(30s);
  const auto healthy = testing::query_value(urls->prometheus, p99);
  ASSERT_TRUE(healthy);
  EXPECT_LT(*healthy, 0.5);

  const double slowed_at = static_cast<double>(std::time(nullptr));
  auto slowed = net::blocking_http_request("POST", service_url + "/admin/slowdown", R"({"factor": 4})", "application/json");
  ASSERT_TRUE(slowed && slowed->status == 200) << (slowed ? slowed->body : slowed.error().message);
  const std::string firing = "ALERTS{alertname=\"InferscopeE2eP99OverSlo\",job=\"house\",alertstate=\"firing\"}";
  ASSERT_TRUE(wait_until([&] { return testing::query_value(urls->prometheus, firing).has_value(); }, 90s))
      << "p99 now " << testing::query_value(urls->prometheus, p99).value_or(-1) << "\n" << up.output();

  // The dashboard's rows for the mapped roles read the service's own names, through up's API.
  const json data = get_json(urls->api + "/api/dashboard/data?range=15m&target=house");
  ASSERT_TRUE(data.contains("panels")) << data.dump();
  EXPECT_EQ(data.value("dialect", ""), "custom") << data.dump();
  for (const char* panel : {"e2e_latency", "request_rate", "success_error", "token_throughput", "queue_depth"}) {
    EXPECT_EQ(data["panels"][panel].value("status", ""), "ok") << panel << ": " << data["panels"][panel].dump();
  }
  // A role the mapping lacks says so on its panel (the KV panel still plots e2e p99 beside it).
  EXPECT_NE(data["panels"]["kv_usage"].dump().find("custom target exposes no kv_usage metric"), std::string::npos)
      << data["panels"]["kv_usage"].dump();

  // The doctor reads the mapping: 15 s of slowed traffic against the healthy 25 s before.
  const double at = slowed_at + 18;
  ASSERT_TRUE(wait_until([&] { return static_cast<double>(std::time(nullptr)) > at + 2; }, 30s));
  const std::string selector = url_encode("{job=\"house\"}");
  const json doctor = get_json(urls->api + "/api/doctor?window=15s&baseline=25s&at=" +
                               std::to_string(static_cast<long long>(at)) + "&selector=" + selector);
  ASSERT_EQ(doctor.value("verdict", ""), "degraded") << doctor.dump(2);
  ASSERT_FALSE(doctor["findings"].empty()) << doctor.dump(2);
  const json& top = doctor["findings"][0];
  EXPECT_EQ(top.value("stage", ""), "e2e") << doctor.dump(2);
  std::string evidence;
  for (const json& e : top["evidence"]) evidence += e.value("metric", "") + "\n";
  EXPECT_NE(evidence.find("llm_request_latency_seconds"), std::string::npos) << doctor.dump(2);
  EXPECT_NE(evidence.find("finished requests/s (rate of llm_requests_total)"), std::string::npos) << doctor.dump(2);
  EXPECT_NE(evidence.find("output tokens/s (rate of llm_output_tokens_total)"), std::string::npos) << doctor.dump(2);
  std::string notes;
  for (const json& n : doctor["notes"]) notes += n.get<std::string>() + "\n";
  EXPECT_NE(notes.find("no stage breakdown exists for this target"), std::string::npos) << notes;

  // The alert's notification carries the doctor's diagnosis through the mapping (without it the
  // service's names are no known dialect's: "no end-to-end latency metric found").
  std::string notified;
  ASSERT_TRUE(wait_until([&] {
    std::lock_guard lock(robots.mutex);
    for (const auto& [robot, body] : robots.received)
      if (robot == "webhook" && body.find("InferscopeE2eP99OverSlo") != std::string::npos) notified = body;
    return !notified.empty();
  }, 60s)) << up.output();
  const std::string text = json::parse(notified).value("text", "");
  EXPECT_NE(text.find("no stage breakdown exists for this target: llm_request_latency_seconds"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("no end-to-end latency metric found"), std::string::npos) << text;

  ASSERT_EQ(::kill(up.process().pid(), SIGTERM), 0);
  EXPECT_TRUE(up.wait_line("inferscope up: stopped", 30s)) << up.output();
}

}  // namespace
}  // namespace inferscope::up
