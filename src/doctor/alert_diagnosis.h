// File: alert_diagnosis.h
// What the relay attaches to alert notifications: diagnose_alert for a firing one (the doctor's
// Markdown, and a record of the figures it saw), recovery_markdown for the resolved one (those
// figures before / during / after, the "after" read the same way once the alert resolved; not a
// new diagnosis of the recovered window, whose verdict would contradict the alert).
// Example:
//   AlertDiagnosis d = diagnose_alert(url, alert.labels, alert.generator_url);  keep(d.record);
//   ... later:  std::string md = recovery_markdown(url, kept_record);
// Thread-safe; blocking (Prometheus round trips). Never throws.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "doctor/doctor_api.h"

namespace inferscope::doctor {

// AlertDiagnosis is a firing alert's Markdown and its record (JSON; "" when the doctor could
// not run, so nothing can be compared when the alert resolves).
struct AlertDiagnosis {
  std::string markdown;
  std::string record;
};

// RecoveredFigure is one figure of a resolved alert in the three windows (NaN: no data there).
struct RecoveredFigure {
  std::string name;  // "inferscope:e2e_seconds:p95 (the alert's expression)", "decode per request"
  std::string unit;  // "s" or "" (a plain number)
  double before = kNaN, during = kNaN, after = kNaN;
};

// FiringRecord is what diagnose_alert keeps of a firing alert for its resolved notification.
struct FiringRecord {
  std::string selector, model;  // the doctor's narrowing, from the alert's labels
  double fired_at = kNaN;       // the diagnosis' window end, Unix seconds
  double window_s = 300, baseline_s = 1800;
  std::string cause, stage;     // the top finding at firing ("" when none)
  // The alert's own figure: the left side of the rule's comparison and the labels it was for.
  std::string alert_expr;
  std::map<std::string, std::string> alert_labels;
  std::vector<RecoveredFigure> figures;  // before and during filled; after NaN
};

// diagnose_alert diagnoses the 5 minutes before `at` (0 = now) for the alert's labels (job,
// model / model_name narrow the selector; a `kind: custom` job reads its mapping from
// custom_targets) and returns chat-sized Markdown (on failure a one-line note, never empty) and
// the record: e2e mean and p95 and the top finding's stage per request in the baseline and the
// window, and the alert's own expression (read from Prometheus' generatorURL, the left side of
// its final comparison) averaged over the baseline and at `at`. With `traces_url` (up's API base)
// each finding lists example traces from that store, linked to its page.
AlertDiagnosis diagnose_alert(const std::string& prometheus_url, const std::map<std::string, std::string>& labels,
                              const std::string& generator_url, double at = 0, std::size_t max_bytes = 3500,
                              const net::TlsOptions& tls = {}, const CustomTargets& custom_targets = {},
                              const std::string& traces_url = {});

// recovery_markdown says what recovered: each figure of `record` (diagnose_alert's JSON) before,
// during and after, "after" read over the 5 minutes before `at` (0 = now) the same way. "" for an
// empty or unreadable record; the figures without "after" (and why) when Prometheus cannot answer.
std::string recovery_markdown(const std::string& prometheus_url, const std::string& record, double at = 0,
                              const net::TlsOptions& tls = {}, const CustomTargets& custom_targets = {});

// recovery_without_record says what recovered for an alert whose firing left no record (it fired
// before Prometheus was ready, or its diagnosis could not run): the firing is diagnosed now, at
// `fired_at` (the alert's startsAt, Unix seconds), and that record's figures are read before,
// during and after as recovery_markdown does. "" when even that cannot run.
std::string recovery_without_record(const std::string& prometheus_url, const std::map<std::string, std::string>& labels,
                                    const std::string& generator_url, double fired_at, double at = 0,
                                    const net::TlsOptions& tls = {}, const CustomTargets& custom_targets = {});

// alert_expression returns the left side of the final top-level comparison against a number in
// a generatorURL's g0.expr ("inferscope:e2e_seconds:p95{job=\"serve\"}" from "...p95{job=\"serve\"}
// > 2"), or "" when the URL has no expression or it does not end in such a comparison.
std::string alert_expression(const std::string& generator_url);

// record_to_json / record_from_json (nullopt when not a record) carry a FiringRecord.
std::string record_to_json(const FiringRecord& record);
std::optional<FiringRecord> record_from_json(const std::string& json);

// render_recovery is recovery_markdown's text for figures with "after" filled (`after_note`:
// why "after" is missing, or ""). Figures without a value before, during or after are left out;
// with none left it returns "" (the notification then has no "Recovered" part).
std::string render_recovery(const FiringRecord& record, double resolved_at, const std::string& after_note);

}  // namespace inferscope::doctor
