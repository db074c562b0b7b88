// Unit tests of the daily report's part of `inferscope up --status` (render_status_text on a
// hand-built status JSON): scheduled with a queued last run and deliveries, not scheduled, failed.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "up/stack_status.h"

namespace inferscope::up {
namespace {

using nlohmann::json;

// Tests the schedule line, the last run and one line per channel's last delivery.
TEST(ReportStatusText, ScheduledQueuedAndDelivered) {
  const json status = {
      {"report",
       {{"schedule", {{"daily_at", "09:00"}, {"timezone", "+08:00"}, {"channels", {"ding", "mail"}},
                      {"next_run", "2026-12-01T01:00:00Z"}}},
        {"last", {{"at", "2026-11-30T01:00:00Z"}, {"trigger", "schedule"}, {"result", "queued"},
                  {"title", "inferscope report 2026-11-29 01:00 - 2026-11-30 01:00 UTC"},
                  {"channels", {"ding", "mail"}}, {"has_data", true}, {"error", ""}}},
        {"deliveries", {{{"channel", "ding"}, {"result", "failed"}, {"at", "2026-11-30T01:20:00Z"},
                         {"text", "report failed: channel ding after 16 attempts: HTTP 500"}}}}}}};
  const std::string text = render_status_text(status);
  EXPECT_NE(text.find("daily report:\n  daily at 09:00 +08:00 to ding, mail; next run 2026-12-01T01:00:00Z\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("  last: 2026-11-30T01:00:00Z (schedule) queued to ding, mail: inferscope report "
                      "2026-11-29 01:00 - 2026-11-30 01:00 UTC\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("  ding             failed    at 2026-11-30T01:20:00Z: report failed: channel ding after 16 "
                      "attempts: HTTP 500\n"),
            std::string::npos) << text;
}

// Tests an up without `report:` (only POST /api/report/send) whose last build failed, and a status
// JSON without a report part (an older up): no section at all.
TEST(ReportStatusText, NotScheduledAndFailed) {
  const json status = {{"report",
                        {{"schedule", nullptr},
                         {"last", {{"at", "2026-11-30T10:00:00Z"}, {"trigger", "api"}, {"result", "failed"},
                                   {"error", "Prometheus is not ready yet"}}},
                         {"deliveries", json::array()}}}};
  const std::string text = render_status_text(status);
  EXPECT_NE(text.find("  not scheduled (no report: {daily_at} in the config); POST /api/report/send sends one now\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("  last: 2026-11-30T10:00:00Z (api) FAILED: Prometheus is not ready yet\n"), std::string::npos)
      << text;
  const json never = {{"report", {{"schedule", nullptr}, {"last", nullptr}, {"deliveries", json::array()}}}};
  EXPECT_NE(render_status_text(never).find("  last: none since up started\n"), std::string::npos);
  EXPECT_EQ(render_status_text(json::object()).find("daily report:"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::up
