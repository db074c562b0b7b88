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

}  // namespace
}  // namespace inferscope::doctor
