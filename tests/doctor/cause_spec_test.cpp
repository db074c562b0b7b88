// Unit tests of the cause table and the typed ids: every CauseId has its one spec, the stable
// ids round-trip, and the shares a spec's weights give behave as docs/doctor.md says (a gateway
// stage carries the engine stages it stands for, only where those are not measured).
#include "doctor/cause_spec.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "doctor/diagnosis.h"
#include "doctor/signal_id.h"
#include "doctor/stage_shares.h"

namespace inferscope::doctor {
namespace {

// Tests that the table holds each CauseId exactly once, in enum order, with a unique stable id.
TEST(CauseSpecTest, EveryCauseHasOneSpecInIdOrder) {
  std::set<std::string_view> names;
  std::size_t i = 0;
  for (const CauseSpec& c : cause_table()) {
    EXPECT_EQ(static_cast<std::size_t>(c.id), i++);
    EXPECT_FALSE(c.name.empty());
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate id " << c.name;
    EXPECT_EQ(cause_from_string(c.name), c.id);
    EXPECT_EQ(to_string(c.id), c.name);
    EXPECT_FALSE(c.next_steps.empty()) << c.name;
  }
  EXPECT_EQ(i, static_cast<std::size_t>(CauseId::kUnexplained) + 1);
  EXPECT_EQ(cause_from_string("no_such_cause"), std::nullopt);
}

// Tests that a cause moving the pipeline has its own stage, weighted 1, and that the stable ids
// DESIGN.md lists are spelled as before.
TEST(CauseSpecTest, PipelineCausesWeighTheirOwnStageFully) {
  for (const CauseSpec& c : cause_table()) {
    if (c.weights.empty()) continue;
    ASSERT_TRUE(c.stage.has_value()) << c.name;
    EXPECT_EQ(c.weight_on(*c.stage), 1.0) << c.name;
  }
  EXPECT_EQ(to_string(CauseId::kKvCachePressure), "kv_cache_pressure");
  EXPECT_EQ(to_string(CauseId::kGatewayQueue), "gateway_queue");
  EXPECT_EQ(to_string(CauseId::kErrorSpike), "error_spike");
  EXPECT_EQ(to_string(CauseId::kWorkersDown), "workers_down");
  EXPECT_EQ(to_string(CauseId::kQueueBacklog), "queue_backlog");
  EXPECT_EQ(to_string(CauseId::kWorkerFailures), "worker_failures");
  EXPECT_EQ(to_string(CauseId::kUnexplained), "unexplained");
}

// Tests that signal ids round-trip and land in the right Snapshot map.
TEST(SignalIdTest, IdsRoundTripAndKnowTheirMap) {
  for (std::size_t i = 0; i <= static_cast<std::size_t>(SignalId::kQueueWorkersStale); ++i) {
    auto id = static_cast<SignalId>(i);
    EXPECT_EQ(signal_from_string(to_string(id)), id) << to_string(id);
  }
  EXPECT_EQ(signal_from_string("no_such_signal"), std::nullopt);
  Snapshot s;
  s.latency["e2e"].metric = "latency";
  s.signals["kv_usage"].metric = "signal";
  s.stages["decode"].metric = "stage";
  ASSERT_NE(s.find(SignalId::kE2e), nullptr);
  EXPECT_EQ(s.find(SignalId::kE2e)->metric, "latency");
  EXPECT_EQ(s.find(SignalId::kKvUsage)->metric, "signal");
  EXPECT_EQ(s.find(dialect::Role::kDecode)->metric, "stage");
  EXPECT_EQ(s.find(SignalId::kTtft), nullptr);
}

// Tests that a gateway's stages stand for the engine's: the stream for decode, the upstream's
// TTFT for queue and prefill.
TEST(StageSharesTest, GatewayStagesStandForEngineStages) {
  EXPECT_EQ(detail::gateway_stage_of(Stage::kDecode), Stage::kStream);
  EXPECT_EQ(detail::gateway_stage_of(Stage::kQueue), Stage::kUpstreamTtft);
  EXPECT_EQ(detail::gateway_stage_of(Stage::kPrefill), Stage::kUpstreamTtft);
  EXPECT_EQ(detail::gateway_stage_of(Stage::kSend), std::nullopt);
  EXPECT_TRUE(detail::stands_for(Stage::kDecode).empty());
}

// with_rise makes an Evaluation where `stage` rose by `delta` s per request and the given
// causes hold the given strengths.
detail::Evaluation& with_rise(detail::Evaluation& e, Stage stage, double delta,
                              std::initializer_list<std::pair<CauseId, double>> causes) {
  e.stage_deltas[std::string(dialect::to_string(stage))] = delta;
  for (auto [id, strength] : causes) e.add(id).strength = strength;
  return e;
}

// Tests that a stage's rise is shared by strength x weight: on decode, long outputs (weight 1)
// take twice what KV pressure (weight 0.5) takes at the same strength, and the shares add up.
TEST(StageSharesTest, SharesFollowStrengthTimesWeight) {
  Snapshot s;
  DiagnoseOptions o;
  detail::Evaluation e(s, o);
  with_rise(e, Stage::kDecode, 0.3, {{CauseId::kLongOutputs, 0.6}, {CauseId::kKvCachePressure, 0.6}});
  detail::assign_shares(e);
  double outputs = e.find(CauseId::kLongOutputs)->portions["decode"];
  double kv = e.find(CauseId::kKvCachePressure)->portions["decode"];
  EXPECT_NEAR(outputs, 0.2, 1e-12);
  EXPECT_NEAR(kv, 0.1, 1e-12);
}

// Tests that behind a gateway the stream takes the decode weights, but not next to a measured
// decode stage (the same time would count twice), and that a decode cap bounds a prefill-side
// cause, its remainder going to the others.
TEST(StageSharesTest, StreamCarriesDecodeOnlyWithoutDecodeAndCapsHold) {
  Snapshot s;
  DiagnoseOptions o;
  detail::Evaluation gateway(s, o);
  with_rise(gateway, Stage::kStream, 0.4, {{CauseId::kDecodeSlowdown, 0.5}, {CauseId::kLongPrompts, 0.5}});
  gateway.found.decode_caps[CauseId::kLongPrompts] = 0.05;
  detail::assign_shares(gateway);
  EXPECT_NEAR(gateway.find(CauseId::kLongPrompts)->portions["stream"], 0.05, 1e-12);
  EXPECT_NEAR(gateway.find(CauseId::kDecodeSlowdown)->portions["stream"], 0.35, 1e-12);

  detail::Evaluation both(s, o);
  with_rise(both, Stage::kStream, 0.4, {{CauseId::kDecodeSlowdown, 0.5}});
  both.stage_deltas["decode"] = 0;
  detail::assign_shares(both);
  EXPECT_TRUE(both.find(CauseId::kDecodeSlowdown)->portions.empty());
}

}  // namespace
}  // namespace inferscope::doctor
