// The doctor's "where" against real processes: four simulated replicas of one model behind an
// in-process `inferscope gateway` (and, separately, scraped directly without one), scraped by real
// Prometheus, with one replica's decode slowed 3x (replica_slowdown at that instance) and then all
// four (decode_slowdown, fleet-wide); two
// models behind one gateway with one slowed (the finding localized to that model); and
// `inferscope doctor --scrape A --scrape B --scrape C` with one of three slowed. A data-parallel
// server (serve --data-parallel-size 4) with one rank slowed: the finding names that rank
// (where.engine), through Prometheus and with --scrape; all four slowed: no rank finding.
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <memory>

#include "doctor/diagnosis_format.h"
#include "doctor/doctor_api.h"
#include "doctor/doctor_scenario_support.h"
#include "gateway/gateway.h"
#include "promapi/prometheus_client.h"
#include "serve/engine/engine.h"
#include "serve/server.h"
#include "support/prometheus_process.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace inferscope::doctor {
namespace {

using Servers = std::vector<std::unique_ptr<serve::Server>>;

Servers start_replicas(const std::vector<std::string>& models) {
  Servers out;
  for (const std::string& model : models) {
    auto options = testing::scenario_server_options();
    options.model_names = {model};
    auto server = serve::Server::start(options);
    if (!server) {
      ADD_FAILURE() << server.error().message;
      continue;
    }
    out.push_back(std::move(*server));
  }
  return out;
}

std::string address(const serve::Server& s) { return "127.0.0.1:" + std::to_string(s.port()); }

// start_gateway puts a gateway in front of the replicas; `models[i]`, when given, routes that
// model to replica i.
std::unique_ptr<gateway::Gateway> start_gateway(const Servers& replicas, const std::vector<std::string>& models) {
  gateway::GatewayConfig c;
  c.port = 0;
  c.connect_timeout = std::chrono::milliseconds(2000);
  c.header_timeout = std::chrono::milliseconds(20000);
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    EXPECT_TRUE(add_upstream_url(c, "http://" + address(*replicas[i])));
    if (i < models.size()) c.models[models[i]].push_back(c.upstreams.back().name);
  }
  auto g = gateway::Gateway::start(std::move(c));
  if (!g) {
    ADD_FAILURE() << g.error().message;
    return nullptr;
  }
  return std::move(*g);
}

// prometheus_for scrapes every replica each second, as one job.
std::string prometheus_for(const Servers& replicas) {
  std::string targets;
  for (const auto& r : replicas) targets += (targets.empty() ? "'" : ", '") + address(*r) + "'";
  return "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: serve\n    static_configs:\n"
         "      - targets: [" + targets + "]\n";
}

// wait_for_series waits (bounded) until every replica has finished a request and been scraped:
// Prometheus starts a few seconds after it listens, slower on a loaded machine.
bool wait_for_series(const std::string& prometheus_url, std::size_t series) {
  auto client = promapi::PrometheusClient::create(prometheus_url);
  return client && inferscope::testing::wait_until(
                       [&] {
                         auto r = client->query("sum by (instance) (inferscope_request_duration_seconds_count)");
                         return r && r->series.size() >= series;
                       },
                       std::chrono::seconds(60), std::chrono::milliseconds(200));
}

Diagnosis doctor_at(const std::string& prometheus_url, double at, double window_s, double baseline_s) {
  DoctorRequest r;
  r.prometheus_url = prometheus_url;
  r.at = at;
  r.window_s = window_s;
  r.baseline_s = baseline_s;
  r.selector = "{job=\"serve\"}";
  auto d = run_doctor(r);
  EXPECT_TRUE(d) << d.error().message;
  return d ? *d : Diagnosis{};
}

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

constexpr double kWindow = 10, kBaseline = 16;

// slow_then_diagnose lets a baseline of steady load pass, slows the decode of `slowed` 3x, and
// diagnoses the window after it.
Diagnosis slow_then_diagnose(const std::string& prometheus_url, const std::vector<const serve::Server*>& slowed) {
  sleep_s(kBaseline + 2);
  for (const serve::Server* r : slowed) EXPECT_EQ(testing::set_faults(r->port(), R"({"decode_slowdown": 3})"), 200);
  sleep_s(kWindow + 1);
  return doctor_at(prometheus_url, testing::now_s(), kWindow, kBaseline);
}

