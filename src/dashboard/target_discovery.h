// File: dashboard/target_discovery.h
// Finds the scrape targets behind a Prometheus and the dialect each job speaks, from the metric
// names Prometheus holds (same precedence as dialect/detect.h uses on an exposition: inferscope
// engine families > other inferscope_* (gateway) > vllm: > llamacpp: > tgi_ > nv_inference_ >
// DCGM_FI_ > node_), plus the model names each job reports.
// Example: auto targets = discover_targets(client, now); if (targets) pick(targets->jobs);
// Thread-safe: no state. Costs three concurrent instant queries.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dialect/dialect.h"
#include "inferscope/common/result.h"
#include "promapi/prometheus_client.h"

namespace inferscope::dashboard {

// JobInfo is one scrape job as the dashboard sees it.
struct JobInfo {
  std::string job;
  std::optional<dialect::DialectId> dialect;  // nullopt: no known metric family found
  int instances = 0;
  int instances_up = 0;
  std::vector<std::string> models;
};

// Targets is every job Prometheus scrapes, serving jobs first in the order the selector offers.
struct Targets {
  std::vector<JobInfo> jobs;
  std::vector<std::string> models;  // union over jobs, sorted
};

// discover_targets asks Prometheus (instant queries at `now`). Fails when Prometheus cannot be
// reached or answers with an error.
Result<Targets> discover_targets(const promapi::PrometheusClient& client, double now);

// default_job returns the job the page shows first: the first job whose dialect serves requests
// (not dcgm/node), or nullptr.
const JobInfo* default_job(const Targets& targets);

// find_job returns the job named `job`, or nullptr.
const JobInfo* find_job(const Targets& targets, std::string_view job);

// is_serving_dialect reports whether `id` is a request-serving dialect (not dcgm, node).
bool is_serving_dialect(dialect::DialectId id) noexcept;

}  // namespace inferscope::dashboard
