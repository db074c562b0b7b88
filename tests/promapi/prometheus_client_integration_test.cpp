// Runs PrometheusClient against the real /usr/bin/prometheus scraping an embedded MetricsServer.
#include "promapi/prometheus_client.h"

#include <gtest/gtest.h>
#include <inferscope/metrics/metrics_server.h>
#include <inferscope/metrics/registry.h>

#include <chrono>
#include <string>

#include "support/prometheus_process.h"
#include "support/wait_until.h"

namespace inferscope::promapi {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Tests query, query_range, series, targets, alerts and query_all against a live Prometheus, and that a
// bad query and a dead port come back as Errors.
TEST(PrometheusClientIntegrationTest, LiveServer) {
  metrics::Registry registry;
  metrics::MetricOptions opts;
  opts.name = "promapi_test_value";
  opts.help = "A gauge for the promapi test.";
  auto gauge = registry.gauge(opts).with({});
  gauge.set(7);
  auto server = metrics::MetricsServer::start(registry, {.port = 0});
  ASSERT_TRUE(server) << server.error().message;
  std::string target = "127.0.0.1:" + std::to_string((*server)->port());
  // A second target nobody listens on: it must show up as down.
  testing::PrometheusProcess prom(testing::scrape_config_for({target, "127.0.0.1:1"}, "1s"));
  ASSERT_TRUE(prom.ok()) << prom.error();

  auto client = PrometheusClient::create(prom.url());
  ASSERT_TRUE(client) << client.error().message;
  // The first scrape.
  ASSERT_TRUE(testing::wait_until(
      [&] {
        auto r = client->query("promapi_test_value");
        return r && !r->series.empty();
      },
      std::chrono::seconds(10), std::chrono::milliseconds(50)));
  auto r = client->query("promapi_test_value", now_s());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_DOUBLE_EQ(r->series.at(0).points.at(0).value, 7);
  EXPECT_EQ(r->series[0].labels.at("job"), "serve");

  double t = now_s();
  auto range = client->query_range("promapi_test_value", t - 10, t, 1);
  ASSERT_TRUE(range) << range.error().message;
  EXPECT_EQ(range->result_type, "matrix");
  EXPECT_GE(range->series.at(0).points.size(), 1u);

  auto series = client->series({"promapi_test_value", "up"}, t - 60, t);
  ASSERT_TRUE(series) << series.error().message;
  EXPECT_GE(series->size(), 2u);

  std::string targets_error;
  const bool down_seen = testing::wait_until(
      [&] {
        auto targets = client->targets();
        if (!targets) {
          targets_error = targets.error().message;
          return false;
        }
        for (auto& tg : *targets) {
          if (tg.labels["instance"] == "127.0.0.1:1" && tg.health == "down") return true;
        }
        return false;
      },
      std::chrono::seconds(5), std::chrono::milliseconds(50));
  EXPECT_TRUE(down_seen) << targets_error;

  std::vector<QueryRequest> batch;
  for (int i = 0; i < 20; ++i) batch.push_back({"promapi_test_value * " + std::to_string(i), t});
  batch.push_back({"sum(rate(", t});
  auto results = client->query_all(batch);
  ASSERT_EQ(results.size(), batch.size());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(results[i]) << results[i].error().message;
    EXPECT_DOUBLE_EQ(results[i]->series.at(0).points.at(0).value, 7.0 * i);
  }
  ASSERT_FALSE(results.back());
  EXPECT_NE(results.back().error().message.find("bad_data"), std::string::npos) << results.back().error().message;

  auto alerts = client->alerts();  // no rules loaded: an empty list, not an error
  ASSERT_TRUE(alerts) << alerts.error().message;
  EXPECT_TRUE(alerts->empty());

  prom.stop();
  auto dead = PrometheusClient::create(prom.url(), {.timeout = std::chrono::milliseconds(2000)});
  auto failed = dead->query("up");
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("cannot POST " + prom.url() + "/api/v1/query: cannot connect"),
            std::string::npos)
      << failed.error().message;
  auto no_alerts = dead->alerts();
  ASSERT_FALSE(no_alerts);
  EXPECT_NE(no_alerts.error().message.find("/api/v1/alerts"), std::string::npos) << no_alerts.error().message;
}

// Tests query_exemplars against a Prometheus with exemplar storage scraping a histogram that
// carries a trace_id exemplar (OpenMetrics): the id, value and time come back on the bucket
// series; a selector matching nothing is an empty list, and a malformed one an Error.
TEST(PrometheusClientIntegrationTest, QueryExemplars) {
  metrics::Registry registry;
  metrics::HistogramOptions opts;
  opts.name = "promapi_test_latency_seconds";
  opts.help = "A histogram with exemplars for the promapi test.";
  opts.buckets = {0.5, 1, 5};
  auto histogram = registry.histogram(opts).with({});
  const auto observed_at = std::chrono::system_clock::now();
  histogram.observe_with_exemplar(4.25, {{"trace_id", "4bf92f3577b34da6a3ce929d0e0e4736"}}, observed_at);
  auto server = metrics::MetricsServer::start(registry, {.port = 0});
  ASSERT_TRUE(server) << server.error().message;
  testing::PrometheusProcess prom(
      testing::scrape_config_for({"127.0.0.1:" + std::to_string((*server)->port())}, "1s"), "",
      {"--enable-feature=exemplar-storage"});
  ASSERT_TRUE(prom.ok()) << prom.error();
  auto client = PrometheusClient::create(prom.url());
  ASSERT_TRUE(client) << client.error().message;

  Result<std::vector<ExemplarSeries>> found = make_error("not asked yet");
  ASSERT_TRUE(testing::wait_until(
      [&] {
        const double t = now_s();
        found = client->query_exemplars("promapi_test_latency_seconds_bucket", t - 60, t + 1);
        return found && !found->empty();
      },
      std::chrono::seconds(15), std::chrono::milliseconds(200)))
      << (found ? "no exemplar came back" : found.error().message);
  ASSERT_EQ(found->size(), 1u);
  const ExemplarSeries& series = found->front();
  EXPECT_EQ(series.series_labels.at("le"), "5.0");  // OpenMetrics prints bounds as floats
  EXPECT_EQ(series.series_labels.at("job"), "serve");
  ASSERT_EQ(series.exemplars.size(), 1u);
  EXPECT_EQ(series.exemplars[0].labels.at("trace_id"), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_DOUBLE_EQ(series.exemplars[0].value, 4.25);
  const double at = std::chrono::duration<double>(observed_at.time_since_epoch()).count();
  EXPECT_NEAR(series.exemplars[0].time, at, 0.002);

  const double t = now_s();
  auto none = client->query_exemplars("promapi_test_latency_seconds_bucket{job=\"other\"}", t - 60, t);
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty());
  auto bad = client->query_exemplars("promapi_test_latency_seconds_bucket{", t - 60, t);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("query_exemplars"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace inferscope::promapi