// expect_one_then_all slows one replica's decode 3x and expects it named (replica_slowdown, its
// host:port, stage decode), then, back to health, slows all of them together and expects
// decode_slowdown and no replica_slowdown. The replicas are under load and scraped as job serve.
void expect_one_then_all(const std::string& prometheus_url, const Servers& replicas) {
  Diagnosis one = slow_then_diagnose(prometheus_url, {replicas[2].get()});
  ASSERT_EQ(one.verdict, "degraded") << to_text(one);
  ASSERT_FALSE(one.findings.empty());
  EXPECT_EQ(one.findings.front().cause, "replica_slowdown") << to_text(one);
  EXPECT_EQ(one.findings.front().where.instance, address(*replicas[2])) << to_text(one);
  EXPECT_EQ(one.findings.front().where.job, "serve");
  EXPECT_EQ(one.findings.front().where.model, "sim-a");
  EXPECT_EQ(one.findings.front().stage, "decode") << to_text(one);
  auto json = to_json(one);
  EXPECT_EQ(json["findings"][0]["where"]["instance"], address(*replicas[2]));

  ASSERT_EQ(testing::set_faults(replicas[2]->port(), "{}"), 200);
  // The slowed replica's backlog drains before the next baseline: on a loaded host the drain
  // outlasted the baseline's 2 s lead once, and a queue draining through the baseline (p95 0.5 s)
  // raised its noise floor above the change that followed.
  inferscope::testing::wait_until([&] { return replicas[2]->engine().stats().waiting == 0; }, std::chrono::seconds(30),
                                  std::chrono::milliseconds(100));
  std::vector<const serve::Server*> every;
  for (const auto& r : replicas) every.push_back(r.get());
  Diagnosis all = slow_then_diagnose(prometheus_url, every);
  ASSERT_EQ(all.verdict, "degraded") << to_text(all);
  EXPECT_EQ(all.findings.front().cause, "decode_slowdown") << to_text(all);
  for (const auto& f : all.findings) EXPECT_NE(f.cause, "replica_slowdown") << to_text(all);
}

// Tests four replicas of one model behind the gateway through Prometheus: one slowed is named,
// all four slowed together are not (expect_one_then_all).
TEST(DoctorWhereIntegrationTest, FourReplicasBehindGateway) {
  Servers replicas = start_replicas({"sim-a", "sim-a", "sim-a", "sim-a"});
  ASSERT_EQ(replicas.size(), 4u);
  auto gw = start_gateway(replicas, {});
  ASSERT_TRUE(gw);
  inferscope::testing::PrometheusProcess prom(prometheus_for(replicas));
  ASSERT_TRUE(prom.ok()) << prom.error();
  testing::LoadDriver driver(gw->port(), {.rate = 12, .prompt_words = 300, .max_tokens = 32});
  ASSERT_TRUE(wait_for_series(prom.url(), 4));
  expect_one_then_all(prom.url(), replicas);
  driver.stop();
  gw->stop();
  for (auto& r : replicas) r->stop();
}

// Tests the same four replicas scraped directly, without a gateway: each takes its own clients'
// load (a client-side balancer or one model per pod), Prometheus scrapes each host:port.
TEST(DoctorWhereIntegrationTest, FourReplicasScrapedDirectly) {
  Servers replicas = start_replicas({"sim-a", "sim-a", "sim-a", "sim-a"});
  ASSERT_EQ(replicas.size(), 4u);
  inferscope::testing::PrometheusProcess prom(prometheus_for(replicas));
  ASSERT_TRUE(prom.ok()) << prom.error();
  std::vector<std::unique_ptr<testing::LoadDriver>> drivers;
  for (const auto& r : replicas)
    drivers.push_back(std::make_unique<testing::LoadDriver>(r->port(), testing::LoadShape{.rate = 3, .prompt_words = 300, .max_tokens = 32}));
  ASSERT_TRUE(wait_for_series(prom.url(), 4));
  expect_one_then_all(prom.url(), replicas);
  for (auto& d : drivers) d->stop();
  for (auto& r : replicas) r->stop();
}

// Tests two models behind one gateway, one slowed: the finding is localized to that model.
TEST(DoctorWhereIntegrationTest, OneModelOfTwoBehindGateway) {
  Servers replicas = start_replicas({"sim-a", "sim-b"});
  ASSERT_EQ(replicas.size(), 2u);
  auto gw = start_gateway(replicas, {"sim-a", "sim-b"});
  ASSERT_TRUE(gw);
  inferscope::testing::PrometheusProcess prom(prometheus_for(replicas));
  ASSERT_TRUE(prom.ok()) << prom.error();
  testing::LoadDriver a(gw->port(), {.rate = 5, .prompt_words = 300, .max_tokens = 32, .model = "sim-a"});
  testing::LoadDriver b(gw->port(), {.rate = 5, .prompt_words = 300, .max_tokens = 32, .model = "sim-b"});
  ASSERT_TRUE(wait_for_series(prom.url(), 2));

  Diagnosis d = slow_then_diagnose(prom.url(), {replicas[1].get()});
  a.stop();
  b.stop();
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  EXPECT_EQ(d.findings.front().where.model, "sim-b") << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "decode_slowdown") << to_text(d);
  gw->stop();
  for (auto& r : replicas) r->stop();
}

