// File: bench_options.h
// BenchOptions holds `inferscope bench`'s flags as typed on the command line, and
// build_run_setup validates them into what a run needs (target, plan, bounds, workload, request
// options), so flag semantics are testable without running anything.
// Example: auto setup = build_run_setup(options); if (!setup) fail(setup.error().message);
// Pure setup code; thread-compatible. Never stores the API key anywhere but RequestOptions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/slo.h"
#include "bench/summary_report.h"
#include "inferscope/common/result.h"
#include "loadgen/request_runner.h"

namespace inferscope::bench {

struct BenchOptions {
  std::string base_url = "http://127.0.0.1:8000";
  std::string endpoint = "/v1/chat/completions";
  std::string model;                    // "" = omitted: the server's default model
  std::uint64_t num_prompts = 0;        // 0 = not given
  std::string request_rate = "inf";
  double burstiness = 1.0;
  std::string arrival;                  // constant|poisson|gamma; "" = from burstiness
  std::uint32_t max_concurrency = 0;
  std::string duration, warmup, stages, slo, timeout = "10m";
  std::uint32_t random_input_len = 1024, random_output_len = 128;
  double random_range_ratio = 0, shared_prefix_ratio = 0;
  std::uint32_t prefix_pool = 0, prefix_len = 0;  // --prefix-pool N --prefix-len T; 0 = none
  std::uint32_t lora_adapters = 0;      // --lora-adapters N: requests name <lora_prefix>1..N in turn
  std::string lora_prefix = "lora-";
  std::string input_len_dist, output_len_dist, mix;
  std::string dataset_name = "random", dataset_path;
  std::uint32_t sharegpt_output_len = 0;
  std::uint64_t seed = 0;
  bool no_stream = false, no_include_usage = false, ignore_eos = false, insecure = false, no_progress = false;
  std::string ca_file;  // PEM CA certificates trusted besides the system store
  std::vector<std::string> headers;
  std::string api_key_env, api_key_file;
  std::string json_path, csv_path, jsonl_path;
  int metrics_port = -1;                // -1 = off
  // server_metrics: the server's /metrics URL; set, the run ends with the server's stage table
  // (bench/server_stages.h): its inferscope_stage_duration_seconds between a scrape before and after.
  std::string server_metrics;
  std::uint32_t io_threads = 1;         // threads reading and stamping responses
  double fail_under_goodput = -1;       // -1 = off; else exit 3 when SLO attainment is below it
};

// RunSetup is everything a run needs, validated.
struct RunSetup {
  loadgen::RunConfig config;
  loadgen::RequestOptions request;
  std::unique_ptr<loadgen::Workload> workload;
  SloSpec slo;
  RunInfo info;
  std::optional<double> fail_under_goodput;  // the --fail-under-goodput gate, with an SLO
};

// build_run_setup validates `o`; each error is one line naming the offending flag.
Result<RunSetup> build_run_setup(const BenchOptions& o);

}  // namespace inferscope::bench
