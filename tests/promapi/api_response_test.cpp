#include "promapi/api_response.h"

#include <gtest/gtest.h>

#include <cmath>

#include "promapi/prometheus_client.h"

namespace inferscope::promapi {
namespace {

// Tests that a vector answer keeps labels, times and values, NaN included.
TEST(ApiResponseTest, VectorResult) {
  auto r = parse_query_response(R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"__name__":"up","job":"serve"},"value":[1700000000.5,"1"]},
    {"metric":{"job":"x"},"value":[1700000000.5,"NaN"]}]}})");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->series.size(), 2u);
  EXPECT_EQ(r->result_type, "vector");
  EXPECT_EQ(r->series[0].labels.at("job"), "serve");
  EXPECT_DOUBLE_EQ(r->series[0].points[0].time, 1700000000.5);
  EXPECT_DOUBLE_EQ(r->series[0].points[0].value, 1);
  EXPECT_TRUE(std::isnan(r->series[1].points[0].value));
}

// Tests that a matrix answer keeps every point in order, and warnings come along.
TEST(ApiResponseTest, MatrixResultWithWarnings) {
  auto r = parse_query_response(R"({"status":"success","warnings":["w1"],"data":{"resultType":"matrix","result":[
    {"metric":{},"values":[[1,"1.5"],[2,"+Inf"],[3,"-2e3"]]}]}})");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->series.at(0).points.size(), 3u);
  EXPECT_TRUE(std::isinf(r->series[0].points[1].value));
  EXPECT_DOUBLE_EQ(r->series[0].points[2].value, -2000);
  ASSERT_EQ(r->warnings.size(), 1u);
}

// Tests that scalars come back as one unlabelled series.
TEST(ApiResponseTest, ScalarResult) {
  auto r = parse_query_response(R"({"status":"success","data":{"resultType":"scalar","result":[5,"42"]}})");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->series.size(), 1u);
  EXPECT_DOUBLE_EQ(r->series[0].points[0].value, 42);
}

// Tests that API errors and malformed bodies are Errors naming the cause.
TEST(ApiResponseTest, ErrorsAndGarbage) {
  auto check = [](std::string_view body, std::string_view want) {
    auto r = parse_query_response(body);
    ASSERT_FALSE(r) << body;
    EXPECT_NE(r.error().message.find(want), std::string::npos) << "got " << r.error().message << "; want " << want;
  };
  check(R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})", "bad_data: parse error");
  check("not json", "not JSON");
  check("[]", "not a JSON object");
  check(R"({"status":"success"})", "no data");
  check(R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,2]}]}})",
        "sample is not");
  check(R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[1,"2"]}]}})",
        "label a");
  check(R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"x"]}]}})",
        "bad sample value");
  check(R"({"status":"success","data":{"resultType":"histogram","result":[]}})", "unknown resultType");
}

// Tests that series and targets answers parse, a target's scrape interval in Prometheus' syntax.
TEST(ApiResponseTest, SeriesAndTargets) {
  auto s = parse_series_response(R"({"status":"success","data":[{"__name__":"up","job":"a"},{"__name__":"x"}]})");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].at("job"), "a");
  auto t = parse_targets_response(R"({"status":"success","data":{"activeTargets":[
    {"labels":{"job":"serve","instance":"127.0.0.1:1"},"scrapeUrl":"http://127.0.0.1:1/metrics",
     "health":"down","lastError":"connection refused","lastScrape":"2026-11-30T00:00:00Z","scrapeInterval":"1m30s"},
    {"labels":{"job":"b"},"health":"up","scrapeInterval":"1.5s"}],"droppedTargets":[]}})");
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->size(), 2u);
  EXPECT_DOUBLE_EQ((*t)[0].scrape_interval_s, 90);
  EXPECT_DOUBLE_EQ((*t)[1].scrape_interval_s, 0) << "not Prometheus' syntax: absent";
  EXPECT_EQ((*t)[0].health, "down");
  EXPECT_EQ((*t)[0].last_error, "connection refused");
  EXPECT_EQ((*t)[0].labels.at("job"), "serve");
}

