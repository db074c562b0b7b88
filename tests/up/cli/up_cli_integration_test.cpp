// Tests of `inferscope up` as a subprocess (INFERSCOPE_BINARY) with Debian's Prometheus,
// Alertmanager and promtool, scraping an in-process `inferscope serve` on loopback ports.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>

#include <fstream>
#include <sstream>

#include "dialect/dialect.h"
#include "promapi/prometheus_client.h"
#include "serve/server.h"
#include "sim_serve.h"
#include "net/blocking_client.h"
#include "up/child_process.h"
#include "up/stack_test_support.h"
#include "up_process.h"

namespace inferscope::up {
namespace {

using namespace std::chrono_literals;
using testing::process_alive;
using testing::query_value;
using testing::TempDir;
using testing::start_sim_serve;
using testing::UpProcess;
using testing::ephemeral_args;
using testing::wait_until;

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Tests that up starts Prometheus and Alertmanager, prints the ready line, scrapes an `auto`
// target detected as inferscope, answers --status, leaves no child behind when SIGKILLed, and
// finds its TSDB again when started anew on the same state dir.
TEST(UpCliIntegrationTest, ReadyScrapesStatusSigkillAndRestart) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  TempDir dir;
  auto serve = start_sim_serve();
  ASSERT_TRUE(serve);
  const std::string target = "sim=http://127.0.0.1:" + std::to_string(serve->port());
  const auto args = concat({"up", "--target", target}, ephemeral_args(dir));
  double sample_time = 0;
  {
    UpProcess up(args);
    ASSERT_TRUE(up.started()) << up.start_error();
    const auto urls = up.wait_ready(60s);
    ASSERT_TRUE(urls) << up.output();
    EXPECT_TRUE(urls->prometheus.starts_with("http://127.0.0.1:"));
    EXPECT_TRUE(urls->alertmanager.starts_with("http://127.0.0.1:"));
    ASSERT_TRUE(wait_until([&] { return query_value(urls->prometheus, "up{job=\"sim\"}") == 1.0; }, 30s))
        << up.output();
    ASSERT_TRUE(wait_until([&] { return query_value(urls->prometheus, "up{job=\"inferscope-up\"}") == 1.0; }, 30s))
        << "Prometheus does not scrape up's own /metrics";

    auto status_cmd = run_command(INFERSCOPE_BINARY, {"up", "--status", "--port", std::to_string(urls->api_port())}, 30s);
    ASSERT_TRUE(status_cmd.ok()) << status_cmd.error().message;
    EXPECT_TRUE(status_cmd->ok()) << status_cmd->output;
    EXPECT_NE(status_cmd->output.find("prometheus     running"), std::string::npos) << status_cmd->output;
    EXPECT_NE(status_cmd->output.find("alertmanager   running"), std::string::npos) << status_cmd->output;
    EXPECT_NE(status_cmd->output.find("sim              up      inferscope"), std::string::npos) << status_cmd->output;

    const nlohmann::json status = get_status(*urls);
    ASSERT_TRUE(status.is_object());
    std::vector<int> child_pids;
    for (const auto& c : status["children"]) child_pids.push_back(c["pid"].get<int>());
    ASSERT_EQ(child_pids.size(), 2u) << status.dump();
    for (int pid : child_pids) EXPECT_TRUE(process_alive(pid));

    auto client = promapi::PrometheusClient::create(urls->prometheus);
    auto sample = client->query("up{job=\"sim\"}");
    ASSERT_TRUE(sample.ok() && !sample->series.empty());
    sample_time = sample->series[0].points[0].time;

    ASSERT_EQ(::kill(up.process().pid(), SIGKILL), 0);
    EXPECT_TRUE(wait_until(
        [&] {
          for (int pid : child_pids) {
            if (process_alive(pid)) return false;
          }
          return true;
        },
        10s))
        << "a child of up survived its SIGKILL";
  }
  // A new up on the same state dir serves the samples scraped before the kill.
  UpProcess again(args);
  const auto urls = again.wait_ready(90s);
  ASSERT_TRUE(urls) << again.output();
  auto client = promapi::PrometheusClient::create(urls->prometheus);
  auto old = client->query("up{job=\"sim\"}", sample_time);
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->series.size(), 1u) << "TSDB not kept across restarts of up";
  ASSERT_EQ(::kill(again.process().pid(), SIGTERM), 0);
  EXPECT_TRUE(again.wait_line("inferscope up: stopped", 30s)) << again.output();
}

