// Tests of the drill catalog, --only selection, the notifications route's query parsing and the
// report rendering.
#include "drill/drill_cases.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "drill/drill_runner.h"
#include "drill/notification_route.h"
#include "stack/rules/rules_generator.h"

namespace inferscope::drill {
namespace {

// Tests that every alert the rules generator knows is either drilled or listed as not drillable.
TEST(DrillCasesTest, CatalogCoversEveryTargetAlert) {
  for (const char* alert : rules::kTargetAlerts) {
    bool covered = false;
    for (const DrillCase& c : drill_cases()) {
      for (std::string_view a : c.alerts) covered = covered || a == alert;
    }
    for (const NotDrillable& skip : not_drillable()) covered = covered || skip.alert == alert;
    EXPECT_TRUE(covered) << alert;
  }
  for (const DrillCase& c : drill_cases()) {
    const auto body = nlohmann::json::parse(c.inject_json, nullptr, false);
    ASSERT_TRUE(body.is_object()) << c.name;
    EXPECT_TRUE(body.value("clear", false)) << c.name << ": a case starts from no other fault";
  }
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
  EXPECT_EQ(by_alert[0].alerts, std::vector<std::string_view>{"InferscopeE2eP99OverSlo"});
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
  report.rows.push_back({"InferscopeErrorRatioHigh", "serve", "error_rate", true, 4.5, true, 11});
  report.rows.push_back({"InferscopeKvCacheFull", "serve", "kv_capacity", false, 0, false, 0});
  report.skipped.emplace_back("InferscopeTargetDown", "why");
  EXPECT_FALSE(report.all_fired());
  const std::string table = render_table(report);
  EXPECT_NE(table.find("InferscopeErrorRatioHigh           error_rate       yes               4.5 yes"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("InferscopeTargetDown               not drilled: why"), std::string::npos) << table;
  const auto json = nlohmann::json::parse(render_json(report));
  EXPECT_EQ(json["rows"][0]["seconds_to_notification"], 4.5);
  EXPECT_TRUE(json["rows"][1]["seconds_to_notification"].is_null());
  EXPECT_FALSE(json["all_fired"]);
  report.rows.pop_back();
  EXPECT_TRUE(report.all_fired());
  EXPECT_FALSE(DrillReport{}.all_fired());
}

}  // namespace
}  // namespace inferscope::drill
