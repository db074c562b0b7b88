// File: api_response.h
// Types of the Prometheus HTTP API (v1) and the parsers of its JSON answers: instant and range
// query results (vector, matrix, scalar, string), /api/v1/series, /api/v1/targets, /api/v1/alerts and
// /api/v1/query_exemplars.
// Example: auto r = parse_query_response(body); if (r) for (auto& s : r->series) use(s.labels);
// Pure functions on values; thread-safe. Never throw: a malformed body, an error status or a
// result of the wrong shape becomes an Error ("cannot parse Prometheus response: ...").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inferscope/common/result.h"

namespace inferscope::promapi {

// Labels is one series' label set, __name__ included when Prometheus returns it.
using Labels = std::map<std::string, std::string>;

// Point is one sample: Unix seconds and value (NaN/±Inf kept as Prometheus sends them).
struct Point {
  double time = 0;
  double value = 0;
};

// Series is one labelled series: one point for a vector result, many for a matrix.
struct Series {
  Labels labels;
  std::vector<Point> points;
};

// QueryResult is the data of a query or query_range answer. result_type is "vector", "matrix",
// "scalar" or "string"; a scalar is returned as one series without labels.
struct QueryResult {
  std::string result_type;
  std::vector<Series> series;
  std::vector<std::string> warnings;
};

// TargetHealth is one active scrape target of /api/v1/targets.
struct TargetHealth {
  Labels labels;            // job, instance and the other target labels
  std::string scrape_url;
  std::string health;       // "up", "down" or "unknown"
  std::string last_error;
  std::string last_scrape;  // RFC 3339 time of the last scrape, as the server sent it
  double scrape_interval_s = 0;  // from scrapeInterval ("15s", "1m"); 0 when absent
};

// AlertInfo is one pending or firing alert of /api/v1/alerts (the rule's annotations exist only here).
struct AlertInfo {
  Labels labels;          // alertname, severity and the other alert labels
  Labels annotations;     // summary, description, runbook ...
  std::string state;      // "pending" or "firing"
  std::string active_at;  // RFC 3339 time the alert became active, as the server sent it
  std::string value;      // the expression's value as Prometheus formats it ("1.5e+00"), or empty
};

// Exemplar is one exemplar of /api/v1/query_exemplars: its own labels (trace_id ...), the observed
// value and when it was observed (Unix seconds).
struct Exemplar {
  Labels labels;
  double value = 0;
  double time = 0;
};

// ExemplarSeries is one series' exemplars (series_labels: __name__, le, job ... of the bucket).
struct ExemplarSeries {
  Labels series_labels;
  std::vector<Exemplar> exemplars;
};

// parse_query_response parses the JSON body of /api/v1/query or /api/v1/query_range.
// A body with "status":"error" becomes an Error carrying errorType and error.
Result<QueryResult> parse_query_response(std::string_view body);

// parse_series_response parses /api/v1/series: one label set per series.
Result<std::vector<Labels>> parse_series_response(std::string_view body);

// parse_targets_response parses /api/v1/targets (active targets only).
Result<std::vector<TargetHealth>> parse_targets_response(std::string_view body);

// parse_alerts_response parses /api/v1/alerts.
Result<std::vector<AlertInfo>> parse_alerts_response(std::string_view body);

// parse_exemplars_response parses /api/v1/query_exemplars (empty when exemplar storage is off).
Result<std::vector<ExemplarSeries>> parse_exemplars_response(std::string_view body);

// parse_sample_value parses a Prometheus sample value string ("1.5", "NaN", "+Inf", "-Inf").
std::optional<double> parse_sample_value(std::string_view text) noexcept;

}  // namespace inferscope::promapi
