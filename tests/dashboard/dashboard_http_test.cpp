#include "dashboard/dashboard_http.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "dashboard/embedded_assets.h"
#include "dashboard/panel_catalog.h"
#include "net/query_parameter.h"

namespace inferscope::dashboard {
namespace {

using nlohmann::json;

// closed_port returns a loopback port nothing listens on (bound, then closed).
int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::unique_ptr<DashboardData> unreachable_data(std::vector<std::string> queue_jobs = {}) {
  auto d = DashboardData::create({.prometheus_url = "http://127.0.0.1:" + std::to_string(closed_port()),
                                  .now = [] { return 1.7e9; },
                                  .queue_jobs = std::move(queue_jobs)});
  EXPECT_TRUE(d);
  return std::move(*d);
}

// Tests that query parameters (net::query_parameter, which the data routes use) are percent-decoded and malformed escapes give an empty value.
TEST(DashboardHttpTest, QueryParameter) {
  auto check = [](std::string_view query, std::string_view name, std::string_view want) {
    EXPECT_EQ(net::query_parameter(query, name), want) << query << " " << name;
  };
  check("range=1h&target=serve", "range", "1h");
  check("range=1h&target=serve", "target", "serve");
  check("model=Llama%203.1%2F8B&x=1", "model", "Llama 3.1/8B");
  check("model=a+b", "model", "a b");
  check("model=%zz", "model", "");
  check("model=%4", "model", "");
  check("target=", "target", "");
  check("", "range", "");
  check("ranges=7d", "range", "");
}

// Tests that the page and its bundle are embedded and served with the right types, and that the
// page loads nothing from outside (its script and style come from /assets/).
TEST(DashboardHttpTest, ServesTheEmbeddedPage) {
  auto data = unreachable_data();
  auto page = answer_dashboard_request(*data, "/", "");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("/assets/app.js"), std::string::npos);
  EXPECT_EQ(page.body.find("http"), std::string::npos) << "the page must not reference outside URLs";
  auto js = answer_dashboard_request(*data, "/assets/app.js", "");
  EXPECT_EQ(js.status, 200);
  EXPECT_GT(js.body.size(), 10000u);
  EXPECT_NE(js.body.find("/api/dashboard/data"), std::string::npos);
  auto css = answer_dashboard_request(*data, "/assets/app.css", "");
  EXPECT_EQ(css.status, 200);
  EXPECT_NE(css.body.find("prefers-color-scheme"), std::string::npos);
  EXPECT_EQ(answer_dashboard_request(*data, "/assets/nope.js", "").status, 404);
}

// Tests that bad parameters get 400 with the OpenAI error JSON naming the parameter.
TEST(DashboardHttpTest, BadRangeIs400) {
  auto data = unreachable_data();
  auto a = answer_dashboard_request(*data, "/api/dashboard/data", "range=2w");
  EXPECT_EQ(a.status, 400);
  auto body = json::parse(a.body);
  EXPECT_EQ(body["error"]["param"], "range");
  EXPECT_NE(body["error"]["message"].get<std::string>().find("2w"), std::string::npos);
}

// Tests that the exemplar route answers both exemplar charts as "unreachable" with the reason when
// Prometheus does not answer (not an empty list), and 400 naming the parameter for a bad range.
TEST(DashboardHttpTest, ExemplarsSayWhyWhenPrometheusIsUnreachable) {
  auto data = unreachable_data();
  auto a = answer_dashboard_request(*data, "/api/dashboard/exemplars", "range=15m&model=m");
  ASSERT_EQ(a.status, 200) << a.body;
  auto body = json::parse(a.body);
  for (const char* id : {"e2e_latency", "ttft"}) {
    const auto& panel = body["panels"][id];
    EXPECT_EQ(panel["status"], "unreachable") << a.body;
    EXPECT_NE(panel.value("reason", "").find("cannot query Prometheus at http://127.0.0.1:"), std::string::npos) << a.body;
    EXPECT_FALSE(panel.contains("exemplars")) << a.body;
  }
  auto bad = answer_dashboard_request(*data, "/api/dashboard/exemplars", "range=2w");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(json::parse(bad.body)["error"]["param"], "range");
}

// Tests that with Prometheus unreachable every panel says so and why, never an empty success; the
// Queue row is there (and says so too) only when up has a queue target.
TEST(DashboardHttpTest, UnreachablePrometheusIsReportedPerPanel) {
  for (const bool with_queue : {false, true}) {
    auto data = unreachable_data(with_queue ? std::vector<std::string>{"jobs"} : std::vector<std::string>{});
    auto a = answer_dashboard_request(*data, "/api/dashboard/data", "range=15m");
    ASSERT_EQ(a.status, 200) << a.body;
    auto body = json::parse(a.body);
    EXPECT_FALSE(body["prometheus"]["reachable"].get<bool>());
    // The page's banner says it once; the panels say it too, for a reader of the API.
    EXPECT_NE(body.value("missing", "").find("cannot query Prometheus at http://127.0.0.1:"), std::string::npos) << a.body;
    std::size_t rows = 0;
    for (const RowSpec& row : dashboard_rows()) {
      const bool shown = with_queue || !row.queue_targets_only;
      rows += shown ? 1 : 0;
      for (const PanelSpec& p : row.panels) {
        if (p.kind == PanelKind::kFindings) continue;
        if (!shown) {
          EXPECT_FALSE(body["panels"].contains(std::string(p.id))) << p.id;
          continue;
        }
        const auto& panel = body["panels"][std::string(p.id)];
        EXPECT_EQ(panel["status"], "unreachable") << p.id;
        EXPECT_NE(panel["reason"].get<std::string>().find("cannot query Prometheus at http://127.0.0.1:"),
                  std::string::npos)
            << panel.dump();
      }
    }
    auto meta = json::parse(answer_dashboard_request(*data, "/api/dashboard/meta", "").body);
    EXPECT_FALSE(meta["prometheus"]["reachable"].get<bool>());
    EXPECT_EQ(meta["rows"].size(), rows);
    EXPECT_EQ(meta["rows"].dump().find("\"jobqueue\"") != std::string::npos, with_queue) << meta["rows"].dump();
    EXPECT_EQ(meta["ranges"].front(), "15m");
    EXPECT_EQ(meta["ranges"].back(), "7d");
  }
}

// Tests that the step keeps every range at or under the point budget and never below the scrape
// interval.
TEST(DashboardHttpTest, StepIsBounded) {
  for (const char* range : {"15m", "1h", "3h", "6h", "12h", "24h", "2d", "7d"}) {
    const double r = *time_range_seconds(range);
    const double step = choose_step(r, 5, 400);
    EXPECT_LE(r / step + 1, 401) << range;
    EXPECT_GE(step, 5) << range;
  }
  EXPECT_EQ(choose_step(900, 5, 400), 5);
  EXPECT_EQ(choose_step(604800, 5, 400), 1800);
  EXPECT_EQ(choose_step(900, 15, 400), 15);
  EXPECT_FALSE(time_range_seconds("2w"));
}

}  // namespace
}  // namespace inferscope::dashboard
