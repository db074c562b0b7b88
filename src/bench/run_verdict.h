// File: run_verdict.h
// RunVerdict turns a finished run into `inferscope bench`'s exit status, so a CI job can gate on
// it: 0 ran and something succeeded, 2 every measured request failed, 3 the SLO attainment fell
// under --fail-under-goodput, 130 interrupted (docs/bench.md lists them with 1 for bad flags).
// Example: RunVerdict v = run_verdict(stats, interrupted, 0.95); if (v.code) std::exit(v.code);
// Pure function of its inputs; thread-safe. Never reads a clock or prints.
#pragma once

#include <optional>
#include <string>

#include "bench/run_stats.h"

namespace inferscope::bench {

inline constexpr int kExitAllFailed = 2;
inline constexpr int kExitUnderGoodput = 3;
inline constexpr int kExitInterrupted = 130;

// RunVerdict is the exit status and, for a non-zero one other than an interruption, the one-line
// reason printed on stderr.
struct RunVerdict {
  int code = 0;
  std::string reason;
};

// run_verdict decides the exit status. An interruption wins (the report is partial); then "all
// failed" (no measured request succeeded, including a run that measured none); then the goodput
// gate, when `fail_under_goodput` is set, against stats.slo_attainment (good / measured).
RunVerdict run_verdict(const RunStats& stats, bool interrupted, std::optional<double> fail_under_goodput);

}  // namespace inferscope::bench
