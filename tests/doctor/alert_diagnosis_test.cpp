// Tests the record a firing alert's diagnosis leaves and the "what recovered" text of its
// resolved notification (alert_diagnosis.h); with Prometheus in doctor_modes_integration_test.
#include "doctor/alert_diagnosis.h"

#include <gtest/gtest.h>

#include <cmath>

namespace inferscope::doctor {
namespace {

// Tests that the alert's own figure is the left side of the rule's comparison, read from the
// generatorURL Prometheus sends (query-escaped), and that other expressions give none.
TEST(AlertExpression, LeftSideOfTheFinalComparisonWithANumber) {
  EXPECT_EQ(alert_expression("http://127.0.0.1:9090/graph?g0.expr=inferscope%3Ae2e_seconds%3Ap95%7Bjob%3D%22serve%22%7D+%3E+2&g0.tab=1"),
            "inferscope:e2e_seconds:p95{job=\"serve\"}");
  EXPECT_EQ(alert_expression("http://p/graph?g0.tab=1&g0.expr=sum+by+%28job%29+%28x%7Ba%3D%22%3E%22%7D%29+%3E%3D+0.5"),
            "sum by (job) (x{a=\">\"})");
  EXPECT_EQ(alert_expression("http://p/graph?g0.expr=rate%28x%5B5m%5D%29+%3E+bool+1e-3"), "rate(x[5m])");
  // The watchdog (no comparison), an `unless` tail, no expression at all.
  EXPECT_EQ(alert_expression("http://p/graph?g0.expr=vector%281%29"), "");
  EXPECT_EQ(alert_expression("http://p/graph?g0.expr=up+%3D%3D+1+unless+on+%28job%29+x"), "");
  EXPECT_EQ(alert_expression(""), "");
}

FiringRecord decode_record() {
  FiringRecord r;
  r.selector = "{job=\"serve\"}";
  r.fired_at = 1796000000;
  r.window_s = 300;
  r.baseline_s = 1800;
  r.cause = "decode_slowdown";
  r.stage = "decode";
  r.alert_expr = "inferscope:e2e_seconds:p95{job=\"serve\"}";
  r.alert_labels = {{"alertname", "InferscopeE2eP95OverSlo"}, {"job", "serve"}};
  r.figures = {{r.alert_expr + " (the alert's expression)", "s", 1.2, 3.4},
               {"decode per request", "s", 0.8, 2.6},
               {"e2e mean", "s", 1.0, 3.1}};
  return r;
}

// Tests that the record survives its JSON (the relay keeps it in SQLite until the alert resolves).
TEST(FiringRecord, RoundTripsThroughJson) {
  FiringRecord r = decode_record();
  r.figures.push_back({"e2e p95", "s", kNaN, 2.0});
  auto back = record_from_json(record_to_json(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->cause, "decode_slowdown");
  EXPECT_EQ(back->stage, "decode");
  EXPECT_EQ(back->alert_expr, r.alert_expr);
  EXPECT_EQ(back->alert_labels, r.alert_labels);
  ASSERT_EQ(back->figures.size(), 4u);
  EXPECT_DOUBLE_EQ(back->figures[1].during, 2.6);
  EXPECT_TRUE(std::isnan(back->figures[3].before));
  EXPECT_FALSE(record_from_json("not json"));
  EXPECT_FALSE(record_from_json("{\"cause\":\"x\"}"));
}

// Tests the resolved text: before / during / after of each figure, the cause it fired with, the
// windows named, and no verdict of the recovered window ("healthy: ... (within noise)").
TEST(RenderRecovery, SaysWhatRecoveredBeforeDuringAfter) {
  FiringRecord r = decode_record();
  r.figures[0].after = 1.25;
  r.figures[1].after = 0.81;
  r.figures[2].after = 1.02;
  const std::string md = render_recovery(r, 1796000900, "");
  EXPECT_NE(md.find("It fired with `decode_slowdown` (stage decode); before / during / after:\n"), std::string::npos) << md;
  EXPECT_NE(md.find("- `inferscope:e2e_seconds:p95{job=\"serve\"}` (the alert's expression): before 1.20 s, during 3.40 s, "
                    "after 1.25 s"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- decode per request: before 800 ms, during 2.60 s, after 810 ms"), std::string::npos) << md;
  EXPECT_NE(md.find("- e2e mean: before 1.00 s, during 3.10 s, after 1.02 s"), std::string::npos) << md;
  EXPECT_NE(md.find("_before: the 30m before the window; during: the 5m up to 2026-"), std::string::npos) << md;
  EXPECT_EQ(md.find("healthy"), std::string::npos) << md;
  EXPECT_EQ(md.find("within noise"), std::string::npos) << md;
}

// Tests that a Prometheus that cannot answer at resolve time leaves "after" unknown, saying why,
// and still shows what was seen when it fired.
TEST(RenderRecovery, AfterUnknownSaysWhy) {
  const std::string md = render_recovery(decode_record(), 1796000900, "cannot reach Prometheus");
  EXPECT_NE(md.find("- decode per request: before 800 ms, during 2.60 s, after unknown"), std::string::npos) << md;
  EXPECT_NE(md.find("_after unknown: cannot reach Prometheus_"), std::string::npos) << md;
}

// Tests that a figure with no value at any time is left out (a queue alert whose server served
// nothing: no e2e to time), and that a record whose every figure is empty gives no text at all,
// so the resolved notification carries no "Recovered" part made of "no data".
TEST(RenderRecovery, FiguresWithoutDataAreLeftOut) {
  FiringRecord r;
  r.cause = "workers_down";
  r.stage = "queue_wait";
  r.fired_at = 1796000000;
  r.figures = {{"queue_wait per request", "s", kNaN, kNaN, kNaN},
               {"e2e mean", "s", kNaN, kNaN, kNaN},
               {"inferscope_queue_depth (the alert's expression)", "", 1, 15, 0}};
  const std::string md = render_recovery(r, 1796000900, "");
  EXPECT_NE(md.find("(the alert's expression): before 1, during 15.0, after 0"), std::string::npos) << md;
  EXPECT_EQ(md.find("no data"), std::string::npos) << md;
  EXPECT_EQ(md.find("e2e mean"), std::string::npos) << md;
  r.figures.pop_back();
  EXPECT_EQ(render_recovery(r, 1796000900, ""), "");
}

}  // namespace
}  // namespace inferscope::doctor
