// Unit tests of the load and request mix family (causes_load_mix.cpp): more arrivals with a
// queue is load_increase (beside it, errors alone are error_spike).
#include "doctor/diagnosis.h"

#include <gtest/gtest.h>

#include "doctor/diagnosis_support.h"

namespace inferscope::doctor {
namespace {

using namespace testing;

// Tests that more arrivals with a queue is load_increase, and errors alone are error_spike.
TEST(DiagnosisTest, LoadAndErrors) {
  Snapshot load = steady();
  load.latency["e2e"] = quantity(0.300, 0.900, 100, "s", 0.02);
  load.stages["queue"] = quantity(0.005, 0.605);
  load.signals["request_rate"] = quantity(5, 12, 100, "req/s", 0.02);
  load.signals["waiting"] = quantity(0, 6, 100, "requests");
  Diagnosis d = run(load);
  ASSERT_EQ(d.verdict, "degraded");
  EXPECT_EQ(d.findings.front().cause, "load_increase");
  EXPECT_EQ(d.findings.front().stage, "queue");

  Snapshot errors = steady();
  errors.signals["error_rate"] = quantity(0.0, 1.0, 100, "req/s");
  errors.signals["error_rate"].baseline = window(0, 0);
  Diagnosis e = run(errors);
  ASSERT_EQ(e.verdict, "degraded");
  EXPECT_EQ(e.findings.front().cause, "error_spike");
}

}  // namespace
}  // namespace inferscope::doctor
