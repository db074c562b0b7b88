// File: run_stats.h
// RunStats is the exact summary of a finished run, computed from every measured (non-warm-up)
// record: counts, throughput, goodput, error breakdown, and a Summary per latency, each named
// explicitly (ttft = first output from the actual start; *_corrected = from the intended send).
// Example: RunStats st = compute_stats(result, slo, config_facts); st.metric("ttft").median();
// Pure computation over a finished run; thread-compatible. Never reads a clock.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench/latency_summary.h"
#include "bench/slo.h"
#include "loadgen/request_runner.h"

namespace inferscope::bench {

// kMetricNames lists every latency RunStats summarizes, in report order, with what it measures.
inline constexpr std::pair<const char*, const char*> kMetricNames[] = {
    {"ttft", "start -> first output event"},
    {"ttft_corrected", "intended send -> first output event"},
    {"ttft_first_event", "start -> first event with choices"},
    {"ttft_headers", "start -> response headers"},
    {"tpot", "(e2el - ttft) / (output tokens - 1), per request"},
    {"itl", "gap between output events, pooled"},
    {"itl_token", "event gap / tokens per event, pooled"},
    {"e2el", "start -> last output event"},
    {"e2el_corrected", "intended send -> last output event"},
    {"schedule_lag", "intended send -> dispatcher reached it (client lateness)"},
    {"queue_time", "dispatch -> start (waiting for a concurrency slot)"},
    {"io_loop_lag", "how late the client's io thread woke for a 2 ms probe timer (its read lag)"},
    {"dns", "name resolution (new connections)"},
    {"connect", "TCP connect (new connections)"},
    {"tls", "TLS handshake (new connections)"},
};

// TargetLoss describes the end of a run in which the target stopped answering: the records that
// ended last all failed at the connection level (refused, connect, reset, or a stream cut off),
// at least one of them while opening a new connection. It is empty otherwise.
struct TargetLoss {
  bool lost = false;              // the target went away (or was never reachable)
  bool never_reached = false;     // no request of the run succeeded
  double at_s = 0;                // run time (0 = start) when the first of those failures ended
  double last_success_s = 0;      // run time of the last successful response's end
  std::size_t failed_after = 0;   // requests that failed from at_s to the end
};

struct RunStats {
  std::size_t completed = 0, failed = 0, warmup = 0;
  double duration_s = 0;  // first measured intended send -> last measured response end
  std::uint64_t total_input_tokens = 0, total_output_tokens = 0;
  double request_throughput = 0, output_throughput = 0, total_token_throughput = 0;
  bool has_slo = false;
  double request_goodput = 0, slo_attainment = 0;  // good/duration; good/(completed+failed)
  double peak_output_throughput = 0;               // max tokens in a 1-s bucket
  std::uint32_t peak_concurrency = 0;              // measured requests overlapping
  std::array<std::uint64_t, loadgen::kErrorKindCount> errors{};
  std::array<std::uint64_t, 4> token_sources{};    // indexed by TokenSource
  std::array<std::uint64_t, 4> input_token_sources{};  // completed requests, indexed by TokenSource
  TargetLoss target_loss;
  double late_fraction = 0;                        // share of requests with schedule lag > 1 ms
  bool client_fell_behind = false;                 // late_fraction > 1 %
  std::vector<std::pair<std::string, Summary>> metrics;  // kMetricNames order, values in ms

  // metric returns the named summary (an empty one for an unknown name).
  const Summary& metric(std::string_view name) const;
};

// compute_stats summarizes `run`. Cost: O(n log n) in records and events.
RunStats compute_stats(const loadgen::RunResult& run, const SloSpec& slo);

}  // namespace inferscope::bench
