// The doctor against real incidents: inferscope serve under steady streaming load, real
// Prometheus scraping every second, then one change (a fault through /admin/faults or a change
// of the load's shape) at two magnitudes each. The top finding must name the expected cause and
// stage. Scenarios run concurrently (one server each, one Prometheus for all) to keep CI short.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <future>
#include <iostream>
#include <set>

#include "doctor/diagnosis_format.h"
#include "doctor/doctor_api.h"
#include "doctor/doctor_scenario_support.h"
#include "support/prometheus_process.h"

namespace inferscope::doctor {
namespace {

using testing::LoadShape;

struct ScenarioCase {
  std::string name;
  std::string faults;                       // /admin/faults body at the change ("" = none)
  std::function<LoadShape(LoadShape)> load; // new load shape at the change (null = unchanged)
  std::set<std::string> causes;             // accepted top cause ("healthy" = verdict healthy)
  std::set<std::string> stages;             // accepted stage of the top finding
  std::set<std::string> also;               // causes that must also be reported (combined causes)
  std::function<LoadShape(LoadShape)> base; // baseline load shape (null = the default)
  std::function<LoadShape(LoadShape)> extra; // a second stream started at the change (null = none)
  bool default_capacity = false;              // the profile's own batch cap and KV cache (as `serve` runs)
  std::set<std::string> absent;               // causes that must not be reported
  std::function<void(serve::ServerOptions&)> server;  // server options beyond the suite's (null = none)
};

struct ScenarioOutcome {
  std::string name;
  bool pass = false;
  std::string verdict, top_cause, top_stage, detail;
};

constexpr double kBaselineS = 14, kIncidentS = 10, kScenarioWarmupS = 4;

ScenarioOutcome run_case(const ScenarioCase& c, std::uint16_t port, const std::string& job, const std::string& prom_url) {
  ScenarioOutcome out;
  out.name = c.name;
  LoadShape base;
  if (c.base) base = c.base(base);
  testing::LoadDriver driver(port, base);
  std::this_thread::sleep_for(std::chrono::duration<double>(kScenarioWarmupS + kBaselineS));
  double change = testing::now_s();
  if (!c.faults.empty()) {
    EXPECT_EQ(testing::set_faults(port, c.faults), 200) << c.name;
  }
  if (c.load) driver.set_shape(c.load(base));
  std::unique_ptr<testing::LoadDriver> extra;
  if (c.extra) extra = std::make_unique<testing::LoadDriver>(port, c.extra(base));
  std::this_thread::sleep_for(std::chrono::duration<double>(kIncidentS + 1.5));
  DoctorRequest request;
  request.prometheus_url = prom_url;
  request.at = change + kIncidentS;
  request.window_s = kIncidentS;
  request.baseline_s = kBaselineS;
  request.selector = "{job=\"" + job + "\"}";
  auto d = run_doctor(request);
  driver.stop();
  if (extra) extra->stop();
  if (!d) {
    out.detail = d.error().message;
    return out;
  }
  out.verdict = d->verdict;
  if (!d->findings.empty()) {
    out.top_cause = d->findings.front().cause;
    out.top_stage = d->findings.front().stage;
  }
  bool ok;
  if (c.causes.count("healthy")) {
    ok = d->verdict == "healthy";
  } else {
    ok = d->verdict == "degraded" && c.causes.count(out.top_cause) && (c.stages.empty() || c.stages.count(out.top_stage));
    for (const auto& also : c.also) {
      bool found = false;
      for (const auto& f : d->findings) found |= f.cause == also;
      ok = ok && found;
    }
    for (const auto& f : d->findings) ok = ok && !c.absent.count(f.cause);
  }
  out.pass = ok;
  out.detail = to_text(*d);
  if (std::getenv("DOCTOR_VERBOSE")) {
    nlohmann::json j = to_json(*d);
    for (const auto& sig : j["signals"]) out.detail += "  signal " + sig.dump() + "\n";
    for (const auto& c : j["considered"]) out.detail += "  considered " + c.dump() + "\n";
  }
  return out;
}

std::vector<ScenarioCase> all_cases() {
  auto shape = [](auto f) { return std::function<LoadShape(LoadShape)>(f); };
  auto busier = shape([](LoadShape s) { s.rate = 11; return s; });
  std::vector<ScenarioCase> cases = {
      {"no fault", "", nullptr, {"healthy"}, {}, {}},
      {"decode_slowdown x3", R"({"decode_slowdown": 3})", nullptr, {"decode_slowdown"}, {"decode"}, {}},
      {"decode_slowdown x1.8", R"({"decode_slowdown": 1.8})", nullptr, {"decode_slowdown"}, {"decode"}, {}},
      {"prefill_slowdown x4", R"({"prefill_slowdown": 4})", nullptr, {"prefill_slowdown"}, {"prefill"}, {}},
      {"prefill_slowdown x2.5", R"({"prefill_slowdown": 2.5})", nullptr, {"prefill_slowdown"}, {"prefill"}, {}},
      {"kv_capacity 0.2", R"({"kv_capacity": 0.2})", nullptr, {"kv_cache_pressure"}, {"queue", "decode"}, {}},
      {"kv_capacity 0.3", R"({"kv_capacity": 0.3})", nullptr, {"kv_cache_pressure"}, {"queue", "decode"}, {}},
      {"stall 1500ms/4s", R"({"stall": {"for_ms": 1500, "every_s": 4}})", nullptr, {"engine_stall"}, {"decode", "queue"}, {}},
      {"stall 700ms/3s", R"({"stall": {"for_ms": 700, "every_s": 3}})", nullptr, {"engine_stall"}, {"decode", "queue"}, {}},
      {"worker_stall 2000ms/5s", R"({"worker_stall": {"for_ms": 2000, "every_s": 5}})", nullptr, {"worker_stall"}, {"queue"}, {}},
      {"worker_stall 1000ms/3s", R"({"worker_stall": {"for_ms": 1000, "every_s": 3}})", nullptr, {"worker_stall"}, {"queue"}, {}},
      {"max_num_seqs 1", R"({"max_num_seqs": 1})", nullptr, {"capacity_drop"}, {"queue"}, {}, busier},
      {"max_num_seqs 2", R"({"max_num_seqs": 2})", nullptr, {"capacity_drop"}, {"queue"}, {}, busier},
      {"preprocess +150ms", R"({"preprocess_slowdown": {"factor": 1, "add_ms": 150}})", nullptr, {"preprocess_slowdown"}, {"preprocess"}, {}},
      {"preprocess +60ms", R"({"preprocess_slowdown": {"factor": 1, "add_ms": 60}})", nullptr, {"preprocess_slowdown"}, {"preprocess"}, {}},
      {"dependency 200ms", R"({"dependency": {"name": "embedding", "mean_ms": 200, "p99_ms": 500}})", nullptr, {"dependency_slowdown"}, {"dependency"}, {}},
      {"dependency 60ms", R"({"dependency": {"name": "rerank", "mean_ms": 60}})", nullptr, {"dependency_slowdown"}, {"dependency"}, {}},
      {"network_delay 100ms", R"({"network_delay_ms": 100})", nullptr, {"network_slowdown"}, {"send"}, {}},
      {"network_delay 40ms", R"({"network_delay_ms": 40})", nullptr, {"network_slowdown"}, {"send"}, {}},
      {"error_rate 0.3", R"({"error_rate": 0.3})", nullptr, {"error_spike"}, {""}, {}},
      // The weak magnitude must be detectable in ~80 requests: at 8 % one run in ~100 drew 0-1
      // errors (binomial), indistinguishable from a healthy window; at 15 % that is ~1 in 30,000.
      {"error_rate 0.15", R"({"error_rate": 0.15})", nullptr, {"error_spike"}, {""}, {}},
      {"rate surge x3", "", shape([](LoadShape s) { s.rate *= 3; return s; }), {"load_increase"}, {"queue"}, {}},
      {"rate surge x2", "", shape([](LoadShape s) { s.rate *= 2; return s; }), {"load_increase"}, {"queue"}, {}},
      {"long prompts x3", "", shape([](LoadShape s) { s.prompt_words *= 3; return s; }), {"long_prompts"}, {"prefill", "queue"}, {}},
      {"long prompts x1.8", "", shape([](LoadShape s) { s.prompt_words = s.prompt_words * 9 / 5; return s; }), {"long_prompts"}, {"prefill", "queue"}, {}},
      {"long outputs x4", "", shape([](LoadShape s) { s.max_tokens *= 4; return s; }), {"long_outputs"}, {"decode", "queue"}, {}},
      {"long outputs x2", "", shape([](LoadShape s) { s.max_tokens *= 2; return s; }), {"long_outputs"}, {"decode", "queue"}, {}},
      {"combined: decode_slowdown + dependency", R"({"decode_slowdown": 2.5, "dependency": {"name": "embedding", "mean_ms": 150}})", nullptr,
       {"decode_slowdown", "dependency_slowdown"}, {"decode", "dependency"}, {"decode_slowdown", "dependency_slowdown"}},
      {"combined: decode_slowdown x3 + long prompts x3", R"({"decode_slowdown": 3})",
       shape([](LoadShape s) { s.prompt_words *= 3; return s; }), {"decode_slowdown", "long_prompts"},
       {"decode", "prefill"}, {"decode_slowdown", "long_prompts"}},
      {"combined: long prompts + kv", R"({"kv_capacity": 0.5})", shape([](LoadShape s) { s.prompt_words *= 2; return s; }),
       {"long_prompts", "kv_cache_pressure"}, {"prefill", "queue", "decode"}, {"long_prompts", "kv_cache_pressure"}},
  };
  // Prefix-cache loss needs a baseline whose long prompts share most of their text.
  auto shared = shape([](LoadShape s) {
    s.rate = 5;
    s.prompt_words = 1200;
    s.shared_prefix = 0.9;
    return s;
  });
  cases.push_back({"prefix-cache loss 90%->0%", "", shape([](LoadShape s) { s.shared_prefix = 0; return s; }),
                   {"prefix_cache_miss"}, {"prefill"}, {}, shared});
  // The project's demo: a 4x decode fault while a second stream of 4096-token prompts joins the
  // steady short-prompt traffic (arrivals rise, prompts get longer, and the decode fault must
  // still be named, not mistaken for an engine stall).
  cases.push_back({"combined: decode_slowdown x4 + second stream of ~3900-token prompts", R"({"decode_slowdown": 4})",
                   nullptr, {"decode_slowdown"}, {"decode"}, {"long_prompts"}, shape([](LoadShape s) {
                     s.rate = 3;
                     s.prompt_words = 250;  // ~512 tokens
                     return s;
                   }),
                   shape([](LoadShape s) {
                     s.prompt_words = 1900;  // ~3900 tokens: under the 4096-token context
                     return s;
                   }),
                   /*default_capacity=*/true, /*absent=*/{"engine_stall"}});
  cases.push_back({"prefix-cache loss 90%->40%", "", shape([](LoadShape s) { s.shared_prefix = 0.4; return s; }),
                   {"prefix_cache_miss"}, {"prefill"}, {}, shared});
  // The same loss from the server's side at unchanged traffic: a share of requests scrambled
  // away from the cached prefix (a router that stopped keeping conversations on this replica).
  cases.push_back({"prefix_cache_scramble 1", R"({"prefix_cache_scramble": 1})", nullptr, {"prefix_cache_miss"},
                   {"prefill"}, {}, shared, nullptr, false, {"long_prompts", "prefill_slowdown"}});
  cases.push_back({"prefix_cache_scramble 0.6", R"({"prefix_cache_scramble": 0.6})", nullptr, {"prefix_cache_miss"},
                   {"prefill"}, {}, shared, nullptr, false, {"long_prompts", "prefill_slowdown"}});
  // Speculative decoding (3 drafts accepted at 0.8 per position) whose drafts stop matching the
  // traffic: fewer tokens per step at the same step cost.
  auto speculative = [](serve::ServerOptions& o) {
    o.engine.speculative_tokens = 3;
    o.engine.speculative_acceptance = 0.8;
  };
  auto decode_heavy = shape([](LoadShape s) {
    s.rate = 6;
    s.max_tokens = 64;
    return s;
  });
  cases.push_back({"spec_acceptance 0.8->0.1", R"({"spec_acceptance": 0.1})", nullptr, {"spec_decode_acceptance_drop"},
                   {"decode"}, {}, decode_heavy, nullptr, false, {"decode_slowdown", "long_outputs"}, speculative});
  cases.push_back({"spec_acceptance 0.8->0.4", R"({"spec_acceptance": 0.4})", nullptr, {"spec_decode_acceptance_drop"},
                   {"decode"}, {}, decode_heavy, nullptr, false, {"decode_slowdown", "long_outputs"}, speculative});
  // A slower engine step under speculation is still decode_slowdown.
  cases.push_back({"decode_slowdown x2.5 under speculation", R"({"decode_slowdown": 2.5})", nullptr, {"decode_slowdown"},
                   {"decode"}, {}, decode_heavy, nullptr, false, {"spec_decode_acceptance_drop"}, speculative});
  return cases;
}

// run_cases runs every case at once, each on its own fresh server scraped by one fresh Prometheus,
// and prints each outcome. Empty when the servers or Prometheus cannot start (a test failure).
std::vector<ScenarioOutcome> run_cases(const std::vector<ScenarioCase>& cases) {
  std::vector<std::unique_ptr<serve::Server>> servers;
  std::vector<std::string> targets;
  for (const ScenarioCase& c : cases) {
    auto options = testing::scenario_server_options();
    if (c.default_capacity) {
      options.engine.max_num_seqs = 0;
      options.engine.kv_capacity_tokens = 0;
    }
    if (c.server) c.server(options);
    auto s = serve::Server::start(options);
    EXPECT_TRUE(s) << s.error().message;
    if (!s) return {};
    targets.push_back("127.0.0.1:" + std::to_string((*s)->port()));
    servers.push_back(std::move(*s));
  }
  std::string config = "global:\n  scrape_interval: 1s\nscrape_configs:\n";
  for (std::size_t i = 0; i < cases.size(); ++i)
    config += "  - job_name: s" + std::to_string(i) + "\n    static_configs:\n      - targets: ['" + targets[i] + "']\n";
  inferscope::testing::PrometheusProcess prom(config);
  EXPECT_TRUE(prom.ok()) << prom.error();
  if (!prom.ok()) return {};

  std::vector<std::future<ScenarioOutcome>> running;
  for (std::size_t i = 0; i < cases.size(); ++i)
    running.push_back(std::async(std::launch::async, run_case, cases[i], servers[i]->port(), "s" + std::to_string(i),
                                 prom.url()));
  std::vector<ScenarioOutcome> outcomes;
  for (auto& f : running) {
    ScenarioOutcome o = f.get();
    std::cout << (o.pass ? "PASS " : "FAIL ") << o.name << ": verdict " << o.verdict << ", top " << o.top_cause << " ["
              << o.top_stage << "]\n";
    if (!o.pass || std::getenv("DOCTOR_VERBOSE")) std::cout << o.detail << "\n";
    outcomes.push_back(std::move(o));
  }
  for (auto& s : servers) s->stop();
  return outcomes;
}

// Tests the doctor's verdict and top cause on every scenario and writes the accuracy table.
// The servers simulate in real time, so a host starved of CPU (a 2-core CI machine running other
// jobs) slows them for real, and a scenario judged through that sees a slowdown the fault did not
// cause. A failed scenario therefore runs once more on a fresh server; both attempts are printed,
// and the first-attempt accuracy is what docs/doctor.md reports. A scenario the doctor gets wrong
// fails both times.
TEST(DoctorScenariosIntegrationTest, FaultsAndLoadCauses) {
  std::vector<ScenarioCase> cases = all_cases();
  if (const char* only = std::getenv("DOCTOR_SCENARIO")) {
    std::vector<ScenarioCase> picked;
    for (auto& c : cases)
      if (c.name.find(only) != std::string::npos) picked.push_back(c);
    cases = picked;
  }
  ASSERT_FALSE(cases.empty());
  const std::vector<ScenarioOutcome> first = run_cases(cases);
  ASSERT_EQ(first.size(), cases.size());
  std::vector<ScenarioCase> again;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (!first[i].pass) again.push_back(cases[i]);
  }
  const std::size_t first_passed = cases.size() - again.size();
  std::cout << "accuracy (first attempt) " << first_passed << "/" << cases.size() << "\n";
  if (again.empty()) return;
  std::cout << "running the " << again.size() << " failed scenario(s) once more on fresh servers\n";
  const std::vector<ScenarioOutcome> second = run_cases(again);
  ASSERT_EQ(second.size(), again.size());
  std::size_t retried_passed = 0;
  for (const ScenarioOutcome& o : second) {
    retried_passed += o.pass;
    EXPECT_TRUE(o.pass) << o.name << " failed twice";
  }
  std::cout << "accuracy (after one retry) " << first_passed + retried_passed << "/" << cases.size() << "\n";
}

}  // namespace
}  // namespace inferscope::doctor
