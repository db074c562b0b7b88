// Runs every PromQL expression of every exported Grafana dashboard against a real Prometheus
// (/usr/bin/prometheus on an ephemeral loopback port): each must be accepted by /api/v1/query
// once Grafana's template variables are substituted the way Grafana would.
#include "dashboard/grafana_export.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "dialect/dialect.h"
#include "promapi/prometheus_client.h"
#include "support/prometheus_process.h"
#include "support/wait_until.h"

namespace inferscope::dashboard {
namespace {

using nlohmann::json;

std::string substitute_variables(std::string expr) {
  // What Grafana sends with "All" selected (allValue ".*") and a 15 s scrape interval.
  expr = std::regex_replace(expr, std::regex(R"(\$__rate_interval)"), "1m");
  expr = std::regex_replace(expr, std::regex(R"(\$job|\$model|\$queue_job)"), ".*");
  return expr;
}

// wait_until_ready polls (bounded) until Prometheus answers queries: it answers 503 while its
// TSDB is still opening.
bool wait_until_ready(const promapi::PrometheusClient& client) {
  return testing::wait_until([&] { return client.query("vector(1)").ok(); }, std::chrono::seconds(20),
                             std::chrono::milliseconds(50));
}

// Tests that each dashboard has the dashboard model's required fields, the rows of the page (the
// Queue row only when asked for: up has a queue target), and that Prometheus accepts every
// expression in it.
TEST(GrafanaExportIntegrationTest, EveryExpressionIsAcceptedByPrometheus) {
  testing::PrometheusProcess prometheus(testing::scrape_config_for({"127.0.0.1:1"}, "1s", "dead"));
  ASSERT_TRUE(prometheus.ok()) << prometheus.error();
  auto client = promapi::PrometheusClient::create(prometheus.url());
  ASSERT_TRUE(client) << client.error().message;
  ASSERT_TRUE(wait_until_ready(*client)) << "Prometheus did not answer queries within 20 s";

  std::size_t total = 0;
  std::set<std::string> collapsed_rows;  // "dialect row"
  for (const bool queue_row : {false, true})
  for (auto id : grafana_dialects()) {
    const std::string text = grafana_dashboard_json(id, queue_row);
    const json d = json::parse(text);
    for (const char* field : {"uid", "title", "panels", "schemaVersion", "templating", "time", "version"}) {
      EXPECT_TRUE(d.contains(field)) << field << " in " << dialect::to_string(id);
    }
    EXPECT_TRUE(d["id"].is_null());
    EXPECT_GE(d["schemaVersion"].get<int>(), 36);
    std::vector<std::string> row_titles;
    std::set<int> ids;
    // Every panel, a collapsed row's own (kept inside the row, as Grafana saves them) included.
    std::vector<json> all_panels;
    for (const auto& p : d["panels"]) {
      all_panels.push_back(p);
      for (const auto& child : p.value("panels", json::array())) all_panels.push_back(child);
    }
    for (const auto& p : all_panels) {
      ASSERT_TRUE(p.contains("type") && p.contains("gridPos") && p.contains("id")) << p.dump();
      for (const char* g : {"x", "y", "w", "h"}) EXPECT_TRUE(p["gridPos"].contains(g));
      EXPECT_LE(p["gridPos"]["x"].get<int>() + p["gridPos"]["w"].get<int>(), 24);
      EXPECT_TRUE(ids.insert(p["id"].get<int>()).second) << "duplicate panel id";
      if (p["type"] == "row") {
        const std::string title = p["title"];
        row_titles.push_back(title.substr(0, title.find(" \u2014 ")));
      }
      for (const auto& t : p.value("targets", json::array())) {
        EXPECT_TRUE(t.contains("refId"));
        EXPECT_EQ(t["datasource"]["uid"], "${datasource}");
      }
    }
    std::vector<std::string> expected_rows = {"Overview", "Where the time goes", "First token and decode",
                                              "Request mix", "Queue and capacity", "Engine features",
                                              "Disaggregated fleet", "GPU", "Host", "Alerts", "Doctor"};
    if (queue_row) expected_rows.insert(expected_rows.begin() + 7, "Queue");
    EXPECT_EQ(row_titles, expected_rows);
    // The engine-features and disaggregated rows: their charts, each with queries or a reason
    // ("Not available: <dialect> exposes no ..."); the fleet's recorded series where the dialect
    // has them (inferscope serve, Dynamo, llm-d), none where it has no pools (vLLM).
    std::map<std::string, std::vector<json>> row_panels;
    std::map<std::string, json> rows;
    std::string current;
    for (const auto& p : all_panels) {
      if (p["type"] == "row") {
        const std::string title = p["title"];
        current = title.substr(0, title.find(" \u2014 "));
        rows[current] = p;
      } else {
        row_panels[current].push_back(p);
      }
    }
    EXPECT_EQ(row_panels["Engine features"].size(), 6u) << dialect::to_string(id);
    EXPECT_EQ(row_panels["Disaggregated fleet"].size(), 5u) << dialect::to_string(id);
    std::string fleet_exprs;
    for (const char* row : {"Engine features", "Disaggregated fleet"}) {
      for (const auto& p : row_panels[row]) {
        EXPECT_EQ(p["type"], "timeseries") << p.dump();
        const bool queried = !p.value("targets", json::array()).empty();
        EXPECT_TRUE(queried || p.value("description", "").find("Not available: " + std::string(dialect::dialect(id).title)) !=
                                   std::string::npos)
            << dialect::to_string(id) << " " << p.dump();
        for (const auto& t : p.value("targets", json::array())) {
          if (std::string_view(row) == "Disaggregated fleet") fleet_exprs += t["expr"].get<std::string>() + "\n";
        }
      }
      // Collapsed, with the reason in its title, exactly when none of its charts has a query here;
      // its charts then sit inside the row, the rows below right under it.
      const bool none_queried = std::none_of(row_panels[row].begin(), row_panels[row].end(), [](const json& p) {
        return !p.value("targets", json::array()).empty();
      });
      const json& r = rows[row];
      EXPECT_EQ(r.value("collapsed", true), none_queried) << dialect::to_string(id) << " " << r.dump();
      EXPECT_EQ(r["title"].get<std::string>().find(std::string(dialect::dialect(id).title) +
                                                   " exposes none of this row's series: ") != std::string::npos,
                none_queried)
          << r["title"];
      EXPECT_EQ(r["panels"].size(), none_queried ? row_panels[row].size() : 0u) << dialect::to_string(id);
      if (none_queried) collapsed_rows.insert(std::string(dialect::to_string(id)) + " " + row);
    }
    const bool pools = id == dialect::DialectId::kInferscope || id == dialect::DialectId::kDynamo ||
                       id == dialect::DialectId::kLlmd;
    EXPECT_EQ(fleet_exprs.find(R"(max by (pool) (inferscope:pool_waiting{job=~"$job"}))") != std::string::npos, pools)
        << dialect::to_string(id) << ": " << fleet_exprs;
    EXPECT_EQ(fleet_exprs.find(R"(inferscope:endpoint_load{job=~"$job"})") != std::string::npos, pools) << fleet_exprs;
    if (id == dialect::DialectId::kInferscope || id == dialect::DialectId::kDynamo) {
      for (const char* series : {"inferscope:kv_transfer_seconds:p50", "inferscope:kv_transfer_seconds:p95",
                                 "inferscope:kv_transfer_bytes_per_second:mean", "inferscope:route_prefix_hit:mean"}) {
        EXPECT_NE(fleet_exprs.find(series), std::string::npos) << series << " in " << dialect::to_string(id);
      }
    }
    // The Queue row: four charts reading the queue jobs ($queue_job, a variable listing them).
    std::size_t queue_targets = 0;
    for (const auto& p : d["panels"])
      for (const auto& t : p.value("targets", json::array()))
        if (t["expr"].get<std::string>().find(R"(job=~"$queue_job")") != std::string::npos) ++queue_targets;
    EXPECT_EQ(queue_targets, queue_row ? 4u : 0u) << dialect::to_string(id);
    EXPECT_EQ(d["templating"].dump().find("queue_job") != std::string::npos, queue_row);
    const auto exprs = grafana_expressions(text);
    EXPECT_GT(exprs.size(), 10u) << dialect::to_string(id);
    std::vector<promapi::QueryRequest> requests;
    for (const auto& e : exprs) requests.push_back({substitute_variables(e), 0});
    auto results = client->query_all(requests);
    for (std::size_t i = 0; i < results.size(); ++i) {
      EXPECT_TRUE(results[i]) << dialect::to_string(id) << (queue_row ? " with the Queue row" : "") << ": " << requests[i].expr << "\n  -> "
                              << (results[i] ? "" : results[i].error().message);
      EXPECT_EQ(requests[i].expr.find('$'), std::string::npos) << "unsubstituted variable: " << requests[i].expr;
    }
    total += exprs.size();
  }
  EXPECT_GT(total, 100u);
  // A dialect with no fleet series at all (llama.cpp) gets the row collapsed; the fleets' never.
  EXPECT_TRUE(collapsed_rows.contains("llamacpp Disaggregated fleet")) << ::testing::PrintToString(collapsed_rows);
  for (const char* fleet : {"inferscope", "dynamo", "llm-d"}) {
    EXPECT_FALSE(collapsed_rows.contains(std::string(fleet) + " Disaggregated fleet")) << fleet;
  }
}

// Tests that the export writes one dashboard per dialect and provisioning files that point at them.
TEST(GrafanaExportIntegrationTest, WritesDashboardsAndProvisioning) {
  char pattern[] = "/tmp/inferscope-grafana-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::filesystem::path dir = pattern;
  auto files = write_grafana_export({.directory = dir.string(), .prometheus_url = "http://127.0.0.1:9999"});
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(files->size(), grafana_dialects().size() + 2);
  for (const char* name : {"inferscope-inferscope.json", "inferscope-vllm.json", "inferscope-llamacpp.json",
                           "inferscope-sglang.json", "inferscope-litellm.json"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / "dashboards" / name)) << name;
  }
  std::ifstream provider(dir / "provisioning" / "dashboards" / "inferscope.yaml");
  std::stringstream text;
  text << provider.rdbuf();
  EXPECT_NE(text.str().find((dir / "dashboards").string()), std::string::npos) << text.str();
  std::ifstream datasource(dir / "provisioning" / "datasources" / "inferscope.yaml");
  std::stringstream ds;
  ds << datasource.rdbuf();
  EXPECT_NE(ds.str().find("http://127.0.0.1:9999"), std::string::npos);
  EXPECT_NE(ds.str().find("type: prometheus"), std::string::npos);
  std::ifstream plain(dir / "dashboards" / "inferscope-vllm.json");
  std::stringstream plain_text;
  plain_text << plain.rdbuf();
  EXPECT_EQ(plain_text.str().find("$queue_job"), std::string::npos);
  // With a queue target, the same files carry the Queue row.
  auto queued = write_grafana_export({.directory = dir.string(), .prometheus_url = "http://127.0.0.1:9999", .queue_row = true});
  ASSERT_TRUE(queued) << queued.error().message;
  std::ifstream vllm(dir / "dashboards" / "inferscope-vllm.json");
  std::stringstream vllm_text;
  vllm_text << vllm.rdbuf();
  EXPECT_NE(vllm_text.str().find("$queue_job"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace inferscope::dashboard
