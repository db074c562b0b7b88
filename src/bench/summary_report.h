// File: summary_report.h
// The final report of a run: a console table laid out like vllm bench serve's (same labels,
// 40-char label column, 50-char rules) with inferscope's extra sections (corrected latencies,
// schedule lag, errors, token source), and the --json summary (vLLM's keys plus extras).
// Example: std::string table = format_summary(stats, info); nlohmann::json j = summary_json(stats, info);
// Pure formatting; thread-safe. Never includes the API key or any prompt text.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/run_stats.h"

namespace inferscope::bench {

// RunInfo is the configuration echoed into reports.
struct RunInfo {
  std::string base_url, endpoint, model, dataset, arrival;
  double request_rate = 0;           // 0 = none (closed loop or all at once)
  double burstiness = 1;
  std::uint32_t max_concurrency = 0; // 0 = none
  std::uint64_t num_prompts = 0;
  double duration_s = 0;
  std::uint64_t seed = 0;
  bool streaming = true;
  bool interrupted = false;
  std::string stages;                // --stages text, "" if none
  std::vector<std::string> class_names;
};

// format_summary renders the console table.
std::string format_summary(const RunStats& stats, const RunInfo& info);

// summary_json renders the --json document: vLLM keys (completed, failed, duration,
// request_throughput, mean_ttft_ms, p99_ttft_ms, ...) and inferscope's (errors, *_corrected,
// schedule lag, token_sources, slo_attainment, client_fell_behind, config).
nlohmann::json summary_json(const RunStats& stats, const RunInfo& info);

// target_loss_line returns the report's line saying that the target went away and when, or that it
// was never reachable; "" when it stayed up.
std::string target_loss_line(const TargetLoss& loss);

// percentile_key returns vLLM's spelling of a percentile key: "p99", "p99.9".
std::string percentile_key(double p);

}  // namespace inferscope::bench
