#include "dashboard/panel_queries.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "alerts/rules_generator.h"
#include "dashboard/panel_catalog.h"
#include "dialect/dialect.h"

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
// Every serving dialect is checked, Dynamo and llm-d included; the engine-features and
// disaggregated rows' reasons also name the dialect that lacks the series.
TEST(PanelQueriesTest, EveryChartHasAQueryOrAReason) {
  std::size_t dialects = 0;
  for (DialectId id : dialect::kAllDialects) {
    if (dialect::is_exporter(id)) continue;
    ++dialects;
    for (const RowSpec& row : dashboard_rows()) {
      const bool new_row = row.id == "features" || row.id == "disagg";
      for (const PanelSpec& p : row.panels) {
        if (p.kind != PanelKind::kTimeseries && p.kind != PanelKind::kStacked) continue;
        auto qs = build_panel_queries(p, {.dialect = id, .job = "j"});
        ASSERT_FALSE(qs.empty()) << p.id << " " << dialect::to_string(id);
        for (const auto& q : qs) {
          if (q.expr) {
            EXPECT_FALSE(q.metrics.empty()) << p.id;
          } else {
            EXPECT_FALSE(q.missing.empty()) << p.id << " " << dialect::to_string(id);
            if (new_row) {
              EXPECT_NE(q.missing.find(dialect::dialect(id).title), std::string::npos)
                  << p.id << " " << dialect::to_string(id) << ": " << q.missing;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(dialects, 10u);  // inferscope, gateway, vllm, llamacpp, tgi, triton, sglang, litellm, dynamo, llm-d
}

// expr_of returns the expression of the query labelled `label` of `panel` ("" when it has none).
std::string expr_of(const std::vector<PanelQuery>& qs, std::string_view label) {
  for (const auto& q : qs) {
    if (q.label == label) return q.expr.value_or("");
  }
  return "";
}

// Tests the two collapsible rows: where they sit, that each says where its series come from, and
// that no other row collapses.
TEST(PanelQueriesTest, FeatureAndDisaggregatedRowsAreCollapsible) {
  std::vector<std::string> ids;
  for (const RowSpec& row : dashboard_rows()) {
    ids.emplace_back(row.id);
    EXPECT_EQ(!row.collapse_note.empty(), row.id == "features" || row.id == "disagg") << row.id;
  }
  const auto at = [&ids](std::string_view id) { return std::find(ids.begin(), ids.end(), id) - ids.begin(); };
  EXPECT_EQ(at("features"), at("capacity") + 1);
  EXPECT_EQ(at("disagg"), at("features") + 1);
  std::vector<std::string> features;
  for (const RowSpec& row : dashboard_rows()) {
    if (row.id == "features") {
      for (const PanelSpec& p : row.panels) features.emplace_back(p.id);
    }
    if (row.id == "disagg") {
      EXPECT_NE(row.collapse_note.find("--prefill-workers"), std::string_view::npos);
    }
  }
  EXPECT_EQ(features, (std::vector<std::string>{"prefix_cache", "prefix_hit_rate", "spec_decode", "spec_acceptance",
                                                "lora", "rank_e2e_p99"}));
}

// Tests the engine-features panels: the ratios read up's recorded series (model normalised to
// `model` even for vLLM's model_name), LoRA reads serve's gauges, the per-rank p99 reads the series
// recorded from vLLM's engine label (also for inferscope serve, whose vllm:* families carry it) and
// is a reason elsewhere.
TEST(PanelQueriesTest, EngineFeaturePanelsReadTheRecordedSeries) {
  const Selection vllm{.dialect = DialectId::kVllm, .job = "vllm", .model = "m1"};
  EXPECT_EQ(expr_of(queries("prefix_hit_rate", vllm), "hit rate"),
            R"(max by (model) (inferscope:prefix_cache_hit:ratio{job="vllm",model="m1"}))");
  const auto hit = queries("prefix_hit_rate", vllm);
  EXPECT_EQ(hit[0].metrics, (std::vector<std::string>{"vllm:prefix_cache_hits_total"}));
  EXPECT_EQ(hit[0].recorded, "inferscope:prefix_cache_hit:ratio");
  EXPECT_EQ(series_label(hit[0], {{"model", "m1"}}), "hit rate m1");
  EXPECT_EQ(expr_of(queries("spec_acceptance", {.dialect = DialectId::kInferscope, .job = "serve"}), "acceptance"),
            R"(max by (model) (inferscope:spec_decode_acceptance:ratio{job="serve"}))");

  const auto lora = queries("lora", {.dialect = DialectId::kInferscope, .job = "serve", .model = "m1"});
  ASSERT_EQ(lora.size(), 3u);
  for (const auto& q : lora) ASSERT_TRUE(q.expr) << q.label << ": " << q.missing;
  EXPECT_NE(lora[2].expr->find(R"(inferscope_lora_waiting_requests{job="serve",model="m1"})"), std::string::npos)
      << *lora[2].expr;
  for (const auto& q : queries("lora", {.dialect = DialectId::kVllm, .job = "vllm"})) {
    EXPECT_FALSE(q.expr);
    EXPECT_NE(q.missing.find("vLLM V1 exposes no lora_"), std::string::npos) << q.missing;
  }

  for (DialectId id : {DialectId::kInferscope, DialectId::kVllm}) {
    const auto rank = queries("rank_e2e_p99", {.dialect = id, .job = "j", .model = "m1"});
    ASSERT_EQ(rank.size(), 1u);
    ASSERT_TRUE(rank[0].expr) << rank[0].missing;
    EXPECT_EQ(*rank[0].expr, R"(max by (engine) (inferscope:engine_e2e_seconds:p99{job="j"}))");  // no model: by (job, engine)
    EXPECT_EQ(rank[0].metrics, (std::vector<std::string>{"vllm:e2e_request_latency_seconds_count"}));
    EXPECT_EQ(rank[0].dialect_title, dialect::dialect(id).title);  // restricted to the selected job
    EXPECT_EQ(series_label(rank[0], {{"engine", "1"}}), "rank 1");
  }
  for (DialectId id : {DialectId::kDynamo, DialectId::kLlmd, DialectId::kSglang}) {
    const auto rank = queries("rank_e2e_p99", {.dialect = id, .job = "j"});
    ASSERT_EQ(rank.size(), 1u);
    EXPECT_FALSE(rank[0].expr) << *rank[0].expr;
    EXPECT_NE(rank[0].missing.find("per-rank"), std::string::npos) << rank[0].missing;
  }
  auto grafana = queries("prefix_hit_rate", {.dialect = DialectId::kVllm, .window = "$__rate_interval", .grafana = true});
  EXPECT_EQ(*grafana[0].expr, R"(max by (model) (inferscope:prefix_cache_hit:ratio{job=~"$job",model=~"$model"}))");
  grafana = queries("rank_e2e_p99", {.dialect = DialectId::kVllm, .window = "$__rate_interval", .grafana = true});
  EXPECT_EQ(*grafana[0].expr, R"(max by (engine) (inferscope:engine_e2e_seconds:p99{job=~"$job"}))");
}

// Tests the disaggregated row per dialect: record_disaggregation's series with their `pool` and
// `endpoint` labels for inferscope serve, Dynamo and llm-d (each presence-checked by its own raw
// metric), the KV transfer only where the dialect measures it, and reasons naming the dialect.
TEST(PanelQueriesTest, DisaggregatedRowReadsThePoolAndTransferSeries) {
  const Selection serve{.dialect = DialectId::kInferscope, .job = "serve", .model = "m1"};
  const auto pool = queries("pool_waiting", serve);
  ASSERT_EQ(pool.size(), 1u);
  EXPECT_EQ(pool[0].expr.value_or(""), R"(max by (pool) (inferscope:pool_waiting{job="serve"}))");  // no model label
  EXPECT_EQ(series_label(pool[0], {{"pool", "prefill"}}), "waiting prefill");
  const auto load = queries("endpoint_load", serve);
  ASSERT_EQ(load.size(), 1u);
  EXPECT_EQ(load[0].expr.value_or(""), R"(max by (endpoint, pool) (inferscope:endpoint_load{job="serve"}))");
  EXPECT_EQ(series_label(load[0], {{"endpoint", "decode-1"}, {"pool", "decode"}}), "decode-1 (decode)");
  const auto kv = queries("kv_transfer_time", serve);
  ASSERT_EQ(kv.size(), 3u);
  EXPECT_EQ(kv[0].expr.value_or(""), R"(max by (model) (inferscope:kv_transfer_seconds:p50{job="serve",model="m1"}))");
  EXPECT_EQ(kv[1].expr.value_or(""), R"(max by (model) (inferscope:kv_transfer_seconds:p95{job="serve",model="m1"}))");
  EXPECT_EQ(kv[0].fixed_matchers, R"(stage="kv_transfer")");  // presence: the kv_transfer stage itself
  EXPECT_TRUE(kv[2].right_axis);
  EXPECT_NE(kv[2].expr.value_or("").find(R"(inferscope_stage_duration_seconds_count{stage="kv_transfer",job="serve")"),
            std::string::npos) << kv[2].expr.value_or("");
  EXPECT_EQ(expr_of(queries("kv_transfer_bandwidth", serve), "bytes/s"),
            R"(max by (model) (inferscope:kv_transfer_bytes_per_second:mean{job="serve"}))");
  const auto hit = queries("route_prefix_hit", serve);
  EXPECT_EQ(hit[0].expr.value_or(""), R"(max by (model) (inferscope:route_prefix_hit:mean{job="serve"}))");
  EXPECT_EQ(series_label(hit[0], {}), "prefix hit (mean)");  // no model label on the recorded mean

  const Selection dynamo{.dialect = DialectId::kDynamo, .job = "dyn"};
  EXPECT_EQ(queries("pool_waiting", dynamo)[0].metrics,
            (std::vector<std::string>{"dynamo_frontend_router_queue_pending_requests"}));
  EXPECT_EQ(queries("endpoint_load", dynamo)[0].metrics,
            (std::vector<std::string>{"dynamo_frontend_worker_active_decode_blocks"}));
  EXPECT_EQ(queries("kv_transfer_bandwidth", dynamo)[0].metrics, (std::vector<std::string>{"trtllm_kv_transfer_bytes_count"}));
  EXPECT_TRUE(queries("route_prefix_hit", dynamo)[0].expr);

  const Selection llmd{.dialect = DialectId::kLlmd, .job = "epp"};
  ASSERT_TRUE(queries("pool_waiting", llmd)[0].expr);
  EXPECT_EQ(queries("pool_waiting", llmd)[0].legacy, (std::vector<std::string>{"inference_pool_average_queue_size"}));
  EXPECT_EQ(queries("endpoint_load", llmd)[0].metrics, (std::vector<std::string>{"inference_pool_per_pod_queue_size"}));
  for (const char* panel : {"kv_transfer_time", "kv_transfer_bandwidth"}) {
    for (const auto& q : queries(panel, llmd)) {
      EXPECT_FALSE(q.expr) << panel;
      EXPECT_NE(q.missing.find("llm-d router (EPP) exposes no kv_transfer"), std::string::npos) << q.missing;
    }
  }
  const Selection vllm{.dialect = DialectId::kVllm, .job = "vllm", .model = "m1"};
  EXPECT_FALSE(queries("pool_waiting", vllm)[0].expr);
  EXPECT_NE(queries("pool_waiting", vllm)[0].missing.find("vLLM V1 exposes no pool_waiting"), std::string::npos);
  EXPECT_EQ(expr_of(queries("kv_transfer_time", vllm), "p95"),  // NIXL on the decode instance
            R"(max by (model) (inferscope:kv_transfer_seconds:p95{job="vllm",model="m1"}))");
}

// Tests that every recorded series a panel reads is one up's rules record for that dialect (the
// generated rule files, one target per dialect): a panel never waits on a name nobody records.
TEST(PanelQueriesTest, RecordedSeriesAreTheOnesUpRecords) {
  alerts::RulesConfig config;
  for (DialectId id : dialect::kAllDialects) {
    if (!dialect::is_exporter(id)) config.targets.push_back({.job = std::string(dialect::to_string(id)), .dialect = id});
  }
  auto rules = alerts::generate_rules(config);
  ASSERT_TRUE(rules) << rules.error().message;
  std::size_t checked = 0;
  for (const alerts::RulesTarget& target : config.targets) {
    std::string text;
    for (const auto& file : rules->files) {
      if (file.text.find("name: 'inferscope-target-" + target.job + "'\n") != std::string::npos) {
        text += file.text;
      }
    }
    ASSERT_FALSE(text.empty()) << "no rule group for " << target.job;
    for (const RowSpec& row : dashboard_rows()) {
      for (const PanelSpec& p : row.panels) {
        for (const auto& q : build_panel_queries(p, {.dialect = *target.dialect, .job = target.job})) {
          if (q.recorded.empty() || !q.expr) continue;
          ++checked;
          EXPECT_NE(text.find("record: " + q.recorded + "\n"), std::string::npos)
              << p.id << " reads " << q.recorded << ", which the rules of " << target.job << " do not record";
        }
      }
    }
  }
  EXPECT_GT(checked, 20u);
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
