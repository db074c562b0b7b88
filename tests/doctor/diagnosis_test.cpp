// Unit tests of the doctor's flow (diagnosis.cpp) and what surrounds it: the noise floor, the
// formats, window statistics and the CLI/API parsers. Each cause family has its own file
// (causes_<family>_test.cpp) and localize() its own (localize_test.cpp).
#include "doctor/diagnosis.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "doctor/alert_diagnosis.h"
#include "doctor/diagnosis_support.h"
#include "doctor/doctor_api.h"

namespace inferscope::doctor {
namespace {

using namespace testing;

// Tests that an unchanged system is healthy and a change below the baseline's spread is too, with a note.
TEST(DiagnosisTest, HealthyAndBelowNoise) {
  EXPECT_EQ(run(steady()).verdict, "healthy");
  Snapshot noisy = steady();
  noisy.latency["e2e"] = quantity(0.300, 0.330, 100, "s", 0.3);  // +10% inside a +-30% spread
  Diagnosis d = run(noisy);
  EXPECT_EQ(d.verdict, "healthy");
  ASSERT_FALSE(d.notes.empty());
  EXPECT_NE(d.notes.front().find("below the noise floor"), std::string::npos) << d.notes.front();
}

// Tests that a stage multiplied far outside its own noise is never silent: send x100 (+9.9 ms on
// a 300 ms e2e, under the 4 % the verdict asks) leaves the verdict healthy and adds a note naming
// it; a sub-millisecond doubling is jitter and adds nothing; and beside a degraded verdict whose
// findings name other stages the note says that none names it.
TEST(DiagnosisTest, StageFarOutsideItsNoiseIsNeverSilent) {
  Snapshot sent = steady();
  sent.stages["send"] = quantity(0.0001, 0.010);
  sent.latency["e2e"] = quantity(0.300, 0.310, 100, "s", 0.02);
  Diagnosis d = run(sent);
  EXPECT_EQ(d.verdict, "healthy") << to_text(d);
  bool noted = false;
  for (const auto& n : d.notes)
    noted |= n.rfind("send x100.0 per request (100 us -> 10 ms, +9.90 ms), far outside its own noise", 0) == 0 &&
             n.find("does not make the verdict") != std::string::npos;
  EXPECT_TRUE(noted) << to_text(d);

  Snapshot jitter = steady();
  jitter.stages["send"] = quantity(0.0001, 0.0003);
  for (const auto& n : run(jitter).notes) EXPECT_EQ(n.rfind("send", 0), std::string::npos) << n;

  Snapshot both = decode_slowed(3);
  both.stages["send"] = quantity(0.0001, 0.010);
  Diagnosis b = run(both);
  ASSERT_EQ(b.verdict, "degraded");
  noted = false;
  for (const auto& n : b.notes) noted |= n.rfind("send x100.0", 0) == 0 && n.ends_with("no finding names it");
  EXPECT_TRUE(noted) << to_text(b);
}

// Tests the stage table's text: a stage name as wide as its column still has a space before its
// number, and a share that rounds to zero reads 0%, never -0%.
TEST(DiagnosisFormatTest, StageTableColumnsAndZeroShares) {
  Snapshot s = decode_slowed(3);
  s.stages["upstream_connect"] = quantity(0.000024, 0.000024);
  s.stages["send"] = quantity(0.000140, 0.000130);
  const std::string text = to_text(run(s));
  EXPECT_NE(text.find("upstream_connect 24 us"), std::string::npos) << text;
  EXPECT_EQ(text.find("-0%"), std::string::npos) << text;
  Snapshot flat = steady();
  flat.latency["e2e"] = quantity(0.300, 0.299, 100, "s", 0.02);
  EXPECT_EQ(to_text(run(flat)).find("-0%"), std::string::npos) << to_text(run(flat));
}

// Tests that next steps follow what the target shows: without GPU series (a llama.cpp-like CPU
// backend) a decode slowdown's steps name no GPU command and notes name the missing host and GPU
// views in the collector's own terms; with GPU and host CPU series, the GPU steps and no notes.
TEST(DiagnosisTest, NextStepsFollowTheHardwareShown) {
  Snapshot cpu = decode_slowed(3);
  cpu.source = "scrape";
  Diagnosis d = run(cpu);
  ASSERT_EQ(d.findings.front().cause, "decode_slowdown") << to_text(d);
  for (const auto& step : d.findings.front().next_steps) {
    EXPECT_EQ(step.find("nvidia-smi"), std::string::npos) << step;
    EXPECT_EQ(step.find("GPU"), std::string::npos) << step;
  }
  EXPECT_NE(d.findings.front().next_steps.front().find("top -H"), std::string::npos);
  bool host = false, gpu = false;
  for (const auto& n : d.notes) {
    host |= n.rfind("no host CPU view: add node-exporter's URL", 0) == 0 && n.find("--scrape") != std::string::npos;
    gpu |= n.rfind("no GPU series: the next steps assume no GPU", 0) == 0;
  }
  EXPECT_TRUE(host && gpu) << to_text(d);

  // Prometheus without node-exporter for the target's host: the series was asked for and came
  // back empty, which is no host view either.
  Snapshot asked = decode_slowed(3);
  asked.source = "prometheus";
  asked.signals["host_cpu_busy"] = Quantity{};
  Diagnosis a = run(asked);
  ASSERT_EQ(a.findings.front().cause, "decode_slowdown") << to_text(a);
  EXPECT_TRUE(std::any_of(a.notes.begin(), a.notes.end(),
                          [](const std::string& n) { return n.rfind("no host CPU view: Prometheus has no node-exporter", 0) == 0; }))
      << to_text(a);

  Snapshot gpu_host = decode_slowed(3);
  gpu_host.signals["gpu_util"] = quantity(0.6, 0.9, 100, "ratio");
  gpu_host.signals["host_cpu_busy"] = quantity(0.3, 0.3, 100, "ratio");
  Diagnosis g = run(gpu_host);
  ASSERT_EQ(g.findings.front().cause, "decode_slowdown") << to_text(g);
  EXPECT_NE(g.findings.front().next_steps.front().find("nvidia-smi"), std::string::npos);
  for (const auto& n : g.notes) EXPECT_EQ(n.rfind("no ", 0), std::string::npos) << n;
}

// Tests the JSON schema's required fields and that Markdown stays within its byte budget.
TEST(DiagnosisFormatTest, JsonSchemaAndMarkdownSize) {
  Snapshot slow = steady();
  slow.latency["e2e"] = quantity(0.300, 0.545, 100, "s", 0.02);
  slow.stages["decode"] = quantity(0.245, 0.490);
  slow.latency["tpot"] = quantity(0.008, 0.016);
  slow.latency["itl"] = quantity(0.008, 0.016);
  Diagnosis d = run(slow);
  nlohmann::json j = to_json(d);
  EXPECT_EQ(j["schema_version"], kSchemaVersion);
  EXPECT_EQ(j["verdict"], "degraded");
  for (const char* key : {"window", "baseline", "findings", "stages", "e2e", "considered", "signals"})
    EXPECT_TRUE(j.contains(key)) << key;
  const auto& f = j["findings"].at(0);
  for (const char* key : {"cause", "stage", "score", "share", "summary", "evidence", "next_steps"})
    EXPECT_TRUE(f.contains(key)) << key;
  EXPECT_TRUE(j["stages"].at(0)["incident"].contains("p99"));
  std::string md = to_markdown(d, 300);
  EXPECT_LE(md.size(), 300u);
  EXPECT_EQ(md.rfind("**Doctor: degraded", 0), 0u) << md;
  EXPECT_EQ(to_text(d).rfind("degraded:", 0), 0u);
}

// Tests Prometheus-style bucket interpolation and counter-reset handling in window statistics.
TEST(SampledRolesTest, QuantilesAndResets) {
  std::map<double, double> buckets = {{0.1, 50}, {0.2, 90}, {0.5, 100}, {INFINITY, 100}};
  EXPECT_NEAR(histogram_quantile(0.5, buckets), 0.1, 1e-9);
  EXPECT_NEAR(histogram_quantile(0.7, buckets), 0.15, 1e-9);
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, {{1, 0}, {INFINITY, 0}})));

  SampledRoles s;
  s.times = {0, 1, 2, 3, 4};
  RoleSamples r;
  r.spec.kind = RoleKind::kCounter;
  r.primary = {10, 20, 30, 5, 15};  // reset between 2 and 3: 5 counts from zero
  WindowStat w = window_stat(s, r, {0, 4});
  EXPECT_NEAR(w.count, 10 + 10 + 5 + 10, 1e-9);
  EXPECT_NEAR(w.mean, 35.0 / 4, 1e-9);
}

