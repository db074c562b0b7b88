// Tests of the dialect table's consistency and of the bindings others rely on by name.
#include "dialect/dialect.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace inferscope::dialect {
namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Tests that every dialect and role spelling round-trips and aliases resolve.
TEST(DialectTableTest, NamesRoundTrip) {
  for (DialectId id : kAllDialects) {
    EXPECT_EQ(parse_dialect(to_string(id)), id) << to_string(id);
    EXPECT_EQ(dialect(id).id, id) << "table order differs from the enum at " << to_string(id);
  }
  std::set<std::string_view> seen;
  for (std::size_t r = 0; r < kRoleCount; ++r) {
    const Role role = static_cast<Role>(r);
    EXPECT_EQ(parse_role(to_string(role)), role);
    EXPECT_TRUE(seen.insert(to_string(role)).second) << "duplicate role name " << to_string(role);
  }
  EXPECT_EQ(parse_dialect("llama.cpp"), DialectId::kLlamaCpp);
  EXPECT_EQ(parse_dialect("node-exporter"), DialectId::kNode);
  EXPECT_EQ(parse_dialect("dynamo"), DialectId::kDynamo);
  EXPECT_EQ(parse_dialect("llm-d"), DialectId::kLlmd);
  EXPECT_EQ(parse_dialect("llmd"), DialectId::kLlmd);
  EXPECT_EQ(to_string(DialectId::kLlmd), "llm-d");
  EXPECT_EQ(parse_dialect("auto"), std::nullopt);
  EXPECT_EQ(parse_role("no_such_role"), std::nullopt);
}

// Tests that bindings are well-formed: one per role, names spelled as the kind requires.
TEST(DialectTableTest, BindingsAreWellFormed) {
  for (DialectId id : kAllDialects) {
    std::set<Role> roles;
    for (const MetricBinding& b : dialect(id).bindings) {
      const std::string where = std::string(to_string(id)) + "/" + std::string(to_string(b.role));
      EXPECT_TRUE(roles.insert(b.role).second) << "two bindings for " << where;
      EXPECT_FALSE(b.metric.empty()) << where;
      EXPECT_GT(b.scale, 0) << where;
      const bool needs_operand = b.kind == MetricKind::kCounterRatio || b.kind == MetricKind::kGaugeSum ||
                                 b.kind == MetricKind::kGaugeDifference;
      EXPECT_EQ(needs_operand, !b.operand.empty()) << where;
      if (b.kind == MetricKind::kHistogram) {
        EXPECT_FALSE(ends_with(b.metric, "_bucket") || ends_with(b.metric, "_count")) << where;
      }
      if (is_latency_role(b.role)) {
        EXPECT_TRUE(b.unit == Unit::kSeconds || b.unit == Unit::kSecondsPerToken) << where;
      }
      for (const LegacyName& legacy : b.legacy) EXPECT_NE(legacy.name, b.metric) << where;
    }
  }
}

// Tests the renamed vLLM names the renamed-metric alerts and the doctor depend on.
TEST(DialectTableTest, VllmRenamesAreRecorded) {
  const MetricBinding* kv = find_binding(DialectId::kVllm, Role::kKvUsage);
  ASSERT_NE(kv, nullptr);
  EXPECT_EQ(kv->metric, "vllm:kv_cache_usage_perc");
  ASSERT_EQ(kv->legacy.size(), 1u);
  EXPECT_EQ(kv->legacy[0].name, "vllm:gpu_cache_usage_perc");
  const MetricBinding* itl = find_binding(DialectId::kVllm, Role::kItl);
  ASSERT_NE(itl, nullptr);
  EXPECT_EQ(itl->metric, "vllm:inter_token_latency_seconds");
  ASSERT_EQ(itl->legacy.size(), 1u);
  EXPECT_EQ(itl->legacy[0].name, "vllm:time_per_output_token_seconds");
  EXPECT_EQ(dialect(DialectId::kVllm).model_label, "model_name");
  EXPECT_EQ(dialect(DialectId::kInferscope).model_label, "model");
}

// Tests that llama.cpp offers only counter ratios for timing and no latency distribution.
TEST(DialectTableTest, LlamaCppHasNoLatencyHistograms) {
  for (Role role : {Role::kE2e, Role::kTtft, Role::kItl, Role::kQueue, Role::kRequests, Role::kErrors}) {
    EXPECT_FALSE(supports(DialectId::kLlamaCpp, role)) << to_string(role);
  }
  const MetricBinding* tpot = find_binding(DialectId::kLlamaCpp, Role::kTpot);
  ASSERT_NE(tpot, nullptr);
  EXPECT_EQ(tpot->kind, MetricKind::kCounterRatio);
  EXPECT_EQ(tpot->metric, "llamacpp:tokens_predicted_seconds_total");
  EXPECT_EQ(tpot->operand, "llamacpp:tokens_predicted_total");
  EXPECT_EQ(find_binding(DialectId::kLlamaCpp, Role::kKvUsage)->presence, Presence::kOptional);
}

