// File: doctor_api.h
// The doctor as a library call for other parts: run_doctor (collect from Prometheus + diagnose),
// handle_doctor_api for `inferscope up`'s GET /api/doctor?window=5m&baseline=30m&at=..&selector=..&model=..
// (JSON, OpenAI-style error JSON on bad input). What the relay attaches to alert notifications
// is in alert_diagnosis.h.
// Example: auto answer = handle_doctor_api("window=5m", "http://127.0.0.1:9090"); reply(answer.status, answer.body);
// Thread-safe; blocking (about one Prometheus round trip per 8 queries). Never throws.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "dialect/custom_dialect.h"
#include "doctor/diagnosis.h"
#include "inferscope/common/result.h"
#include "net/blocking_client.h"

namespace inferscope::doctor {

// CustomTargets: job -> the role mapping of a `kind: custom` target in up's config.
using CustomTargets = std::map<std::string, std::shared_ptr<const dialect::CustomDialect>>;

// DoctorRequest is one diagnosis over Prometheus.
struct DoctorRequest {
  std::string prometheus_url;
  double at = 0;  // 0 = now
  double window_s = 300;
  double baseline_s = 1800;
  std::string selector;
  std::string model;
  net::TlsOptions tls = {};  // for an https:// Prometheus (--ca-file, --insecure)
  // custom_targets: a selector naming one of these jobs (job="NAME") reads that job's mapping;
  // without such a selector they are left out (their names are not any known dialect's).
  CustomTargets custom_targets = {};
  // traces_url: up's api base (--traces; up passes its own): each finding then lists up to three
  // example requests of the window from up's trace store (trace_examples.h); "" = none.
  std::string traces_url = {};
};

// selected_job returns the job an exact `job="NAME"` matcher of `selector` names ("" when none).
std::string selected_job(const std::string& selector);

// run_doctor collects and diagnoses. Errors: Prometheus unreachable or refusing the queries.
// When the answer is no_data and the data starts after the baseline's start (a young stack or
// target), it diagnoses again within the history that exists (fit_to_history) and says so in
// the first note; it stays no_data when that history holds too little to compare.
Result<Diagnosis> run_doctor(const DoctorRequest& request);

// fit_to_history returns {window_s, baseline_s} that fit the history from data_start to at:
// the same window with the history before it as baseline when that is at least one window long,
// else two equal halves. nullopt when the requested range starts at or after data_start (the
// baseline is not cut short by a young target) or data_start is unknown.
std::optional<std::pair<double, double>> fit_to_history(double at, double data_start, double window_s,
                                                        double baseline_s);

// parse_time accepts RFC 3339 ("2026-11-30T13:00:00Z", offsets and fractions allowed) or Unix
// seconds ("1796000000", "1796000000.5"). Errors name `flag`.
Result<double> parse_time(std::string_view text, std::string_view flag);

// parse_duration accepts Prometheus durations ("90s", "5m", "1h30m"). Errors name `flag`.
Result<double> parse_duration(std::string_view text, std::string_view flag);

// ApiAnswer is the answer to one /api/doctor request: a body, or an error for the HTTP layer
// to render as OpenAI error JSON (doctor_routes.h does, through net::ApiError).
struct ApiAnswer {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;           // when status == 200
  std::string error_message;  // otherwise
  std::string error_type;     // "invalid_request_error", "upstream_error"
  std::string error_param;    // the offending query parameter, or empty
};

// handle_doctor_api answers GET /api/doctor. Query parameters: window, baseline (durations),
// at (time), selector, model, format=json|markdown|text. 400 on a bad parameter (naming it), 502
// when Prometheus cannot answer. The JSON is docs/doctor.md's schema.
// `traces_url` is DoctorRequest::traces_url (up passes its own api base).
ApiAnswer handle_doctor_api(std::string_view query_string, const std::string& prometheus_url,
                            const net::TlsOptions& tls = {}, const CustomTargets& custom_targets = {},
                            const std::string& traces_url = {});

// url_decode decodes one component of a URL query (%XX escapes, '+' as a space).
std::string url_decode(std::string_view in);

}  // namespace inferscope::doctor
