// File: diagnosis.h
// diagnose() is the doctor's reasoning: from a Snapshot (baseline vs incident) it decides the
// verdict (healthy / degraded / no_data), splits the change of mean e2e latency into stages,
// and names ranked causes from DESIGN.md's stable list with score, stage, share of the
// slowdown, evidence and next steps. Example: Diagnosis d = diagnose(snapshot); print(d.verdict);
// Pure function on values; thread-safe; never throws. Cost: microseconds.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "doctor/snapshot.h"

namespace inferscope::doctor {

// Evidence is one number behind a finding, in both windows.
struct Evidence {
  std::string metric;
  double baseline = kNaN;
  double incident = kNaN;
  std::string unit;
};

// TraceExample is one request of the incident window whose own stage breakdown shows a finding
// (trace_examples.h): its trace id in up's store, its duration and its stages' durations.
struct TraceExample {
  std::string trace_id;  // 32 lowercase hex
  double duration_s = kNaN;
  std::map<std::string, double> stages;  // stage name -> seconds
};

// Finding is one named cause.
struct Finding {
  std::string cause;    // stable id, to_string(CauseId): load_increase, long_prompts, ... (DESIGN.md)
  std::string stage;    // stage it hits most ("" when none, e.g. error_spike)
  double score = 0;     // 0..1: strength of the evidence times how much of the slowdown it explains
  double share = kNaN;  // fraction of the e2e mean change explained (NaN when not applicable)
  std::string summary;  // one sentence
  std::vector<Evidence> evidence;
  std::vector<std::string> next_steps;
  Where where = {};     // filled when the evidence localizes the finding (localize(), localize.h)
  std::vector<TraceExample> examples = {};  // up to 3, longest first (attach_examples); empty without traces
};

// StageRow is one line of the per-stage table.
struct StageRow {
  std::string stage;
  WindowStat baseline, incident;
  double delta_s = kNaN;  // change of per-request contribution
  double share = kNaN;    // delta_s / change of mean e2e
};

// Considered is a cause that was examined and not reported, with why (visible reasoning).
struct Considered {
  std::string cause;
  double score = 0;
  std::string reason;
};

// kNoStageBreakdownNote begins the note of a diagnosis whose target exposes e2e and no stage
// (a hand-instrumented service, `kind: custom` with e2e only).
inline constexpr const char* kNoStageBreakdownNote = "no stage breakdown exists for this target";

// Diagnosis is the doctor's answer.
struct Diagnosis {
  std::string verdict;  // "healthy", "degraded" or "no_data"
  std::string headline; // one line
  Snapshot snapshot;    // the input (windows, dialect, source)
  WindowStat e2e_baseline, e2e_incident;
  double e2e_change_s = kNaN;   // incident mean - baseline mean
  double e2e_noise_s = kNaN;    // smallest change the baseline's own variation lets us call real
  double unexplained_share = kNaN;
  std::vector<Finding> findings;  // ranked, best first
  std::vector<StageRow> stages;   // pipeline order
  std::vector<Considered> considered;
  std::vector<std::string> notes;
  std::string trace_page_url;  // up's page, which opens a trace from ?trace=<id>; "" = no links
};

// DiagnoseOptions tunes the decision thresholds (defaults are what the scenario suite uses).
struct DiagnoseOptions {
  double min_requests = 5;        // fewer finished requests in a window -> no_data (unless stalled)
  double min_relative_change = 0.10;  // slowdowns below this share of the baseline mean are not reported
  double noise_sigmas = 3;        // a change must exceed this many standard errors of the baseline
  double min_score = 0.25;        // findings below are listed under considered[]
};

// diagnose reasons over the snapshot. See docs/doctor.md for the rules.
Diagnosis diagnose(const Snapshot& snapshot, const DiagnoseOptions& options = {});

// exit_code_for maps a verdict to the CLI's exit status: 0 healthy, 1 degraded, 2 no_data.
int exit_code_for(const std::string& verdict);

}  // namespace inferscope::doctor