// Tests unit scales of the dialects that do not use seconds and bytes.
TEST(DialectTableTest, ScalesNormaliseUnits) {
  EXPECT_DOUBLE_EQ(find_binding(DialectId::kTriton, Role::kE2e)->scale, 1e-6);
  EXPECT_DOUBLE_EQ(find_binding(DialectId::kDcgm, Role::kGpuMemoryUsed)->scale, 1048576);
  EXPECT_DOUBLE_EQ(find_binding(DialectId::kDcgm, Role::kGpuUtilization)->scale, 0.01);
  EXPECT_EQ(dialect(DialectId::kTriton).error_accounting, ErrorAccounting::kDisjointFromRequests);
}

// Tests the disaggregation roles: route and kv_transfer are latency roles (stages), the others
// are not; Dynamo and llm-d name their pool and endpoint labels as their documentation does.
TEST(DialectTableTest, DisaggregationRoles) {
  EXPECT_TRUE(is_latency_role(Role::kRoute));
  EXPECT_TRUE(is_latency_role(Role::kKvTransfer));
  for (Role role : {Role::kKvTransferBytes, Role::kRoutePrefixHit, Role::kPoolWaiting, Role::kEndpointLoad,
                    Role::kSpecAcceptedTokens}) {
    EXPECT_FALSE(is_latency_role(role)) << to_string(role);
  }
  EXPECT_EQ(to_string(Role::kKvTransfer), "kv_transfer");
  EXPECT_EQ(dialect(DialectId::kDynamo).pool_label, "worker_type");
  EXPECT_EQ(dialect(DialectId::kLlmd).pool_label, "name");
  const MetricBinding* pool = find_binding(DialectId::kDynamo, Role::kPoolWaiting);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->metric, "dynamo_frontend_router_queue_pending_requests");
  EXPECT_EQ(pool->kind_label, "worker_type");
  const MetricBinding* route = find_binding(DialectId::kDynamo, Role::kRoute);
  ASSERT_NE(route, nullptr);
  EXPECT_EQ(route->matchers, R"(stage="route")");
  const MetricBinding* e2e = find_binding(DialectId::kLlmd, Role::kE2e);
  ASSERT_NE(e2e, nullptr);
  EXPECT_EQ(e2e->metric, "llm_d_router_epp_request_duration_seconds");
  ASSERT_EQ(e2e->legacy.size(), 1u);
  EXPECT_EQ(e2e->legacy[0].name, "inference_objective_request_duration_seconds");
  // inferscope serve's disaggregated mode (docs/disaggregation.md): the stage histogram's route and
  // kv_transfer values and its pool/endpoint gauges, all features (absent from a plain serve).
  EXPECT_EQ(dialect(DialectId::kInferscope).pool_label, "pool");
  const struct {
    Role role;
    std::string_view metric, matchers, kind_label;
  } inferscope_disagg[] = {
      {Role::kRoute, "inferscope_stage_duration_seconds", R"(stage="route")", ""},
      {Role::kKvTransfer, "inferscope_stage_duration_seconds", R"(stage="kv_transfer")", ""},
      {Role::kKvTransferBytes, "inferscope_kv_transfer_bytes", "", ""},
      {Role::kRoutePrefixHit, "inferscope_router_prefix_hit_ratio", "", ""},
      {Role::kPoolWaiting, "inferscope_pool_requests_waiting", "", "pool"},
      {Role::kEndpointLoad, "inferscope_endpoint_requests", "", "endpoint"},
  };
  for (const auto& want : inferscope_disagg) {
    const MetricBinding* b = find_binding(DialectId::kInferscope, want.role);
    ASSERT_NE(b, nullptr) << to_string(want.role);
    EXPECT_EQ(b->metric, want.metric) << to_string(want.role);
    EXPECT_EQ(b->matchers, want.matchers) << to_string(want.role);
    EXPECT_EQ(b->kind_label, want.kind_label) << to_string(want.role);
    EXPECT_EQ(b->presence, Presence::kFeature) << to_string(want.role);
  }
  // A KV transfer is measured where the backend measures it: only while P/D is on.
  for (DialectId id : {DialectId::kVllm, DialectId::kDynamo, DialectId::kInferscope}) {
    const MetricBinding* kv = find_binding(id, Role::kKvTransfer);
    ASSERT_NE(kv, nullptr) << to_string(id);
    EXPECT_EQ(kv->presence, Presence::kFeature) << to_string(id);
  }
}

}  // namespace
}  // namespace inferscope::dialect