int run_cli(const std::string& args, std::string* out) {
  return testing::run_command(std::string(INFERSCOPE_BINARY) + " " + args, out);
}

// Tests `doctor --scrape A --scrape B --scrape C` with one of three replicas slowed mid-run.
TEST(DoctorWhereIntegrationTest, ScrapeThreeReplicasOneSlowed) {
  Servers replicas = start_replicas({"sim-a", "sim-a", "sim-a"});
  ASSERT_EQ(replicas.size(), 3u);
  std::vector<std::unique_ptr<testing::LoadDriver>> drivers;
  std::string args = "doctor --duration 16s --interval 500ms --format json";
  for (const auto& r : replicas) {
    drivers.push_back(std::make_unique<testing::LoadDriver>(r->port(), testing::LoadShape{.rate = 4, .prompt_words = 300}));
    args += " --scrape http://" + address(*r) + "/metrics";
  }
  sleep_s(1);
  std::string out;
  auto run = std::async(std::launch::async, [&] { return run_cli(args, &out); });
  sleep_s(8);
  ASSERT_EQ(testing::set_faults(replicas[1]->port(), R"({"decode_slowdown": 3})"), 200);
  int code = run.get();
  for (auto& d : drivers) d->stop();
  EXPECT_EQ(code, 1) << out;
  auto json = nlohmann::json::parse(out.substr(std::min(out.size(), out.find('{'))), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out;
  ASSERT_FALSE(json["findings"].empty()) << out;
  EXPECT_EQ(json["findings"][0]["cause"], "replica_slowdown") << out;
  EXPECT_EQ(json["findings"][0]["where"]["instance"], address(*replicas[1])) << out;
  EXPECT_EQ(json["findings"][0]["stage"], "decode") << out;
  for (auto& r : replicas) r->stop();
}

// Tests the recommended workflow on a fleet: a baseline saved with --save-baseline while three
// replicas are healthy, then one replica's prefill x5 while every replica gets prompts x3: with
// --baseline-file the slowed replica is replica_slowdown [prefill] by its own saved baseline, and
// with a file that holds no targets (saved before they were kept) by its peers in the window.
TEST(DoctorWhereIntegrationTest, SavedBaselineKeepsTheFleet) {
  Servers replicas = start_replicas({"sim-a", "sim-a", "sim-a"});
  ASSERT_EQ(replicas.size(), 3u);
  inferscope::testing::TempDir dir("where-baseline");
  const std::string saved = (dir.path() / "healthy.json").string(), old = (dir.path() / "old.json").string();
  std::string urls;
  for (const auto& r : replicas) urls += " --scrape http://" + address(*r) + "/metrics";
  std::vector<std::unique_ptr<testing::LoadDriver>> drivers;
  for (const auto& r : replicas)
    drivers.push_back(std::make_unique<testing::LoadDriver>(r->port(), testing::LoadShape{.rate = 3, .prompt_words = 200}));
  sleep_s(1);
  std::string out;
  ASSERT_EQ(run_cli("doctor --duration 8s --interval 500ms --format json --save-baseline " + saved + urls, &out), 0)
      << out;
  {
    nlohmann::json j;
    std::ifstream(saved) >> j;
    EXPECT_EQ(j["targets"].size(), 3u);
    j.erase("targets");
    std::ofstream(old) << j.dump();
  }
  for (auto& d : drivers) d->stop();
  drivers.clear();
  for (const auto& r : replicas)
    drivers.push_back(std::make_unique<testing::LoadDriver>(r->port(), testing::LoadShape{.rate = 3, .prompt_words = 600}));
  ASSERT_EQ(testing::set_faults(replicas[2]->port(), R"({"prefill_slowdown": 5})"), 200);
  sleep_s(2);
  for (const std::string& file : {saved, old}) {
    out.clear();
    int code = run_cli("doctor --duration 8s --interval 500ms --format json --baseline-file " + file + urls, &out);
    EXPECT_EQ(code, 1) << file << "\n" << out;
    auto json = nlohmann::json::parse(out.substr(std::min(out.size(), out.find('{'))), nullptr, false);
    ASSERT_FALSE(json.is_discarded()) << out;
    ASSERT_FALSE(json["findings"].empty()) << out;
    EXPECT_EQ(json["findings"][0]["cause"], "replica_slowdown") << file << "\n" << out;
    EXPECT_EQ(json["findings"][0]["where"]["instance"], address(*replicas[2])) << file << "\n" << out;
    EXPECT_EQ(json["findings"][0]["stage"], "prefill") << file << "\n" << out;
  }
  for (auto& d : drivers) d->stop();
  for (auto& r : replicas) r->stop();
}

// start_dp_server starts one server of four data-parallel ranks (the scenario settings per rank).
std::unique_ptr<serve::Server> start_dp_server() {
  auto options = testing::scenario_server_options();
  options.data_parallel_size = 4;
  auto server = serve::Server::start(options);
  if (!server) {
    ADD_FAILURE() << server.error().message;
    return nullptr;
  }
  return std::move(*server);
}

// Tests one slowed rank of four through Prometheus: rank 2's steps x4 at ~5 req/s over the
// server is replica_slowdown at that instance with where.engine "2"; then, back to health, all
// four ranks slowed x4 together are degraded with no finding that names a rank.
TEST(DoctorWhereIntegrationTest, DataParallelRankSlowedPrometheus) {
  auto server = start_dp_server();
  ASSERT_TRUE(server);
  Servers one;
  one.push_back(std::move(server));
  inferscope::testing::PrometheusProcess prom(prometheus_for(one));
  ASSERT_TRUE(prom.ok()) << prom.error();
  testing::LoadDriver driver(one[0]->port(), {.rate = 5, .prompt_words = 300, .max_tokens = 32});
  ASSERT_TRUE(wait_for_series(prom.url(), 1));
  sleep_s(kBaseline + 2);
  ASSERT_EQ(testing::set_faults(one[0]->port(), R"({"engine_slowdown": {"engine": 2, "factor": 4}})"), 200);
  sleep_s(kWindow + 1);
  Diagnosis d = doctor_at(prom.url(), testing::now_s(), kWindow, kBaseline);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().cause, "replica_slowdown") << to_text(d);
  EXPECT_EQ(d.findings.front().where.engine, "2") << to_text(d);
  EXPECT_EQ(d.findings.front().where.instance, address(*one[0])) << to_text(d);
  EXPECT_EQ(to_json(d)["findings"][0]["where"]["engine"], "2");

  ASSERT_EQ(testing::set_faults(one[0]->port(), R"({"clear": true})"), 200);
  sleep_s(kBaseline + 2);
  ASSERT_EQ(testing::set_faults(one[0]->port(), R"({"decode_slowdown": 4, "prefill_slowdown": 4})"), 200);
  sleep_s(kWindow + 1);
  Diagnosis all = doctor_at(prom.url(), testing::now_s(), kWindow, kBaseline);
  driver.stop();
  ASSERT_EQ(all.verdict, "degraded") << to_text(all);
  for (const auto& f : all.findings) {
    EXPECT_TRUE(f.where.engine.empty()) << to_text(all);
    EXPECT_NE(f.cause, "replica_slowdown") << to_text(all);
  }
  one[0]->stop();
}