// Tests that a config error is one line naming file:line:column and the key, and exits non-zero.
TEST(UpCliIntegrationTest, BadConfigIsOneLineWithPositionAndKey) {
  TempDir dir;
  const auto file = dir.path() / "bad.yaml";
  std::ofstream(file) << "targets:\n  - url: http://127.0.0.1:1/metrics\n    knd: vllm\n";
  auto r = run_command(INFERSCOPE_BINARY, {"up", "--config", file.string()}, 30s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(std::count(r->output.begin(), r->output.end(), '\n'), 1) << r->output;
  EXPECT_NE(r->output.find("inferscope up: " + file.string() + ":3:5: key 'targets[0].knd': unknown key"),
            std::string::npos)
      << r->output;
}

// Tests that --check writes and validates the files, prints their paths and starts nothing.
TEST(UpCliIntegrationTest, CheckPrintsGeneratedPaths) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  TempDir dir;
  const auto file = dir.path() / "ok.yaml";
  std::ofstream(file) << "targets:\n  - name: vllm-a\n    url: http://127.0.0.1:1/metrics\n    kind: vllm\n"
                         "state_dir: " << (dir.path() / "state").string() << "\n";
  auto r = run_command(INFERSCOPE_BINARY, {"up", "--config", file.string(), "--check"}, 60s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->ok()) << r->output;
  const auto prometheus_yml = std::filesystem::canonical(dir.path()) / "state" / "config" / "prometheus.yml";
  const auto alertmanager_yml = std::filesystem::canonical(dir.path()) / "state" / "config" / "alertmanager.yml";
  EXPECT_NE(r->output.find("\n" + prometheus_yml.string() + "\n"), std::string::npos) << r->output;
  EXPECT_NE(r->output.find("\n" + alertmanager_yml.string() + "\n"), std::string::npos) << r->output;
  EXPECT_TRUE(std::filesystem::exists(prometheus_yml));
  EXPECT_NE(r->output.find("SUCCESS"), std::string::npos) << r->output;
  EXPECT_EQ(r->output.find("ready"), std::string::npos) << r->output;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "state" / "prometheus"));
}

// Tests that --kind and --target NAME=KIND@URL accept every kind of the dialect table (sglang and
// litellm were once refused by a hand-written list): each passes --check, which validates the
// flags, generates the rules for the kind and checks them with promtool, starting nothing. A kind
// the table does not know is refused in one line naming --kind.
TEST(UpCliIntegrationTest, EveryDialectKindPassesKindAndTargetFlags) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  TempDir dir;
  for (dialect::DialectId id : dialect::kAllDialects) {
    const std::string kind(dialect::to_string(id));
    auto r = run_command(INFERSCOPE_BINARY,
                         {"up", "--target", "flagged=http://127.0.0.1:1/metrics", "--kind", kind, "--target",
                          "named=" + kind + "@http://127.0.0.1:2/metrics", "--state-dir", (dir.path() / kind).string(),
                          "--check"},
                         60s);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->ok()) << kind << ": " << r->output;
    EXPECT_NE(r->output.find("inferscope up: check passed"), std::string::npos) << kind << ": " << r->output;
  }
  auto unknown = run_command(INFERSCOPE_BINARY, {"up", "--target", "t=http://127.0.0.1:1/metrics", "--kind", "vlm",
                                                 "--state-dir", (dir.path() / "vlm").string(), "--check"}, 30s);
  ASSERT_TRUE(unknown.ok()) << unknown.error().message;
  EXPECT_FALSE(unknown->ok());
  EXPECT_EQ(std::count(unknown->output.begin(), unknown->output.end(), '\n'), 1) << unknown->output;
  EXPECT_NE(unknown->output.find("--kind: vlm not in"), std::string::npos) << unknown->output;
}

