// File: check_metrics.h
// check_metrics inspects one metrics endpoint for `doctor --check-metrics URL`: its dialect,
// expected metrics it lacks, renamed (deprecated) names it still uses or that dashboards built
// for older versions would expect, exposition problems found by the library's strict
// validator, and the families with the most series (cardinality).
// Example: MetricsCheck c = check_exposition(fetched); std::cout << to_text(c);
// Pure functions (fetching is the caller's); thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "doctor/scrape_collector.h"

namespace inferscope::doctor {

struct MetricsCheck {
  std::string url;
  std::vector<std::string> dialects;
  std::vector<std::string> missing;            // expected role metrics absent (--roles: every mapped one)
  std::vector<std::string> unmapped;           // --roles: usual roles the mapping does not name
  // The roles the doctor reads from this exposition: "route: dynamo_frontend_stage_duration_seconds{stage=\"route\"}",
  // "pool_waiting: dynamo_frontend_router_queue_pending_requests (per worker_type)".
  std::vector<std::string> reads;
  std::vector<std::string> renamed;            // old names still exposed -> current name
  std::vector<std::string> dashboard_gaps;     // old names dashboards may query that are gone
  // Validator findings split by what they cost. problems: what loses data at ingestion (a
  // duplicate series: Prometheus keeps one sample and drops the others) or breaks a family the
  // dialect reads (the doctor, rules and panels would read wrong numbers); they degrade the
  // verdict. warnings: quirks Prometheus ingests (an le label on a gauge) in families nothing
  // reads; listed beside a healthy verdict.
  std::vector<std::string> problems;
  std::vector<std::string> warnings;
  std::vector<std::pair<std::string, std::size_t>> top_families;  // name, series count
  std::size_t families = 0, series = 0;
  std::string verdict;  // "healthy" (warnings allowed), "degraded" (missing, renamed, problems), "no_data" (unknown)
};

// check_exposition analyses one fetched exposition; with `custom` (--roles) it checks the
// mapping's names instead of detecting a dialect.
MetricsCheck check_exposition(const std::string& url, const FetchedExposition& fetched,
                              const dialect::CustomDialect* custom = nullptr);

std::string to_text(const MetricsCheck& check);
nlohmann::json to_json(const MetricsCheck& check);

}  // namespace inferscope::doctor
