#include "dashboard/panel_queries.h"

#include <gtest/gtest.h>

#include "dashboard/panel_catalog.h"

namespace inferscope::dashboard {
namespace {

using dialect::DialectId;

std::vector<PanelQuery> queries(std::string_view panel, Selection s) {
  const PanelSpec* p = find_panel(panel);
  EXPECT_NE(p, nullptr) << panel;
  return p ? build_panel_queries(*p, s) : std::vector<PanelQuery>{};
}

// Tests that every chart of every row has, for each main dialect, either a query or a reason
// that names the dialect: a panel can never be empty without saying why.
TEST(PanelQueriesTest, EveryChartHasAQueryOrAReason) {
  for (DialectId id : {DialectId::kInferscope, DialectId::kVllm, DialectId::kLlamaCpp, DialectId::kGateway,
                       DialectId::kTgi, DialectId::kTriton}) {
    for (const RowSpec& row : dashboard_rows()) {
      for (const PanelSpec& p : row.panels) {
        if (p.kind != PanelKind::kTimeseries && p.kind != PanelKind::kStacked) continue;
        auto qs = build_panel_queries(p, {.dialect = id, .job = "j"});
        ASSERT_FALSE(qs.empty()) << p.id << " " << dialect::to_string(id);
        for (const auto& q : qs) {
          if (q.expr) {
            EXPECT_FALSE(q.metrics.empty()) << p.id;
          } else {
            EXPECT_FALSE(q.missing.empty()) << p.id << " " << dialect::to_string(id);
          }
        }
      }
    }
  }
}

// Tests that the selected target's queries read that dialect's own metric names, restricted to
// the job and model, while GPU and host panels read the exporters of every job.
TEST(PanelQueriesTest, QueriesUseTheDialectsNamesAndTheSelection) {
  auto ttft = queries("ttft", {.dialect = DialectId::kVllm, .job = "vllm", .model = "m1"});
  ASSERT_EQ(ttft.size(), 3u);
  for (const auto& q : ttft) {
    ASSERT_TRUE(q.expr);
    EXPECT_NE(q.expr->find("vllm:time_to_first_token_seconds_bucket"), std::string::npos) << *q.expr;
    EXPECT_NE(q.expr->find(R"(job="vllm")"), std::string::npos) << *q.expr;
    EXPECT_NE(q.expr->find(R"(model_name="m1")"), std::string::npos) << *q.expr;
  }
  auto ttft_is = queries("ttft", {.dialect = DialectId::kInferscope, .job = "serve", .model = "m1"});
  ASSERT_TRUE(ttft_is[0].expr);
  EXPECT_NE(ttft_is[0].expr->find("inferscope_time_to_first_token_seconds_bucket"), std::string::npos);
  EXPECT_NE(ttft_is[0].expr->find(R"(model="m1")"), std::string::npos);

  auto gpu = queries("gpu_util", {.dialect = DialectId::kVllm, .job = "vllm"});
  ASSERT_TRUE(gpu[0].expr);
  EXPECT_NE(gpu[0].expr->find("DCGM_FI_DEV_GPU_UTIL"), std::string::npos);
  EXPECT_EQ(gpu[0].expr->find("job="), std::string::npos) << *gpu[0].expr;
  EXPECT_EQ(gpu[0].split_label, "gpu");
}

// Tests that llama.cpp, which has no latency histograms, gets reasons for e2e and means (labelled
// as such) instead of quantiles for TPOT, never a made-up quantile.
TEST(PanelQueriesTest, LlamaCppSaysWhatItLacks) {
  auto e2e = queries("e2e_latency", {.dialect = DialectId::kLlamaCpp, .job = "llama"});
  ASSERT_FALSE(e2e.empty());
  for (const auto& q : e2e) {
    EXPECT_FALSE(q.expr);
    EXPECT_NE(q.missing.find("llama.cpp"), std::string::npos) << q.missing;
  }
  auto tpot = queries("tpot_itl", {.dialect = DialectId::kLlamaCpp, .job = "llama"});
  bool mean_found = false;
  for (const auto& q : tpot) {
    if (!q.expr) continue;
    mean_found = true;
    EXPECT_NE(q.label.find("mean"), std::string::npos) << q.label;
    EXPECT_EQ(q.expr->find("histogram_quantile"), std::string::npos) << *q.expr;
  }
  EXPECT_TRUE(mean_found);
  auto stages = queries("stage_mean", {.dialect = DialectId::kLlamaCpp, .job = "llama"});
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_FALSE(stages[0].expr);
}

// Tests that per-stage means come from one stage-labelled query for inferscope and from one query
// per stage histogram for vLLM.
TEST(PanelQueriesTest, StageMeansPerDialect) {
  auto is = queries("stage_mean", {.dialect = DialectId::kInferscope, .job = "serve"});
  ASSERT_EQ(is.size(), 1u);
  EXPECT_EQ(is[0].split_label, "stage");
  ASSERT_TRUE(is[0].expr);
  EXPECT_NE(is[0].expr->find("inferscope_stage_duration_seconds_sum"), std::string::npos);

  auto v = queries("stage_mean", {.dialect = DialectId::kVllm, .job = "vllm"});
  std::vector<std::string> labels;
  for (const auto& q : v) labels.push_back(q.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"queue", "prefill", "decode"}));