// Tests that --export-grafana starts nothing and adds the Queue row (variable $queue_job) only
// when a redis target is given; a bad --target still fails with its one line.
TEST(UpCliIntegrationTest, ExportGrafanaHasTheQueueRowOnlyWithARedisTarget) {
  TempDir dir;
  auto vllm_dashboard = [&](const std::string& out) {
    std::ifstream in(dir.path() / out / "dashboards" / "inferscope-vllm.json");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  auto plain = run_command(INFERSCOPE_BINARY, {"up", "--export-grafana", (dir.path() / "plain").string()}, 30s);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_TRUE(plain->ok()) << plain->output;
  EXPECT_NE(vllm_dashboard("plain").find("\"Queue and capacity\""), std::string::npos);
  EXPECT_EQ(vllm_dashboard("plain").find("$queue_job"), std::string::npos);

  auto queued = run_command(INFERSCOPE_BINARY, {"up", "--export-grafana", (dir.path() / "queued").string(), "--target",
                                                "jobs=redis://127.0.0.1:6379/0"}, 30s);
  ASSERT_TRUE(queued.ok()) << queued.error().message;
  EXPECT_TRUE(queued->ok()) << queued->output;
  EXPECT_NE(vllm_dashboard("queued").find("\"title\": \"Queue\""), std::string::npos);
  EXPECT_NE(vllm_dashboard("queued").find("label_values(inferscope_queue_depth, job)"), std::string::npos);

  auto bad = run_command(INFERSCOPE_BINARY, {"up", "--export-grafana", (dir.path() / "bad").string(), "--target",
                                             "jobs=redis://:secret@127.0.0.1:6379/0"}, 30s);
  ASSERT_TRUE(bad.ok()) << bad.error().message;
  EXPECT_FALSE(bad->ok());
  EXPECT_EQ(bad->output.find("secret"), std::string::npos) << bad->output;
}

// Tests the remote-write topology: up runs Prometheus in agent mode and forwards to a central
// Prometheus (remote-write receiver on), where the target's samples can be queried.
TEST(UpCliIntegrationTest, AgentRemoteWritesToCentralPrometheus) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  TempDir dir;
  std::ofstream(dir.path() / "central.yml") << "global:\n  scrape_interval: 1s\n";
  std::atomic<std::uint16_t> central_port{0};
  auto central = ChildProcess::spawn(
      {.binary = "/usr/bin/prometheus",
       .args = {"--config.file=" + (dir.path() / "central.yml").string(),
                "--storage.tsdb.path=" + (dir.path() / "central").string(), "--web.listen-address=127.0.0.1:0",
                "--web.enable-remote-write-receiver"},
       .log_file = dir.path() / "central.log"},
      [&](std::string_view line) {
        if (auto p = parse_listening_port(line)) central_port = p;
      });
  ASSERT_TRUE(central.ok()) << central.error().message;
  ASSERT_TRUE(wait_until([&] { return central_port != 0; }, 20s));
  const std::string central_url = "http://127.0.0.1:" + std::to_string(central_port.load());

  auto serve = start_sim_serve();
  ASSERT_TRUE(serve);
  UpProcess up(concat({"up", "--target", "sim=http://127.0.0.1:" + std::to_string(serve->port()), "--kind",
                       "inferscope", "--agent", "--remote-write", central_url + "/api/v1/write"},
                      ephemeral_args(dir)));
  const auto urls = up.wait_ready(60s);
  ASSERT_TRUE(urls) << up.output();
  EXPECT_EQ(urls->alertmanager, "none");
  EXPECT_TRUE(wait_until([&] { return query_value(central_url, "up{job=\"sim\"}") == 1.0; }, 40s))
      << "no samples of the target reached the central Prometheus";
  // The whole exposition is forwarded, not only `up`.
  EXPECT_GT(query_value(central_url, "count({job=\"sim\",__name__=~\"inferscope_.+\"})").value_or(0), 10.0);
}

}  // namespace
}  // namespace inferscope::up
