// Tests of custom_dialect.h: a hand-instrumented target's names mapped to roles.
#include "dialect/custom_dialect.h"

#include <gtest/gtest.h>

#include "dialect/promql.h"

namespace inferscope::dialect {
namespace {

// Tests that a mapping becomes bindings of the role's kind, with the unit's scale applied.
TEST(CustomDialectTest, MapsRolesWithKindsAndUnits) {
  auto made = make_custom_dialect({{"e2e", "llm_request_latency_seconds", ""},
                                   {"requests", "llm_requests_total", ""},
                                   {"waiting", "llm_queue_size", ""},
                                   {"gpu_utilization", "gpu_utilization_percent", "percent"},
                                   {"gpu_memory_used", "gpu_memory_used_mb", "MB"},
                                   {"ttft", "llm_first_token_ms", "milliseconds"}},
                                  "model");
  ASSERT_TRUE(made.ok()) << made.error().message;
  const Dialect& table = (*made)->table();
  EXPECT_EQ(table.id, DialectId::kCustom);
  EXPECT_EQ(table.model_label, "model");
  const MetricBinding* e2e = find_binding(table, Role::kE2e);
  ASSERT_NE(e2e, nullptr);
  EXPECT_EQ(e2e->kind, MetricKind::kHistogram);
  EXPECT_EQ(e2e->metric, "llm_request_latency_seconds");
  EXPECT_EQ(find_binding(table, Role::kRequests)->kind, MetricKind::kCounter);
  EXPECT_EQ(find_binding(table, Role::kWaiting)->kind, MetricKind::kGauge);
  EXPECT_DOUBLE_EQ(find_binding(table, Role::kGpuUtilization)->scale, 0.01);
  EXPECT_DOUBLE_EQ(find_binding(table, Role::kGpuMemoryUsed)->scale, 1e6);
  EXPECT_DOUBLE_EQ(find_binding(table, Role::kTtft)->scale, 1e-3);
  EXPECT_EQ(find_binding(table, Role::kDecode), nullptr);
  // The PromQL builders read it like any dialect's binding: ms become seconds.
  const auto ttft = quantile_expr(*find_binding(table, Role::kTtft), 0.95, {.matchers = R"(job="house")", .by = {}, .window = "1m"});
  ASSERT_TRUE(ttft);
  EXPECT_NE(ttft->find("llm_first_token_ms_bucket{job=\"house\"}[1m]"), std::string::npos) << *ttft;
  EXPECT_NE(ttft->find("* 0.001"), std::string::npos) << *ttft;
  // What it lacks among the usual serving roles is listed.
  const auto unmapped = (*made)->unmapped_roles();
  EXPECT_NE(std::find(unmapped.begin(), unmapped.end(), Role::kDecode), unmapped.end());
  EXPECT_EQ(std::find(unmapped.begin(), unmapped.end(), Role::kE2e), unmapped.end());
  // dialect(kCustom) is the empty entry; a custom mapping is never detected or parsed by name.
  EXPECT_TRUE(dialect(DialectId::kCustom).bindings.empty());
  EXPECT_EQ(to_string(DialectId::kCustom), "custom");
  EXPECT_EQ(parse_dialect("custom"), std::nullopt);
}

// Tests that each kind of bad line fails with one line naming the role.
TEST(CustomDialectTest, RejectsBadMappings) {
  const auto error_of = [](std::vector<CustomRole> roles, std::string model_label = {}) {
    auto made = make_custom_dialect(std::move(roles), std::move(model_label));
    return made.ok() ? std::string("accepted") : made.error().message;
  };
  EXPECT_NE(error_of({}).find("no role mapped"), std::string::npos);
  EXPECT_NE(error_of({{"e2ee", "x", ""}}).find("role \"e2ee\": unknown role (mappable: e2e, ttft"), std::string::npos);
  EXPECT_NE(error_of({{"stage", "x", ""}}).find("cannot be mapped to one metric name"), std::string::npos);
  EXPECT_NE(error_of({{"e2e", "a", ""}, {"e2e", "b", ""}}).find("role \"e2e\": mapped twice"), std::string::npos);
  EXPECT_NE(error_of({{"e2e", "llm latency", ""}}).find("is not a metric name"), std::string::npos);
  EXPECT_NE(error_of({{"e2e", "llm_latency_bucket", ""}}).find("base name, without _bucket"), std::string::npos);
  EXPECT_NE(error_of({{"gpu_utilization", "g", "MB"}}).find("unit \"MB\" does not fit a ratio role (use ratio, percent)"),
            std::string::npos);
  EXPECT_NE(error_of({{"requests", "r", "percent"}}).find("(use requests)"), std::string::npos);
  EXPECT_NE(error_of({{"e2e", "x", ""}}, "bad label").find("model_label \"bad label\""), std::string::npos);
}

}  // namespace
}  // namespace inferscope::dialect
