// Tests when the page collapses a row (detail::row_states): only a row with a collapse note, only
// when every chart of it is empty and the selected target exposes none of the metrics its series
// come from (fixed matchers and the job counted), never while the banner explains the page.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dashboard/detail/refresh_phases.h"
#include "dashboard/panel_catalog.h"
#include "dashboard/panel_queries.h"
#include "dialect/dialect.h"

namespace inferscope::dashboard::detail {
namespace {

using dialect::DialectId;
using nlohmann::json;

// note_of returns the collapse note of row `id`.
std::string_view note_of(std::string_view id) {
  for (const RowSpec& row : dashboard_rows()) {
    if (row.id == id) return row.collapse_note;
  }
  return {};
}

// panels_with answers every time-series panel "ok", those of the rows in `empty_rows` "no_data".
json panels_with(const std::vector<const RowSpec*>& rows, const std::set<std::string>& empty_rows) {
  json panels = json::object();
  for (const RowSpec* row : rows) {
    for (const PanelSpec& p : row->panels) {
      if (p.kind != PanelKind::kTimeseries && p.kind != PanelKind::kStacked) continue;
      panels[std::string(p.id)] = {{"status", empty_rows.count(std::string(row->id)) ? "no_data" : "ok"}};
    }
  }
  return panels;
}

class RowStatesTest : public ::testing::Test {
 protected:
  json states(const Selection& selection, const Presence& presence, const std::set<std::string>& empty_rows,
              const std::string& problem = "") {
    const QueryBatch batch = plan_queries(rows_, selection, problem, grid_);
    return row_states(rows_, batch, presence, selection, problem, panels_with(rows_, empty_rows));
  }
  std::vector<const RowSpec*> rows_ = shown_rows(false);
  TimeGrid grid_{.start = 0, .end = 900, .step = 5, .points = 181};
  Selection serve_{.dialect = DialectId::kInferscope, .job = "serve", .model = ""};
};

// Tests that a plain serve (its other stages exposed, no kv_transfer stage, no pool or feature
// series) gets both rows collapsed, each with its reason naming the job and where the series come
// from; the other rows are not listed.
TEST_F(RowStatesTest, RowsCollapseWhenTheTargetExposesNoneOfTheirSeries) {
  Presence presence;
  presence["inferscope_stage_duration_seconds_count"] = {"serve"};
  presence[R"(inferscope_stage_duration_seconds_count{stage="kv_transfer"})"] = {};  // checked: none
  const json out = states(serve_, presence, {"features", "disagg"});
  ASSERT_EQ(out.size(), 2u) << out.dump();
  EXPECT_EQ(out["disagg"].value("status", ""), "collapsed") << out.dump();
  EXPECT_EQ(out["disagg"].value("reason", ""),
            "target job=serve exposes none of this row's series: " + std::string(note_of("disagg")));
  EXPECT_EQ(out["features"].value("status", ""), "collapsed") << out.dump();
}

// Tests that one exposed series keeps its row open (its empty charts say why themselves), that a
// series exposed only by another job does not, and that one drawn chart keeps the row open.
TEST_F(RowStatesTest, AnExposedSeriesOrADrawnChartKeepsTheRowOpen) {
  Presence presence;
  presence["inferscope_pool_requests_waiting"] = {"serve"};
  EXPECT_EQ(states(serve_, presence, {"disagg"})["disagg"].value("status", ""), "shown");
  presence["inferscope_pool_requests_waiting"] = {"other"};
  EXPECT_EQ(states(serve_, presence, {"disagg"})["disagg"].value("status", ""), "collapsed");
  presence[R"(inferscope_stage_duration_seconds_count{stage="kv_transfer"})"] = {"serve"};
  EXPECT_EQ(states(serve_, presence, {"disagg"})["disagg"].value("status", ""), "shown");
  EXPECT_EQ(states(serve_, {}, {})["disagg"].value("status", ""), "shown");  // its charts drew
  // vLLM renamed its prefix-cache counters: the old name still exposed keeps the row open (the
  // chart says "renamed").
  const Selection vllm{.dialect = DialectId::kVllm, .job = "vllm"};
  Presence old;
  for (const RowSpec* row : rows_) {
    if (row->id != "features") continue;
    for (const PanelSpec& p : row->panels) {
      for (const PanelQuery& q : build_panel_queries(p, vllm)) {
        for (const std::string& name : q.legacy) old[name] = {"vllm"};
      }
    }
  }
  ASSERT_FALSE(old.empty());
  EXPECT_EQ(states(vllm, old, {"features"})["features"].value("status", ""), "shown");
  EXPECT_EQ(states(vllm, {}, {"features"})["features"].value("status", ""), "collapsed");
}

// Tests that a dialect without any of the row's roles is named as such, and that no row collapses
// while the banner says what the whole page misses.
TEST_F(RowStatesTest, ADialectWithoutTheRolesIsNamedAndTheBannerWins) {
  const Selection tgi{.dialect = DialectId::kTgi, .job = "tgi"};
  const json out = states(tgi, {}, {"disagg"});
  EXPECT_EQ(out["disagg"].value("reason", "").rfind("Hugging Face TGI exposes none of this row's series: ", 0), 0u)
      << out.dump();
  const json banner = states(serve_, {}, {"features", "disagg"}, "no scrape target of a known serving dialect");
  EXPECT_EQ(banner["disagg"].value("status", ""), "shown") << banner.dump();
  EXPECT_EQ(banner["features"].value("status", ""), "shown") << banner.dump();
}

}  // namespace
}  // namespace inferscope::dashboard::detail
