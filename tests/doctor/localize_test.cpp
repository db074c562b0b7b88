// Unit tests of localize() (localize.h) and the where family (causes_replicas.cpp): one slow
// replica of several is replica_slowdown at that instance, one model of several narrows its
// finding, a single down target is named, and which slices are read.
#include "doctor/diagnosis.h"

#include <gtest/gtest.h>

#include "doctor/diagnosis_support.h"
#include "doctor/localize.h"

namespace inferscope::doctor {
namespace {

using namespace testing;

std::vector<Slice> replicas(const std::vector<Snapshot>& snapshots) {
  std::vector<Slice> out;
  for (std::size_t i = 0; i < snapshots.size(); ++i) {
    Slice slice{{"serve", "10.0.0." + std::to_string(i + 1) + ":8000", "sim-a"}, snapshots[i]};
    add_derived_quantities(slice.snapshot);
    out.push_back(std::move(slice));
  }
  return out;
}

// Tests that one replica of four with a 3x decode is named (replica_slowdown, where.instance, the
// decode stage, the per-instance table), ranked above the diluted fleet-wide finding.
TEST(LocalizeTest, OneSlowReplicaOfFour) {
  Diagnosis d = run(decode_slowed(1.5));  // the fleet: one replica's 3x diluted over four
  localize(d, replicas({steady(), steady(), decode_slowed(3), steady()}), {});
  ASSERT_EQ(d.verdict, "degraded");
  const Finding& top = d.findings.front();
  EXPECT_EQ(top.cause, "replica_slowdown") << to_text(d);
  EXPECT_EQ(top.stage, "decode");
  EXPECT_EQ(top.where.instance, "10.0.0.3:8000");
  EXPECT_EQ(top.where.job, "serve");
  EXPECT_EQ(top.where.model, "sim-a");
  ASSERT_GE(top.evidence.size(), 8u);  // mean and p95 on each of the four
  EXPECT_NE(top.evidence.front().metric.find("at 10.0.0.3:8000"), std::string::npos);
  EXPECT_NEAR(top.evidence.front().incident, 0.735, 1e-9);
  EXPECT_NE(top.next_steps.front().find("10.0.0.3:8000"), std::string::npos);
  EXPECT_NE(d.headline.find("replica_slowdown (decode) at 10.0.0.3:8000"), std::string::npos) << d.headline;
  // Where is in every format.
  EXPECT_EQ(to_json(d)["findings"][0]["where"]["instance"], "10.0.0.3:8000");
  EXPECT_NE(to_text(d).find("where: job=serve instance=10.0.0.3:8000 model=sim-a"), std::string::npos);
  EXPECT_NE(to_markdown(d).find("at `job=serve instance=10.0.0.3:8000 model=sim-a`"), std::string::npos);
}

// Tests that when every replica (or most) slowed together the fleet-wide cause stays on top.
TEST(LocalizeTest, FleetWideSlowdownIsNotOneReplica) {
  Diagnosis d = run(decode_slowed(3));
  localize(d, replicas({decode_slowed(3), decode_slowed(3), decode_slowed(3), decode_slowed(3)}), {});
  EXPECT_EQ(d.findings.front().cause, "decode_slowdown") << to_text(d);
  for (const auto& f : d.findings) EXPECT_NE(f.cause, "replica_slowdown");
  bool noted = false;
  for (const auto& n : d.notes) noted |= n.find("4 of 4 replicas of model sim-a (job serve) slowed together") == 0;
  EXPECT_TRUE(noted) << to_text(d);
  Diagnosis most = run(decode_slowed(2.5));
  localize(most, replicas({decode_slowed(3), decode_slowed(3), steady(), decode_slowed(3)}), {});
  EXPECT_EQ(most.findings.front().cause, "decode_slowdown") << to_text(most);
}

// Tests two replicas (no majority): each is judged against its own baseline, so one slowed and one
// steady names the slowed one; a replica with too few requests is said to be too few to judge.
TEST(LocalizeTest, TwoReplicasAndTooFewRequests) {
  Diagnosis d = run(decode_slowed(2));
  localize(d, replicas({decode_slowed(3), steady()}), {});
  EXPECT_EQ(d.findings.front().cause, "replica_slowdown") << to_text(d);
  EXPECT_EQ(d.findings.front().where.instance, "10.0.0.1:8000");

  Snapshot idle = steady();
  idle.latency["e2e"] = quantity(0.300, 0.300, 2);
  Diagnosis few = run(steady());
  localize(few, replicas({steady(), idle}), {});
  bool noted = false;
  for (const auto& n : few.notes) noted |= n.find("10.0.0.2:8000: 2 finished requests in the window, too few") == 0;
  EXPECT_TRUE(noted) << to_text(few);
  EXPECT_EQ(few.verdict, "healthy");
}

// Tests that a replica slower than its own baseline but within its peers' spread is not named.
TEST(LocalizeTest, WithinPeersSpreadIsNotNamed) {
  Diagnosis d = run(steady());
  std::vector<Snapshot> fleet{decode_slowed(1.3), steady(), steady(), steady()};
  for (int i = 1; i < 4; ++i) {  // steady peers, 40 ms apart from each other
    fleet[i].stages["decode"] = quantity(0.245 + 0.04 * i, 0.245 + 0.04 * i);
    fleet[i].latency["e2e"] = quantity(0.300 + 0.04 * i, 0.300 + 0.04 * i, 100, "s", 0.02);
  }
  localize(d, replicas(fleet), {});
  for (const auto& f : d.findings) EXPECT_NE(f.cause, "replica_slowdown") << to_text(d);
  bool noted = false;
  for (const auto& n : d.notes) noted |= n.find("10.0.0.1:8000 slowed against its own baseline (decode)") == 0;
  EXPECT_TRUE(noted) << to_text(d);
}

// Tests that two models, one slowed, localize the finding to that model; and a single down
// target localizes target_down (Prometheus and direct-scrape spellings).
TEST(LocalizeTest, OneModelOfTwoAndDownTarget) {
  Diagnosis d = run(decode_slowed(2));
  Slice a{{"", "", "model-a"}, steady()}, b{{"", "", "model-b"}, decode_slowed(3)};
  add_derived_quantities(a.snapshot);
  add_derived_quantities(b.snapshot);
  localize(d, {}, {a, b});
  EXPECT_EQ(d.findings.front().cause, "decode_slowdown") << to_text(d);
  EXPECT_EQ(d.findings.front().where.model, "model-b");
  EXPECT_TRUE(d.findings.front().where.instance.empty());
  int decode_findings = 0;
  for (const auto& f : d.findings) decode_findings += f.cause == "decode_slowdown";
  EXPECT_EQ(decode_findings, 1) << to_text(d);
  EXPECT_NE(d.headline.find("in model model-b"), std::string::npos) << d.headline;

  for (const char* down : {"serve/10.0.0.2:8000: connection refused",
                           "http://10.0.0.2:8000/metrics: cannot scrape http://10.0.0.2:8000/metrics: refused"}) {
    Snapshot s = steady();
    s.targets_total = 2;
    s.targets_down = {down};
    Diagnosis t = run(s);
    localize(t, {}, {});
    bool found = false;
    for (const auto& f : t.findings)
      if (f.cause == "target_down") {
        found = true;
        EXPECT_EQ(f.where.instance, "10.0.0.2:8000") << down;
        EXPECT_EQ(f.where.job, std::string(down).rfind("serve", 0) == 0 ? "serve" : "") << down;
      }
    EXPECT_TRUE(found) << to_text(t);
  }
}

// Tests which slices are read: instances of a job+model with two or more instances, models when
// two or more, capped with a note.
TEST(LocalizeTest, PlanSlices) {
  std::vector<Where> sources{{"gateway", "10.0.0.9:8080", "sim-a"}, {"gateway", "10.0.0.9:8080", "sim-b"},
                             {"serve", "10.0.0.1:8000", "sim-a"},  {"serve", "10.0.0.2:8000", "sim-a"},
                             {"serve", "10.0.0.3:8000", "sim-b"}};
  SlicePlan plan = plan_slices(sources);
  ASSERT_EQ(plan.instances.size(), 2u);
  EXPECT_EQ(plan.instances[0].instance, "10.0.0.1:8000");
  EXPECT_EQ(plan.instances[1].model, "sim-a");
  ASSERT_EQ(plan.models.size(), 2u);
  EXPECT_EQ(plan.models[1].model, "sim-b");
  SlicePlan capped = plan_slices(sources, 1, 1);
  EXPECT_EQ(capped.instances.size(), 1u);
  EXPECT_EQ(capped.models.size(), 1u);
  EXPECT_EQ(capped.notes.size(), 2u);
  EXPECT_EQ(instance_of("https://[::1]:8443/metrics"), "[::1]:8443");
  EXPECT_EQ(instance_of("http://127.0.0.1:9000"), "127.0.0.1:9000");
}

// Tests the data-parallel slices: an instance whose e2e series carry two or more `engine` values
// is read rank by rank (Where::engine set), one engine alone is not, and the inferscope_* series
// of the same instance (no engine label) adds no slice.
TEST(LocalizeTest, PlanSlicesOfDataParallelRanks) {
  std::vector<Where> sources{{"serve", "10.0.0.1:8000", "sim-a", ""},  {"serve", "10.0.0.1:8000", "sim-a", "0"},
                             {"serve", "10.0.0.1:8000", "sim-a", "1"}, {"serve", "10.0.0.1:8000", "sim-a", "2"},
                             {"serve", "10.0.0.2:8000", "sim-b", "0"}};
  SlicePlan plan = plan_slices(sources);
  ASSERT_EQ(plan.instances.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(plan.instances[i].instance, "10.0.0.1:8000");
    EXPECT_EQ(plan.instances[i].engine, std::to_string(i));
  }
  EXPECT_EQ(where_name(plan.instances[2]), "10.0.0.1:8000 engine 2");
}

// Tests one slow rank of four data-parallel engines of one server: replica_slowdown with
// where.engine, named by rank in the summary, evidence and next steps (its GPU, not a drain);
// and every rank slowed together names none.
TEST(LocalizeTest, OneSlowEngineRankOfFour) {
  auto ranks = [](const std::vector<Snapshot>& snapshots) {
    std::vector<Slice> out;
    for (std::size_t i = 0; i < snapshots.size(); ++i) {
      Slice slice{{"serve", "10.0.0.1:8000", "sim-a", std::to_string(i)}, snapshots[i]};
      add_derived_quantities(slice.snapshot);
      out.push_back(std::move(slice));
    }
    return out;
  };
  Diagnosis d = run(decode_slowed(1.5));
  localize(d, ranks({steady(), steady(), decode_slowed(3), steady()}), {});
  ASSERT_EQ(d.verdict, "degraded");
  const Finding& top = d.findings.front();
  EXPECT_EQ(top.cause, "replica_slowdown") << to_text(d);
  EXPECT_EQ(top.where.engine, "2");
  EXPECT_EQ(top.where.instance, "10.0.0.1:8000");
  EXPECT_NE(top.summary.find("10.0.0.1:8000 engine 2 is 1 of 4 engines (data-parallel ranks) of 10.0.0.1:8000"),
            std::string::npos) << top.summary;
  EXPECT_NE(top.evidence.front().metric.find("at 10.0.0.1:8000 engine 2"), std::string::npos);
  EXPECT_NE(top.next_steps.front().find("engine 2 of 10.0.0.1:8000"), std::string::npos) << top.next_steps.front();
  EXPECT_NE(d.headline.find("at 10.0.0.1:8000 engine 2"), std::string::npos) << d.headline;
  EXPECT_EQ(to_json(d)["findings"][0]["where"]["engine"], "2");
  EXPECT_NE(to_text(d).find("instance=10.0.0.1:8000 model=sim-a engine=2"), std::string::npos) << to_text(d);

  Diagnosis all = run(decode_slowed(3));
  localize(all, ranks({decode_slowed(3), decode_slowed(3), decode_slowed(3), decode_slowed(3)}), {});
  ASSERT_EQ(all.verdict, "degraded");
  for (const Finding& f : all.findings) {
    EXPECT_NE(f.cause, "replica_slowdown") << to_text(all);
    EXPECT_TRUE(f.where.engine.empty()) << to_text(all);
  }
}

// without_baseline drops a snapshot's baseline side: a target a saved baseline file does not hold.
Snapshot without_baseline(Snapshot s) {
  for (auto* group : {&s.latency, &s.stages, &s.signals, &s.dependencies})
    for (auto& [id, q] : *group) q.baseline = WindowStat{};
  s.baseline_start = s.baseline_end = kNaN;
  return s;
}

// prefill_slowed is steady() with prompts `longer` times as long (prefill in proportion) and the
// prefill per prompt token `factor` times as slow.
Snapshot prefill_slowed(double longer, double factor) {
  Snapshot s = steady();
  const double prefill = 0.050 * longer * factor;
  s.signals["prompt_tokens"] = quantity(1000, 1000 * longer, 100, "tokens");
  s.stages["prefill"] = quantity(0.050, prefill);
  s.latency["ttft"] = quantity(0.055, 0.005 + prefill);
  s.latency["e2e"] = quantity(0.300, 0.250 + prefill, 100, "s", 0.02);
  return s;
}

// Tests that without any baseline of their own (a baseline file that does not hold the targets),
// one replica of four at 3x its peers' per-token decode time in the window is named, and says
// that it was compared within the window; the fleet-wide finding stays below it.
TEST(LocalizeTest, PeerGapWithinTheWindowNeedsNoBaseline) {
  Diagnosis d = run(decode_slowed(1.5));
  std::vector<Slice> fleet = replicas({steady(), steady(), decode_slowed(3), steady()});
  for (Slice& s : fleet) s.snapshot = without_baseline(s.snapshot);
  localize(d, fleet, {});
  ASSERT_EQ(d.verdict, "degraded");
  const Finding& top = d.findings.front();
  EXPECT_EQ(top.cause, "replica_slowdown") << to_text(d);
  EXPECT_EQ(top.stage, "decode");
  EXPECT_EQ(top.where.instance, "10.0.0.3:8000");
  EXPECT_NE(top.summary.find("x3.0 its peers' median 8.00 ms"), std::string::npos) << top.summary;
  EXPECT_NE(top.summary.find("no baseline of its own"), std::string::npos) << top.summary;
  EXPECT_TRUE(std::isnan(top.share));
  EXPECT_NE(d.headline.find("replica_slowdown (decode) at 10.0.0.3:8000"), std::string::npos) << d.headline;
  EXPECT_FALSE(reports(d, "unexplained")) << to_text(d);  // the diluted change is this replica's
  bool noted = false;
  for (const auto& n : d.notes) noted |= n.find("no baseline of their own for 10.0.0.1:8000, 10.0.0.2:8000") == 0;
  EXPECT_TRUE(noted) << to_text(d);

  // A healthy whole (the slow replica's change diluted below noise) still becomes degraded.
  Diagnosis calm = run(steady());
  localize(calm, fleet, {});
  EXPECT_EQ(calm.verdict, "degraded") << to_text(calm);
  EXPECT_EQ(calm.findings.front().cause, "replica_slowdown");

  // Two replicas: the window alone cannot say which one is odd.
  Diagnosis two = run(steady());
  std::vector<Slice> pair = replicas({steady(), decode_slowed(3)});
  for (Slice& s : pair) s.snapshot = without_baseline(s.snapshot);
  localize(two, pair, {});
  EXPECT_FALSE(reports(two, "replica_slowdown")) << to_text(two);
}

// Tests that when every replica slowed together (longer prompts for all) one replica whose
// prefill per prompt token is also 5x its peers' is still named, at the prefill stage.
TEST(LocalizeTest, PeerGapBesideAFleetWideChange) {
  Diagnosis d = run(prefill_slowed(3, 2.0));
  localize(d, replicas({prefill_slowed(3, 1), prefill_slowed(3, 5), prefill_slowed(3, 1), prefill_slowed(3, 1)}), {});
  const Finding& top = d.findings.front();
  EXPECT_EQ(top.cause, "replica_slowdown") << to_text(d);
  EXPECT_EQ(top.stage, "prefill");
  EXPECT_EQ(top.where.instance, "10.0.0.2:8000");
  EXPECT_NE(top.summary.find("prefill time per prompt token"), std::string::npos) << top.summary;
  EXPECT_NE(top.summary.find("in the baseline it ran at x1.0 theirs"), std::string::npos) << top.summary;
  EXPECT_TRUE(reports(d, "long_prompts")) << to_text(d);
}

// Tests that a replica as far above its peers in the baseline as now (other hardware) is a note,
// not a finding: it is how the fleet is, not what changed. Half the fleet above the other half
// is two kinds of replica, not one slowed.
TEST(LocalizeTest, PeerGapAlreadyThereOrHalfTheFleetIsNoFinding) {
  Snapshot always_slow = steady();
  always_slow.latency["tpot"] = quantity(0.024, 0.024);
  always_slow.stages["decode"] = quantity(0.735, 0.735);
  always_slow.latency["e2e"] = quantity(0.790, 0.790, 100, "s", 0.02);
  Diagnosis d = run(steady());
  localize(d, replicas({steady(), always_slow, steady(), steady()}), {});
  EXPECT_FALSE(reports(d, "replica_slowdown")) << to_text(d);
  EXPECT_EQ(d.verdict, "healthy");
  bool noted = false;
  for (const auto& n : d.notes) noted |= n.find("10.0.0.2:8000's time per output token (m) is x3.0 its peers'") == 0;
  EXPECT_TRUE(noted) << to_text(d);

  Diagnosis halves = run(steady());
  std::vector<Slice> fleet = replicas({steady(), decode_slowed(3), steady(), decode_slowed(3)});
  for (Slice& s : fleet) s.snapshot = without_baseline(s.snapshot);
  localize(halves, fleet, {});
  EXPECT_FALSE(reports(halves, "replica_slowdown")) << to_text(halves);
}

}  // namespace
}  // namespace inferscope::doctor
