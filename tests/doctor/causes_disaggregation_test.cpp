// Unit tests of the disaggregation family (causes_disaggregation.cpp) and the fleet signals it reads
// (fleet_pools.h), on CONSTRUCTED expositions (fleet_support.h) of a router + 2 prefill + 2 decode
// workers in three dialects: inferscope serve's disaggregated names, NVIDIA Dynamo's and llm-d's
// router's. Each incident is a before/after pair sampled the way `doctor --scrape` samples.
#include <gtest/gtest.h>

#include <algorithm>

#include "doctor/diagnosis_format.h"
#include "doctor/fleet_pools.h"
#include "doctor/fleet_support.h"

namespace inferscope::doctor {
namespace {

using testing::FleetDialect;
using testing::FleetEndpoint;
using testing::FleetState;
using testing::fleet_snapshot;
using testing::healthy_fleet;

std::string fleet_dialect_name(FleetDialect d) {
  switch (d) {
    case FleetDialect::kInferscope: return "inferscope";
    case FleetDialect::kDynamo: return "dynamo";
    case FleetDialect::kLlmd: return "llm-d";
  }
  return "";
}

const Finding* disagg_finding(const Diagnosis& d, const std::string& cause) {
  for (const Finding& f : d.findings)
    if (f.cause == cause) return &f;
  return nullptr;
}

// --- incidents (what serve's faults do to the fleet, in the model of fleet_support.h) --------

// Every transfer `factor` x slower (serve's kv_transfer fault).
FleetState fleet_kv_slowed(double factor) {
  FleetState s = healthy_fleet();
  s.kv_transfer *= factor;
  return s;
}

// The prefill pool cut to one worker: prefill-1 takes nothing, prefill-0 runs both workers' share
// and `waiting` requests queue for it.
FleetState fleet_prefill_cut(double waiting) {
  FleetState s = healthy_fleet();
  s.endpoint("prefill-1") = {"prefill", "prefill-1", 0, 0};
  s.endpoint("prefill-0") = {"prefill", "prefill-0", waiting, 1};
  s.queue += waiting / s.rate;
  return s;
}

// The decode pool cut to one worker: decode-0 runs a bigger batch (each token a little slower).
FleetState fleet_decode_cut(double waiting) {
  FleetState s = healthy_fleet();
  s.endpoint("decode-1") = {"decode", "decode-1", 0, 0};
  s.endpoint("decode-0") = {"decode", "decode-0", waiting, 6};
  s.queue += waiting / s.rate;
  s.decode *= 1.25;
  return s;
}

// The router piles requests onto decode-0 (a hot prefix it holds: the prefix hit rises).
FleetState fleet_routed_onto_decode0(double waiting) {
  FleetState s = healthy_fleet();
  s.endpoint("decode-0") = {"decode", "decode-0", waiting, 5};
  s.endpoint("decode-1") = {"decode", "decode-1", 0, 1};
  s.queue += waiting / s.rate;
  s.decode *= 1.15;
  s.prefix_hit = 0.55;
  return s;
}

const FleetDialect kFleetDialects[] = {FleetDialect::kInferscope, FleetDialect::kDynamo, FleetDialect::kLlmd};

// Tests that both the per-pool waiting and the per-endpoint load are read by their labels in each
// dialect, that an llm-d pool of both kinds gets its prefill and decode waiting from its pods, and
// the derived time per MB and load spread.
TEST(FleetSignalsTest, PoolsAndEndpointsPerDialect) {
  const FleetState healthy = healthy_fleet();
  const Snapshot in = fleet_snapshot(FleetDialect::kInferscope, healthy, healthy);
  ASSERT_EQ(in.pools.size(), 2u);
  EXPECT_NEAR(in.pools.at("prefill").incident.mean, 0.4, 0.02);
  EXPECT_NEAR(in.pools.at("decode").incident.mean, 0.2, 0.01);
  ASSERT_EQ(in.endpoints.size(), 4u);
  EXPECT_NEAR(in.endpoints.at("decode/decode-1").incident.mean, 3.1, 0.1);
  const Quantity* per_mb = in.find(SignalId::kKvTransferTimePerMb);
  ASSERT_NE(per_mb, nullptr);
  EXPECT_NEAR(per_mb->incident.mean, 0.04 / 260, 0.04 / 260 * 0.1);
  const Quantity* spread = in.find(SignalId::kEndpointLoadSpread);
  ASSERT_NE(spread, nullptr);
  EXPECT_NEAR(spread->incident.mean, 1.0, 0.05);

  const Snapshot dy = fleet_snapshot(FleetDialect::kDynamo, healthy, healthy);
  EXPECT_EQ(dy.dialect, "dynamo");
  ASSERT_EQ(dy.pools.count("prefill"), 1u);
  EXPECT_NEAR(dy.pools.at("decode").incident.mean, 0.2, 0.01);
  ASSERT_EQ(dy.endpoints.size(), 4u);
  std::size_t decode_workers = 0;
  for (const auto& [key, q] : dy.endpoints) decode_workers += split_endpoint_key(key).first == "decode";
  EXPECT_EQ(decode_workers, 2u);  // worker_type is the pool, worker_id the endpoint
  EXPECT_NE(dy.find(SignalId::kKvTransferTimePerMb), nullptr);

  const Snapshot ll = fleet_snapshot(FleetDialect::kLlmd, healthy, healthy);
  EXPECT_EQ(ll.dialect, "llm-d");
  ASSERT_EQ(ll.pools.count("qwen3-pool"), 1u);  // the InferencePool's average queue
  ASSERT_EQ(ll.pools.count("prefill"), 1u);     // summed from pods named prefill
  EXPECT_NEAR(ll.pools.at("prefill").incident.mean, 0.4, 0.02);
  EXPECT_NEAR(ll.pools.at("decode").incident.mean, 0.2, 0.01);
  ASSERT_EQ(ll.endpoints.count("qwen3-pool/qwen3-decode-0"), 1u);
  const std::vector<EndpointSpread> groups = endpoint_spreads(ll);
  ASSERT_EQ(groups.size(), 2u);  // prefill pods and decode pods compared apart
  EXPECT_EQ(pool_kind(groups[0].group) == PoolKind::kOther, false);
}

// Tests that a healthy fleet is healthy in every dialect (the new causes need a change).
TEST(DisaggregationCausesTest, HealthyFleetIsHealthy) {
  for (FleetDialect dialect : kFleetDialects) {
    const Diagnosis d = diagnose(fleet_snapshot(dialect, healthy_fleet(), healthy_fleet()));
    EXPECT_EQ(d.verdict, "healthy") << fleet_dialect_name(dialect) << "\n" << to_text(d, true);
  }
}

// Tests that every KV transfer x5 and x3 slower is named kv_transfer_slowdown first, on the
// kv_transfer stage, in inferscope's and Dynamo's names (llm-d's router exposes no transfer: its
// decode pods' vllm:nixl_* do), and that prefill/decode slowdowns and capacity_drop do not claim it.
TEST(DisaggregationCausesTest, KvTransferSlowdownNamedFirst) {
  for (FleetDialect dialect : {FleetDialect::kInferscope, FleetDialect::kDynamo}) {
    for (double factor : {5.0, 3.0}) {
      const Diagnosis d = diagnose(fleet_snapshot(dialect, healthy_fleet(), fleet_kv_slowed(factor)));
      const std::string label = fleet_dialect_name(dialect) + " x" + std::to_string(factor) + "\n" + to_text(d, true);
      ASSERT_EQ(d.verdict, "degraded") << label;
      ASSERT_FALSE(d.findings.empty()) << label;
      EXPECT_EQ(d.findings.front().cause, "kv_transfer_slowdown") << label;
      EXPECT_EQ(d.findings.front().stage, "kv_transfer") << label;
      EXPECT_TRUE(d.findings.front().where.endpoint.empty()) << label;  // every link: the fleet
      for (const char* other : {"prefill_slowdown", "decode_slowdown", "capacity_drop", "routing_imbalance",
                                "prefill_pool_saturated", "decode_pool_saturated"})
        EXPECT_EQ(disagg_finding(d, other), nullptr) << other << " " << label;
    }
  }
}

// Tests one degraded link (serve's kv_link fault): transfers to decode-1 x9 slower, so the mean
// transfer is x5 and decode-1 holds each of its requests 0.8 s longer (rate/2 x 0.8 s = 1.6 more
// in its load). kv_transfer_slowdown is first and names decode-1; routing_imbalance does not
// claim the endpoint that stands out.
TEST(DisaggregationCausesTest, KvTransferSlowdownOnOneLinkNamesTheEndpoint) {
  FleetState before = healthy_fleet();
  before.kv_transfer = 0.1;
  FleetState after = before;
  after.kv_transfer = 0.1 * (1 + 9) / 2;
  after.endpoint("decode-1").waiting += after.rate / 2 * 0.1 * 8;
  for (FleetDialect dialect : {FleetDialect::kInferscope, FleetDialect::kDynamo}) {
    const Diagnosis d = diagnose(fleet_snapshot(dialect, before, after));
    const std::string label = fleet_dialect_name(dialect) + "\n" + to_text(d, true);
    ASSERT_FALSE(d.findings.empty()) << label;
    EXPECT_EQ(d.findings.front().cause, "kv_transfer_slowdown") << label;
    EXPECT_EQ(d.findings.front().where.pool, "decode") << label;
    if (dialect == FleetDialect::kInferscope) {
      EXPECT_EQ(d.findings.front().where.endpoint, "decode-1") << label;
    }
    else EXPECT_FALSE(d.findings.front().where.endpoint.empty()) << label;
    EXPECT_EQ(disagg_finding(d, "routing_imbalance"), nullptr) << label;
  }
}

// Tests that the prefill pool cut to one worker (its queue 0.4 -> 6 and -> 3 requests, the decode
// pool's unchanged) is prefill_pool_saturated first with where.pool, the out-of-rotation worker in
// its next steps, and not capacity_drop or routing_imbalance, in the three dialects.
TEST(DisaggregationCausesTest, PrefillPoolSaturatedNamedFirst) {
  for (FleetDialect dialect : kFleetDialects) {
    for (double waiting : {6.0, 3.0}) {
      const Diagnosis d = diagnose(fleet_snapshot(dialect, healthy_fleet(), fleet_prefill_cut(waiting)));
      const std::string label = fleet_dialect_name(dialect) + " waiting " + std::to_string(waiting) + "\n" + to_text(d, true);
      ASSERT_FALSE(d.findings.empty()) << label;
      const Finding& top = d.findings.front();
      EXPECT_EQ(top.cause, "prefill_pool_saturated") << label;
      EXPECT_EQ(top.where.pool, "prefill") << label;
      EXPECT_NE(d.headline.find("in pool prefill"), std::string::npos) << label;
      bool ratio_step = false;
      for (const std::string& step : top.next_steps) ratio_step |= step.find("P:D ratio") != std::string::npos;
      EXPECT_TRUE(ratio_step) << label;
      for (const char* other : {"capacity_drop", "routing_imbalance", "decode_pool_saturated", "kv_transfer_slowdown"})
        EXPECT_EQ(disagg_finding(d, other), nullptr) << other << " " << label;
    }
  }
}

// Tests that the decode pool cut to one worker (bigger batches there, each token x1.25) is
// decode_pool_saturated first with where.pool, not decode_slowdown or capacity_drop.
TEST(DisaggregationCausesTest, DecodePoolSaturatedNamedFirst) {
  for (FleetDialect dialect : kFleetDialects) {
    for (double waiting : {5.0, 2.5}) {
      const Diagnosis d = diagnose(fleet_snapshot(dialect, healthy_fleet(), fleet_decode_cut(waiting)));
      const std::string label = fleet_dialect_name(dialect) + " waiting " + std::to_string(waiting) + "\n" + to_text(d, true);
      ASSERT_FALSE(d.findings.empty()) << label;
      EXPECT_EQ(d.findings.front().cause, "decode_pool_saturated") << label;
      EXPECT_EQ(d.findings.front().where.pool, "decode") << label;
      for (const char* other : {"capacity_drop", "decode_slowdown", "routing_imbalance", "prefill_pool_saturated"})
        EXPECT_EQ(disagg_finding(d, other), nullptr) << other << " " << label;
    }
  }
}

// Tests that a decode pool cut whose one decode worker left now holds every prefix (the router's
// prefix hit up, as with a hot prefix) is still the pool's saturation where the endpoint load
// counts running requests (a worker with none is out of rotation, not idle beside a hot one).
TEST(DisaggregationCausesTest, DecodeCutWithPrefixHitUpIsStillThePool) {
  for (FleetDialect dialect : {FleetDialect::kInferscope, FleetDialect::kDynamo}) {
    FleetState cut = fleet_decode_cut(5);
    cut.prefix_hit = 0.6;
    const Diagnosis d = diagnose(fleet_snapshot(dialect, healthy_fleet(), cut));
    ASSERT_FALSE(d.findings.empty()) << to_text(d, true);
    EXPECT_EQ(d.findings.front().cause, "decode_pool_saturated") << fleet_dialect_name(dialect) << "\n" << to_text(d, true);
    EXPECT_EQ(disagg_finding(d, "routing_imbalance"), nullptr) << to_text(d, true);
  }
}

// Tests that requests piled onto one decode endpoint while its peer idles (a hot prefix: the
// router's prefix hit 30 % -> 55 %) is routing_imbalance first with where.endpoint and pool, not
// the decode pool's saturation, decode_slowdown or capacity_drop.
TEST(DisaggregationCausesTest, RoutingImbalanceNamedFirst) {
  for (FleetDialect dialect : kFleetDialects) {
    for (double waiting : {4.0, 2.0}) {
      const Diagnosis d = diagnose(fleet_snapshot(dialect, healthy_fleet(), fleet_routed_onto_decode0(waiting)));
      const std::string label = fleet_dialect_name(dialect) + " waiting " + std::to_string(waiting) + "\n" + to_text(d, true);
      ASSERT_FALSE(d.findings.empty()) << label;
      const Finding& top = d.findings.front();
      EXPECT_EQ(top.cause, "routing_imbalance") << label;
      EXPECT_EQ(top.where.pool, dialect == FleetDialect::kLlmd ? "qwen3-pool" : "decode") << label;
      EXPECT_FALSE(top.where.endpoint.empty()) << label;
      if (dialect != FleetDialect::kDynamo) {  // Dynamo names a worker by its numeric worker_id
        EXPECT_NE(top.where.endpoint.find("decode-0"), std::string::npos) << label;
      }
      for (const char* other : {"capacity_drop", "decode_slowdown", "decode_pool_saturated"})
        EXPECT_EQ(disagg_finding(d, other), nullptr) << other << " " << label;
    }
  }
}

// Tests that the new evidence is what keeps the old causes off: the same decode pool cut and the
// same skew read without the pool and endpoint gauges (what the doctor read before them) are
// claimed by an old cause; with them, by the fleet's own.
TEST(DisaggregationCausesTest, OldCausesClaimTheIncidentWithoutThePoolSeries) {
  const char* old_causes[] = {"capacity_drop", "decode_slowdown", "load_increase", "kv_cache_pressure", "unexplained"};
  for (FleetState incident : {fleet_decode_cut(5), fleet_routed_onto_decode0(4)}) {
    FleetState before = healthy_fleet();
    before.fleet_gauges = false;
    incident.fleet_gauges = false;
    const Diagnosis blind = diagnose(fleet_snapshot(FleetDialect::kInferscope, before, incident));
    ASSERT_FALSE(blind.findings.empty()) << to_text(blind, true);
    EXPECT_NE(std::find_if(std::begin(old_causes), std::end(old_causes),
                           [&](const char* c) { return blind.findings.front().cause == c; }),
              std::end(old_causes))
        << to_text(blind, true);
    incident.fleet_gauges = true;
    const Diagnosis seen = diagnose(fleet_snapshot(FleetDialect::kInferscope, healthy_fleet(), incident));
    ASSERT_FALSE(seen.findings.empty());
    EXPECT_NE(seen.findings.front().cause, blind.findings.front().cause) << to_text(seen, true);
    EXPECT_EQ(disagg_finding(seen, blind.findings.front().cause), nullptr) << to_text(seen, true);
  }
}

// Tests the plain incidents on an aggregated serve (no pool, endpoint, route or transfer series):
// a decode slowdown is still decode_slowdown and a rate surge still load_increase, and no cause of
// this family is weighed at all.
TEST(DisaggregationCausesTest, PlainIncidentsNamedAsBefore) {
  FleetState plain = healthy_fleet();
  plain.disaggregated = false;
  FleetState slower = plain;
  slower.decode *= 2;
  Diagnosis d = diagnose(fleet_snapshot(FleetDialect::kInferscope, plain, slower));
  ASSERT_FALSE(d.findings.empty()) << to_text(d, true);
  EXPECT_EQ(d.findings.front().cause, "decode_slowdown") << to_text(d, true);
  FleetState surge = plain;
  surge.rate *= 2;
  for (FleetEndpoint& e : surge.endpoints) e.waiting += 2;
  surge.queue += 8 / surge.rate;
  Diagnosis r = diagnose(fleet_snapshot(FleetDialect::kInferscope, plain, surge));
  ASSERT_FALSE(r.findings.empty()) << to_text(r, true);
  EXPECT_EQ(r.findings.front().cause, "load_increase") << to_text(r, true);
  for (const Diagnosis* one : {&d, &r})
    for (const char* cause : {"kv_transfer_slowdown", "prefill_pool_saturated", "decode_pool_saturated", "routing_imbalance"}) {
      EXPECT_EQ(disagg_finding(*one, cause), nullptr) << cause;
      for (const Considered& c : one->considered) EXPECT_NE(c.cause, cause);
    }
}

// Tests that where.pool and where.endpoint reach the JSON, the text and the Markdown.
TEST(DisaggregationCausesTest, WhereInEveryFormat) {
  const Diagnosis d = diagnose(fleet_snapshot(FleetDialect::kInferscope, healthy_fleet(), fleet_routed_onto_decode0(4)));
  ASSERT_FALSE(d.findings.empty());
  const nlohmann::json j = to_json(d);
  EXPECT_EQ(j["findings"][0]["where"]["pool"], "decode") << j.dump(2);
  EXPECT_EQ(j["findings"][0]["where"]["endpoint"], "decode-0") << j.dump(2);
  EXPECT_NE(to_text(d).find("where: pool=decode endpoint=decode-0"), std::string::npos) << to_text(d);
  EXPECT_NE(to_markdown(d).find("pool=decode endpoint=decode-0"), std::string::npos) << to_markdown(d);
  bool pool_signal = false;
  for (const auto& s : j["signals"]) pool_signal |= s["id"] == "pool_waiting" && s["pool"] == "decode";
  EXPECT_TRUE(pool_signal);
}

}  // namespace
}  // namespace inferscope::doctor