  auto table = build_stage_table_queries({.dialect = DialectId::kVllm, .job = "vllm"}, "5m", "30m");
  ASSERT_EQ(table.queries.size(), 3u);
  EXPECT_NE(table.queries[0].p95_baseline.find("[30m]"), std::string::npos) << table.queries[0].p95_baseline;
  EXPECT_NE(table.queries[0].p95_now.find("[5m]"), std::string::npos);
}

// Tests that a hostile model or job value cannot break out of its PromQL string.
TEST(PanelQueriesTest, SelectionValuesAreEscaped) {
  auto qs = queries("e2e_latency", {.dialect = DialectId::kVllm, .job = R"(x"}) or vector(1) #)", .model = ""});
  ASSERT_TRUE(qs[0].expr);
  EXPECT_NE(qs[0].expr->find(R"(job="x\"}) or vector(1) #")"), std::string::npos) << *qs[0].expr;
}

// Tests that the Grafana form uses template variables instead of values.
TEST(PanelQueriesTest, GrafanaSelectionUsesVariables) {
  auto qs = queries("e2e_latency", {.dialect = DialectId::kVllm, .window = "$__rate_interval", .grafana = true});
  ASSERT_TRUE(qs[0].expr);
  EXPECT_NE(qs[0].expr->find(R"(job=~"$job")"), std::string::npos) << *qs[0].expr;
  EXPECT_NE(qs[0].expr->find(R"(model_name=~"$model")"), std::string::npos);
  EXPECT_NE(qs[0].expr->find("[$__rate_interval]"), std::string::npos);
}

// Tests the Queue row: queue series read only up's queue jobs (names regex-escaped), split per
// queue with system and job shown, beside the selected server's e2e p99 on the right axis; in
// Grafana form they match $queue_job.
TEST(PanelQueriesTest, QueueRowReadsTheQueueJobsPerQueue) {
  const Selection s{.dialect = DialectId::kVllm, .job = "vllm", .model = "m1", .queue_jobs = {"jobs", "a.b"}};
  auto depth = queries("jobqueue_depth", s);
  ASSERT_EQ(depth.size(), 2u);
  ASSERT_TRUE(depth[0].expr);
  EXPECT_EQ(*depth[0].expr, R"(sum by (queue, system, job) (inferscope_queue_depth{job=~"jobs|a\\.b"}))");
  EXPECT_FALSE(depth[0].right_axis);
  EXPECT_EQ(series_label(depth[0], {{"queue", "default"}, {"system", "rq"}, {"job", "jobs"}}), "depth default (rq, jobs)");
  ASSERT_TRUE(depth[1].expr);
  EXPECT_TRUE(depth[1].right_axis);
  EXPECT_NE(depth[1].expr->find("vllm:e2e_request_latency_seconds_bucket"), std::string::npos) << *depth[1].expr;
  EXPECT_NE(depth[1].expr->find(R"(job="vllm")"), std::string::npos) << *depth[1].expr;

  auto wait = queries("jobqueue_wait", s);
  ASSERT_EQ(wait.size(), 2u);
  ASSERT_TRUE(wait[1].expr);
  EXPECT_NE(wait[1].expr->find("histogram_quantile(0.95"), std::string::npos) << *wait[1].expr;
  EXPECT_NE(wait[1].expr->find("inferscope_queue_wait_seconds_bucket"), std::string::npos) << *wait[1].expr;
  EXPECT_EQ(wait[1].metrics, (std::vector<std::string>{"inferscope_queue_wait_seconds_count"}));
  EXPECT_EQ(wait[1].dialect_title, queue_table().title);

  auto workers = queries("jobqueue_workers", s);
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(series_label(workers[0], {{"state", "busy"}, {"system", "celery"}, {"job", "jobs"}}), "busy (celery, jobs)");
  auto gpu = queries("jobqueue_gpu", s);
  ASSERT_TRUE(gpu[0].expr);
  EXPECT_NE(gpu[0].expr->find("DCGM_FI_DEV_GPU_UTIL"), std::string::npos);

  auto grafana = queries("jobqueue_depth", {.dialect = DialectId::kVllm, .window = "$__rate_interval", .grafana = true});
  ASSERT_TRUE(grafana[0].expr);
  EXPECT_NE(grafana[0].expr->find(R"(job=~"$queue_job")"), std::string::npos) << *grafana[0].expr;
}

}  // namespace
}  // namespace inferscope::dashboard