// Tests the same with `doctor --scrape` of the one server: rank 2 slowed x4 mid-run is named.
TEST(DoctorWhereIntegrationTest, DataParallelRankSlowedScrape) {
  auto server = start_dp_server();
  ASSERT_TRUE(server);
  testing::LoadDriver driver(server->port(), {.rate = 5, .prompt_words = 300, .max_tokens = 32});
  sleep_s(1);
  std::string out;
  auto run = std::async(std::launch::async, [&] {
    return run_cli("doctor --duration 16s --interval 500ms --format json --scrape http://" + address(*server) + "/metrics",
                   &out);
  });
  sleep_s(8);
  ASSERT_EQ(testing::set_faults(server->port(), R"({"engine_slowdown": {"engine": 2, "factor": 4}})"), 200);
  int code = run.get();
  driver.stop();
  EXPECT_EQ(code, 1) << out;
  auto json = nlohmann::json::parse(out.substr(std::min(out.size(), out.find('{'))), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out;
  ASSERT_FALSE(json["findings"].empty()) << out;
  EXPECT_EQ(json["findings"][0]["cause"], "replica_slowdown") << out;
  EXPECT_EQ(json["findings"][0]["where"]["engine"], "2") << out;
  EXPECT_EQ(json["findings"][0]["where"]["instance"], address(*server)) << out;
  server->stop();
}

}  // namespace
}  // namespace inferscope::doctor
