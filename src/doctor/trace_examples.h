// File: trace_examples.h
// Example requests for the doctor's findings, from up's trace store (GET /api/traces, the list of
// the incident window's slowest and failed requests with each one's stage durations;
// docs/tracing.md): per finding up to three requests whose own breakdown shows it. A stage finding
// (decode_slowdown, queue_backlog, ...) takes requests whose span of that stage is their longest
// stage and longer than the baseline's mean for the stage; error_spike takes failed requests.
// Longest first. No traces, or none that show it: no examples (never a request that does not).
// Example: auto listing = fetch_trace_listing("http://127.0.0.1:9466", since, "sim-a", {});
//          if (listing) attach_examples(diagnosis, *listing);
// attach_examples and parse_trace_listing are pure; fetch_trace_listing blocks for one HTTP round trip.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "doctor/diagnosis.h"
#include "inferscope/common/result.h"
#include "net/blocking_client.h"

namespace inferscope::doctor {

// TraceListing is one row of up's GET /api/traces.
struct TraceListing {
  std::string trace_id;  // 32 lowercase hex
  std::string job;       // the root span's service.name
  std::string model;
  double start = kNaN;   // unix seconds
  double duration_s = kNaN;
  bool failed = false;   // status "error"
  std::map<std::string, double> stages;  // the root's direct children by stage name, seconds
};

// parse_trace_listing reads the body of GET /api/traces ({"traces":[...]}). Errors read
// "cannot read the trace list: <cause>".
Result<std::vector<TraceListing>> parse_trace_listing(std::string_view body);

// fetch_trace_listing asks `api_url` (up's api base, e.g. http://127.0.0.1:9466) for the traces
// that started at or after `since` (unix seconds), of `model` when not empty, at most 1000.
// Errors name `where` (the flag) and the failing request.
Result<std::vector<TraceListing>> fetch_trace_listing(const std::string& api_url, double since,
                                                      const std::string& model, const net::TlsOptions& tls,
                                                      std::string_view where = "--traces");

// kMaxExamples is how many example requests a finding lists at most.
inline constexpr std::size_t kMaxExamples = 3;

// attach_examples fills each finding's examples from `traces` that started inside the
// diagnosis' incident window (see the file comment for which requests show which finding).
void attach_examples(Diagnosis& diagnosis, const std::vector<TraceListing>& traces);

// add_trace_examples fetches the incident window's traces from `api_url` and attaches them; when
// up cannot answer it adds a note saying example traces are unavailable and why, and no examples.
// `page_url` (up's page, which opens a trace from ?trace=<id>) becomes diagnosis.trace_page_url.
void add_trace_examples(Diagnosis& diagnosis, const std::string& api_url, const std::string& page_url,
                        const std::string& model, const net::TlsOptions& tls);

}  // namespace inferscope::doctor