// Tests that an alerts answer parses with labels, annotations, state and value, and that a
// malformed one (annotation not a string, alerts not an array) is an Error.
TEST(ApiResponseTest, Alerts) {
  auto a = parse_alerts_response(R"({"status":"success","data":{"alerts":[
    {"labels":{"alertname":"LlmE2eP99High","severity":"page","job":"serve"},
     "annotations":{"summary":"p99 3.2 s","runbook":"look at the queue"},
     "state":"firing","activeAt":"2026-11-30T00:00:00.5Z","value":"3.2e+00"}]}})");
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_EQ(a->size(), 1u);
  EXPECT_EQ((*a)[0].labels.at("alertname"), "LlmE2eP99High");
  EXPECT_EQ((*a)[0].annotations.at("runbook"), "look at the queue");
  EXPECT_EQ((*a)[0].state, "firing");
  EXPECT_EQ((*a)[0].active_at, "2026-11-30T00:00:00.5Z");
  EXPECT_EQ((*a)[0].value, "3.2e+00");
  auto none = parse_alerts_response(R"({"status":"success","data":{"alerts":[]}})");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(parse_alerts_response(R"({"status":"success","data":{"alerts":{}}})"));
  EXPECT_FALSE(parse_alerts_response(R"({"status":"success","data":{}})"));
  auto bad = parse_alerts_response(R"({"status":"success","data":{"alerts":[{"annotations":{"summary":1}}]}})");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("summary"), std::string::npos) << bad.error().message;
}

// Tests that a query_exemplars answer parses with the series' labels and each exemplar's labels,
// value and time; that null data (no series matched) is an empty list; and that a value that is
// not a string, or exemplars that are not a list, are Errors.
TEST(ApiResponseTest, Exemplars) {
  auto e = parse_exemplars_response(R"({"status":"success","data":[
    {"seriesLabels":{"__name__":"inferscope_request_duration_seconds_bucket","job":"serve","le":"5"},
     "exemplars":[{"labels":{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"},"value":"4.25","timestamp":1796141309.14},
                  {"labels":{"trace_id":"00f067aa0ba902b700f067aa0ba902b7"},"value":"+Inf","timestamp":1796141310}]}]})");
  ASSERT_TRUE(e) << e.error().message;
  ASSERT_EQ(e->size(), 1u);
  EXPECT_EQ((*e)[0].series_labels.at("le"), "5");
  ASSERT_EQ((*e)[0].exemplars.size(), 2u);
  EXPECT_EQ((*e)[0].exemplars[0].labels.at("trace_id"), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_DOUBLE_EQ((*e)[0].exemplars[0].value, 4.25);
  EXPECT_DOUBLE_EQ((*e)[0].exemplars[0].time, 1796141309.14);
  EXPECT_TRUE(std::isinf((*e)[0].exemplars[1].value));
  auto none = parse_exemplars_response(R"({"status":"success","data":null})");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty());
  auto number = parse_exemplars_response(
      R"({"status":"success","data":[{"seriesLabels":{},"exemplars":[{"labels":{},"value":4.2,"timestamp":1}]}]})");
  ASSERT_FALSE(number);
  EXPECT_NE(number.error().message.find("value"), std::string::npos) << number.error().message;
  EXPECT_FALSE(parse_exemplars_response(R"({"status":"success","data":[{"seriesLabels":{},"exemplars":{}}]})"));
  EXPECT_FALSE(parse_exemplars_response(R"({"status":"error","errorType":"bad_data","error":"parse error"})"));
}

// Tests that base URLs keep their path prefix, https is accepted, and bad URLs name the URL and flag.
TEST(PrometheusClientTest, CreateParsesBaseUrl) {
  auto v = PrometheusClient::create("http://vm:8481/select/0/prometheus/");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->url().base_path, "/select/0/prometheus");
  EXPECT_EQ(v->url().port, "8481");
  auto tls = PrometheusClient::create("https://[::1]");
  ASSERT_TRUE(tls) << tls.error().message;
  EXPECT_TRUE(tls->url().tls);
  EXPECT_EQ(tls->url().host, "::1");
  EXPECT_EQ(tls->url().port, "443");
  for (auto bad : {"ftp://h", "http://:90", "http://h:0", "http://h:99999", "http://h:x"}) {
    auto r = PrometheusClient::create(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_NE(r.error().message.find(bad), std::string::npos) << r.error().message;
      EXPECT_NE(r.error().message.find("--prometheus"), std::string::npos) << r.error().message;
    }
  }
  auto missing_ca = PrometheusClient::create("https://h", {.tls = {.ca_file = "/nonexistent/ca.pem"}});
  ASSERT_FALSE(missing_ca);
  EXPECT_NE(missing_ca.error().message.find("/nonexistent/ca.pem"), std::string::npos) << missing_ca.error().message;
}

// Tests that url_encode escapes PromQL's special characters.
TEST(PrometheusClientTest, UrlEncode) {
  EXPECT_EQ(url_encode(R"(rate(x{a="b"}[5m]))"), "rate%28x%7Ba%3D%22b%22%7D%5B5m%5D%29");
  EXPECT_EQ(url_encode("a b+c"), "a%20b%2Bc");
}

}  // namespace
}  // namespace inferscope::promapi
