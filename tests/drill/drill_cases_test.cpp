// Tests of the drill catalog, --only selection, the notifications route's query parsing and the
// report rendering.
#include "drill/drill_cases.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "alerts/rules_generator.h"
#include "drill/drill_robot.h"
#include "drill/drill_runner.h"
#include "drill/notification_route.h"

namespace inferscope::drill {
namespace {

// Tests that every alert the rules generator makes (per target and the relay's) has a drill case
// except the engine-feature and disaggregation ones, which a whole drill reports as not drilled (drill integration test),
// and that every fault body starts from no other fault.
TEST(DrillCasesTest, CatalogCoversEveryAlert) {
  std::vector<std::string> alerts;
  std::set<std::string_view> not_drilled(std::begin(alerts::kEngineFeatureAlerts), std::end(alerts::kEngineFeatureAlerts));
  not_drilled.insert(std::begin(alerts::kDisaggregationAlerts), std::end(alerts::kDisaggregationAlerts));
  for (const char* alert : alerts::kTargetAlerts) {
    if (!not_drilled.contains(alert)) alerts.emplace_back(alert);
  }
  alerts.emplace_back(alerts::kNotificationsFailing);
  for (const std::string& alert : alerts) {
    bool covered = false;
    for (const DrillCase& c : drill_cases()) {
      for (const std::string& a : c.alerts) covered = covered || a == alert;
    }
    EXPECT_TRUE(covered) << alert;
  }
  for (const DrillCase& c : drill_cases()) {
    if (c.how == DrillHow::kLoad) {
      EXPECT_TRUE(c.inject_json.empty()) << c.name;
      continue;
    }
    const auto body = nlohmann::json::parse(c.inject_json, nullptr, false);
    ASSERT_TRUE(body.is_object()) << c.name;
    EXPECT_TRUE(body.value("clear", false)) << c.name << ": a case starts from no other fault";
  }
  EXPECT_EQ(drill_cases().front().how, DrillHow::kLoad) << "the throughput baseline needs no fault before it";
  EXPECT_LT(kShortOutputTokens * 2, kFullOutputTokens) << "below the alert's 50 %";
}

// Tests that the latency_absent case hides exactly the inferscope latency families the absent
// alert expects, and never the request counter the lazy ones are judged by.
TEST(DrillCasesTest, HiddenFamilies) {
  const auto families = hidden_latency_families();
  for (const char* name : {"inferscope_request_duration_seconds", "inferscope_time_to_first_token_seconds",
                           "inferscope_stage_duration_seconds", "inferscope_inter_token_latency_seconds",
                           "inferscope_time_per_output_token_seconds"}) {
    EXPECT_NE(std::find(families.begin(), families.end(), name), families.end()) << name;
  }
  EXPECT_EQ(std::find(families.begin(), families.end(), "inferscope_requests_total"), families.end());
  const auto absent = select_cases("InferscopeLatencyMetricsAbsent");
  ASSERT_EQ(absent.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(absent[0].inject_json)["hide_metrics"], nlohmann::json(families));
}

// Tests --only by case name and by alert name, and an unknown name.
TEST(DrillCasesTest, SelectCases) {
  EXPECT_EQ(select_cases("").size(), drill_cases().size());
  const auto by_case = select_cases("dependency");
  ASSERT_EQ(by_case.size(), 1u);
  EXPECT_EQ(by_case[0].alerts.size(), 3u);
  const auto by_alert = select_cases("InferscopeE2eP99OverSlo");
  ASSERT_EQ(by_alert.size(), 1u);
  EXPECT_EQ(by_alert[0].name, "dependency");
  EXPECT_EQ(by_alert[0].alerts, std::vector<std::string>{"InferscopeE2eP99OverSlo"});
  EXPECT_TRUE(select_cases("NoSuchAlert").empty());
}

// Tests the `since` query parameter of GET /api/notifications.
TEST(DrillCasesTest, ParseSince) {
  EXPECT_EQ(*parse_since(""), std::nullopt);
  EXPECT_EQ(*parse_since("x=1&since=1796047000.5"), 1796047000.5);
  EXPECT_FALSE(parse_since("since=abc"));
  EXPECT_FALSE(parse_since("since="));
  EXPECT_FALSE(parse_since("since=-5"));
  EXPECT_EQ(parse_since("since=1e").error().message, "cannot read 'since': expected Unix seconds, got '1e'");
}

// Tests the table and JSON renderings and the exit criterion.
TEST(DrillCasesTest, RenderReport) {
  DrillReport report;
  report.rows.push_back({"InferscopeErrorRatioHigh", "serve", "error_rate", "fault", true, 4.5, true, 11});
  report.rows.push_back({"InferscopeKvCacheFull", "serve", "kv_capacity", "fault", false, 0, false, 0});
  report.skipped.emplace_back("InferscopeTargetDown", "why");
  EXPECT_FALSE(report.all_fired());
  const std::string table = render_table(report);
  EXPECT_NE(table.find("InferscopeErrorRatioHigh           error_rate         fault            yes               4.5 yes"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("InferscopeTargetDown               not drilled: why"), std::string::npos) << table;
  const auto json = nlohmann::json::parse(render_json(report));
  EXPECT_EQ(json["rows"][0]["seconds_to_notification"], 4.5);
  EXPECT_EQ(json["rows"][0]["how"], "fault");
  EXPECT_TRUE(json["rows"][1]["seconds_to_notification"].is_null());
  EXPECT_FALSE(json["all_fired"]);
  report.rows.pop_back();
  EXPECT_TRUE(report.all_fired());
  EXPECT_FALSE(DrillReport{}.all_fired());
}

// Tests the body of POST /api/drill (the robot's refuse switch).
TEST(DrillCasesTest, ParseDrillSwitch) {
  EXPECT_TRUE(*parse_drill_switch(R"({"refuse": true})"));
  EXPECT_FALSE(*parse_drill_switch(R"({"refuse": false})"));
  for (const char* bad : {"", "[]", "{}", R"({"refuse": 1})", R"({"refuse": true, "x": 1})", "{"}) {
    auto r = parse_drill_switch(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().message, "cannot read the drill switch: expected {\"refuse\": true|false}");
  }
}

}  // namespace
}  // namespace inferscope::drill
