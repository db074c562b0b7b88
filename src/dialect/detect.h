// File: dialect/detect.h
// Recognises which dialects a scraped exposition speaks, and checks one target against its
// dialect: which expected metrics it lacks, which renamed/deprecated names it still uses.
// Example: auto parsed = metrics::parse_exposition(body, metrics::ExpositionTextFormat::kPrometheus004);
//          Detection d = detect_dialects(*parsed); if (d.primary) report(check_coverage(*parsed, *d.primary));
// Thread-safe (pure functions). Keeps no reference to the exposition. Empty is not healthy: a
// target that exposes nothing known gives primary == nullopt, never a default dialect.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dialect/dialect.h"
#include "inferscope/metrics/exposition_parser.h"

namespace inferscope::dialect {

// DetectedDialect is one dialect found in an exposition.
struct DetectedDialect {
  DialectId id;
  std::size_t families = 0;  // families of this dialect in the exposition
  std::string variant;       // e.g. "older set (b4748 era)", "legacy aliases on"; empty when plain
};

// Detection is what detect_dialects found.
struct Detection {
  std::optional<DialectId> primary;    // the serving software; nullopt when nothing known matched
  std::vector<DetectedDialect> found;  // every dialect seen, primary first, then table order
  std::string evidence;                // one line for humans ("12 llamacpp:* families, older set")
};

// detect_dialects classifies by family-name prefixes (metric-dialects.md): inferscope_* request or
// engine families make an inferscope server, the same families without engine gauges (or with
// gateway stages) a gateway; otherwise vllm: > llamacpp: > tgi_ > nv_inference_ > sglang: > litellm_ >
// dynamo_ > llm_d_/inference_{objective,pool,extension}_ > DCGM_FI_ > node_ (kAllDialects' order).
// inferscope serve is primary kInferscope with kVllm and kDcgm also found (its compatibility
// families). Only inferscope's own housekeeping families (inferscope_metrics_*, as `inferscope up`
// itself exposes) count as no serving dialect.
Detection detect_dialects(const metrics::ParsedExposition& exposition);

// MissingMetric is a binding whose metric (and every legacy name) is absent from the exposition.
struct MissingMetric {
  Role role;
  std::string metric;
  Presence presence;
};

// RenamedMetric is a binding for which the exposition carries an older name.
struct RenamedMetric {
  Role role;
  std::string legacy;    // the old name found
  std::string current;   // the name the table expects today
  bool current_present;  // true: both exposed (a deprecated alias switched on); false: only the old one
  std::string note;      // when and why it changed
};

// DeprecatedUse is a deprecated or misleading name found in the exposition.
struct DeprecatedUse {
  std::string name;
  std::string instead;
};

// Coverage is one target checked against one dialect.
struct Coverage {
  DialectId dialect = DialectId::kInferscope;
  std::vector<Role> present = {};             // roles whose family (current or legacy name) is exposed
  std::vector<Role> without_series = {};      // present but no series yet matching the binding (lazy, idle)
  std::vector<MissingMetric> missing = {};    // kAlways/kLazy bindings absent: renamed, disabled or broken
  std::vector<MissingMetric> optional_missing = {};  // kOptional bindings absent (opt-in, version-dependent)
  std::vector<RenamedMetric> renamed = {};
  std::vector<DeprecatedUse> deprecated = {};
  std::vector<Role> unsupported = {};         // roles the dialect has no metric for at all

  // missing_latency reports whether any latency role (is_latency_role) is in `missing`.
  bool missing_latency() const;
};

// check_coverage checks `exposition` against `id`. A family counts as exposed when it is declared
// (HELP/TYPE, also the OpenMetrics spelling without _total) or has a sample of its series name.
Coverage check_coverage(const metrics::ParsedExposition& exposition, DialectId id);

// matchers_hold reports whether `labels` satisfy fixed matchers as written in MetricBinding
// (`a="x",b!="y"`; `=~`/`!~` are anchored regexes). Malformed matcher text never matches.
bool matchers_hold(std::string_view matchers, const std::vector<metrics::ParsedLabel>& labels);

}  // namespace inferscope::dialect
