// Unit tests of the KV and capacity family (causes_kv_capacity.cpp): a smaller running batch at
// steady demand is capacity_drop, more arrivals behind the same batch is not.
#include "doctor/diagnosis.h"

#include <gtest/gtest.h>

#include "doctor/diagnosis_support.h"

namespace inferscope::doctor {
namespace {

using namespace testing;

// Tests that a running batch capped lower at unchanged arrivals (a lowered --max-num-seqs) is
// capacity_drop in the queue, with the running and waiting counts as evidence, and that the same
// queue behind a batch held at its size while arrivals rose stays load_increase.
TEST(DiagnosisTest, CapacityDropAtSteadyDemand) {
  Snapshot cut = steady();
  cut.latency["e2e"] = quantity(0.300, 0.900, 100, "s", 0.02);
  cut.stages["queue"] = quantity(0.005, 0.605);
  cut.signals["running"] = quantity(3.6, 1.0, 100, "requests");
  cut.signals["running"].baseline.max = 4;
  cut.signals["running"].incident.max = 1;
  cut.signals["waiting"] = quantity(0.1, 5, 100, "requests");
  cut.signals["kv_usage"] = quantity(0.3, 0.1, 100, "ratio");
  Diagnosis d = run(cut);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "capacity_drop") << to_text(d);
  EXPECT_EQ(d.findings.front().stage, "queue");
  EXPECT_NE(d.findings.front().summary.find("running 3.6 -> 1"), std::string::npos) << d.findings.front().summary;
  for (const Finding& f : d.findings) EXPECT_NE(f.cause, "load_increase") << to_text(d);

  Snapshot busier = cut;
  busier.signals["request_rate"] = quantity(5, 12, 100, "req/s", 0.02);
  busier.signals["running"] = quantity(3.6, 3.9, 100, "requests");
  busier.signals["running"].baseline.max = busier.signals["running"].incident.max = 4;
  Diagnosis b = run(busier);
  ASSERT_EQ(b.verdict, "degraded") << to_text(b);
  EXPECT_EQ(b.findings.front().cause, "load_increase") << to_text(b);
  for (const Finding& f : b.findings) EXPECT_NE(f.cause, "capacity_drop") << to_text(b);
}

}  // namespace
}  // namespace inferscope::doctor
