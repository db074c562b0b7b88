// File: dashboard/dashboard_data.h
// DashboardData answers the page's data endpoints from Prometheus: the layout and targets
// (GET /api/dashboard/meta) and every panel's series, table or alert list for one time range,
// target and model (GET /api/dashboard/data). Queries are built on the server (panel_queries.h);
// the step is bounded (at most `max_points` per series, so 7 d costs what 15 min costs) and
// answers are cached for half a step (2..30 s), so many open pages cost Prometheus one evaluation.
// Empty is not healthy: each panel without data carries a reason (Prometheus unreachable, metric
// not exposed by any target, renamed metric, no traffic in the range).
// Example: auto d = DashboardData::create({.prometheus_url = "http://127.0.0.1:9090"});
//          std::string json = (*d)->data_json("1h", "", "").value();
// Thread-safe: every method may be called from any thread (one mutex around the cache).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "dashboard/panel_queries.h"
#include "dashboard/target_discovery.h"
#include "dialect/custom_dialect.h"
#include "inferscope/common/result.h"
#include "promapi/prometheus_client.h"

namespace inferscope::dashboard {

// DashboardOptions configures the endpoints.
struct DashboardOptions {
  std::string prometheus_url = {};       // http(s)://host:port[/prefix]
  net::TlsOptions tls = {};              // for an https:// Prometheus (up's --ca-file, --insecure)
  double scrape_interval_s = 5;          // the smallest useful step
  std::size_t max_points = 400;          // per series
  std::function<double()> now = {};      // Unix seconds; the system clock when empty
  std::chrono::milliseconds query_timeout{8000};
  // target_notes: job -> what `inferscope up` knows about its kind that Prometheus cannot tell
  // ("kind unknown yet (not answering since ...)"); shown with the target. Empty: none.
  std::function<std::map<std::string, std::string>()> target_notes = {};
  // custom_targets: job -> the role mapping of a `kind: custom` target in up's config; its panels
  // read the mapped names (Prometheus alone cannot tell what a hand-made name means).
  std::map<std::string, std::shared_ptr<const dialect::CustomDialect>> custom_targets = {};
  // queue_jobs: the jobs of up's queue (redis) targets. The Queue row is shown only when there is
  // one, and reads these jobs' series (docs/queues.md).
  std::vector<std::string> queue_jobs = {};
};

// time_range_seconds maps a range name of the page ("15m", "1h", "3h", "6h", "12h", "24h", "2d",
// "7d") to seconds; nullopt for anything else.
std::optional<double> time_range_seconds(std::string_view range) noexcept;

// choose_step returns the step for `range_s`: the smallest of 5s, 10s, 15s, 30s, 1m, 2m, 5m,
// 10m, 15m, 30m, 1h, 2h, 3h, 6h, 12h, 1d that is >= scrape_interval_s and keeps the points per
// series at or under max_points.
double choose_step(double range_s, double scrape_interval_s, std::size_t max_points) noexcept;

class DashboardData {
 public:
  // create parses the Prometheus URL (errors name it); it does not connect.
  static Result<std::unique_ptr<DashboardData>> create(DashboardOptions options);

  // meta_json answers GET /api/dashboard/meta: schema_version, ranges, default_range, rows with
  // their panels (the Queue row only with queue_jobs), targets (job, dialect, instances up, note from target_notes) and models. Prometheus being unreachable is
  // reported inside ("prometheus": {"reachable": false, "error": ...}), never as an HTTP error.
  std::string meta_json();

  // data_json answers GET /api/dashboard/data. Errors (-> HTTP 400) only for bad parameters:
  // an unknown range name, or a target that is not a job Prometheus scrapes.
  Result<std::string> data_json(std::string_view range, std::string_view target, std::string_view model);

  // exemplars_json answers GET /api/dashboard/exemplars: per chart that plots them (e2e_latency,
  // ttft) the trace_id exemplars Prometheus holds for the selected target/model's histogram over
  // the range ({"panels": {id: {"status", "reason" | "exemplars": [{trace_id, value (s), time}]}}}),
  // at most 300 per chart (the slowest). Errors (-> HTTP 400) as data_json's.
  Result<std::string> exemplars_json(std::string_view range, std::string_view target, std::string_view model);

  // cache_entries returns how many answers are cached (tests).
  std::size_t cache_entries_for_test();

 private:
  DashboardData(promapi::PrometheusClient client, DashboardOptions options);
  double now() const;
  Result<std::string> compute(double range_s, std::string_view target, std::string_view model);
  // select_target resolves the page's target (empty: the default job) and model; `problem` says
  // why no job can be read (then the selection has no job). Error: a target Prometheus does not scrape.
  Result<Selection> select_target(const Targets& targets, std::string_view target, std::string_view model,
                                  std::string& problem) const;
  // targets_at is discover_targets with the custom targets' dialect set from their mapping.
  Result<Targets> targets_at(double t) const;

  struct CachedAnswer {
    double expires = 0;
    std::string body;
  };
  promapi::PrometheusClient client_;
  DashboardOptions options_;
  std::mutex mutex_;  // guards cache_ and serialises computations (one evaluation per key at a time)
  std::map<std::string, CachedAnswer> cache_;
};

}  // namespace inferscope::dashboard
