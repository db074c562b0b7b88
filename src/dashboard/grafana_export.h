// File: dashboard/grafana_export.h
// Grafana dashboards with the same rows and queries as inferscope's own page (panel_catalog.h),
// one per server dialect (inferscope serve, inferscope gateway, vLLM, llama.cpp, TGI, Triton), and
// the provisioning YAML that loads them: `inferscope up --export-grafana DIR`.
// Example: auto files = write_grafana_export({.directory = "out", .prometheus_url = "http://127.0.0.1:9090"});
// Thread-safe (no shared state). The dashboards use template variables $datasource, $job, $model
// ($queue_job with the Queue row) and Grafana's $__rate_interval; grafana_expressions() lists every PromQL expression in one.
#pragma once

#include <string>
#include <vector>

#include "dialect/dialect.h"
#include "inferscope/common/result.h"

namespace inferscope::dashboard {

// grafana_dialects returns the dialects a dashboard is exported for.
std::vector<dialect::DialectId> grafana_dialects();

// grafana_dashboard_json returns the dashboard model (schemaVersion 39) for `id` as JSON text.
// With `queue_row`, it also has the Queue row of up's page (the job queue in front of the server:
// variable $queue_job lists the jobs exposing up's queue series).
std::string grafana_dashboard_json(dialect::DialectId id, bool queue_row = false);

// grafana_expressions returns every PromQL expression of a dashboard model (panels' targets and
// query variables), template variables still in place.
std::vector<std::string> grafana_expressions(const std::string& dashboard_json);

// GrafanaExportOptions says where the files go and which Prometheus the datasource points at.
struct GrafanaExportOptions {
  std::string directory;
  std::string prometheus_url = "http://127.0.0.1:9090";
  bool queue_row = false;  // up has a queue (redis) target: the dashboards get the Queue row
};

// write_grafana_export writes DIR/dashboards/inferscope-<dialect>.json for every grafana_dialects()
// entry, DIR/provisioning/dashboards/inferscope.yaml (a file provider reading DIR/dashboards) and
// DIR/provisioning/datasources/inferscope.yaml (the Prometheus datasource, uid inferscope-prometheus).
// Returns the written paths; fails with "cannot write <path>: <cause>".
Result<std::vector<std::string>> write_grafana_export(const GrafanaExportOptions& options);

}  // namespace inferscope::dashboard