// Tests the CLI/API time and duration parsers, and that the relay's Markdown is never empty.
TEST(DoctorApiTest, TimesDurationsAndAlertMarkdown) {
  auto t = parse_time("2026-11-30T13:00:00Z", "--at");
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(*t, 1796043600);
  EXPECT_DOUBLE_EQ(*parse_time("2026-11-30T14:00:00.5+01:00", "--at"), 1796043600.5);
  EXPECT_DOUBLE_EQ(*parse_time("1796043600", "--at"), 1796043600);
  for (auto bad : {"", "yesterday", "2026-11-30", "2026-11-30T13:00:00", "-5", "12abc"}) {
    auto r = parse_time(bad, "--at");
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("--at"), std::string::npos);
  }
  EXPECT_DOUBLE_EQ(*parse_duration("1h30m", "--window"), 5400);
  EXPECT_FALSE(parse_duration("0s", "--window"));
  EXPECT_FALSE(parse_duration("5", "--window"));
  // A baseline reaching back before the first sample fits the history that exists.
  EXPECT_FALSE(fit_to_history(10000, 7000, 300, 1800));          // data covers the whole range
  EXPECT_FALSE(fit_to_history(10000, kNaN, 300, 1800));          // unknown start
  EXPECT_FALSE(fit_to_history(10000, 10000, 300, 1800));         // nothing before the end
  auto longer = fit_to_history(10000, 9000, 300, 1800);          // 1000 s of history
  ASSERT_TRUE(longer);
  EXPECT_DOUBLE_EQ(longer->first, 300);
  EXPECT_DOUBLE_EQ(longer->second, 700);
  auto young = fit_to_history(10000, 9880, 300, 1800);           // 120 s: two halves
  ASSERT_TRUE(young);
  EXPECT_DOUBLE_EQ(young->first, 60);
  EXPECT_DOUBLE_EQ(young->second, 60);
  AlertDiagnosis alert = diagnose_alert("http://127.0.0.1:1", {{"job", "serve"}}, "");
  EXPECT_NE(alert.markdown.find("Doctor could not run"), std::string::npos) << alert.markdown;
  EXPECT_EQ(alert.record, "");  // nothing to compare with when it resolves
  EXPECT_EQ(recovery_markdown("http://127.0.0.1:1", alert.record), "");
}


}  // namespace
}  // namespace inferscope::doctor
