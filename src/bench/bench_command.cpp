#include "bench/bench_command.h"

#include <unistd.h>

#include <cstdio>
#include <chrono>
#include <fstream>
#include <optional>
#include <thread>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/bench_compare.h"
#include "bench/bench_options.h"
#include "bench/client_metrics.h"
#include "bench/progress_line.h"
#include "bench/request_log.h"
#include "bench/run_stats.h"
#include "bench/run_verdict.h"
#include "bench/server_stages.h"

namespace inferscope::bench {
namespace {

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "inferscope bench: %s\n", message.c_str());
  throw CLI::RuntimeError(1);
}

// Fanout forwards observer calls to the progress line and the metrics exporter.
class Fanout final : public loadgen::RunObserver {
 public:
  std::vector<loadgen::RunObserver*> targets;
  void on_complete(const loadgen::RequestRecord& r) override {
    for (loadgen::RunObserver* t : targets) t->on_complete(r);
  }
  void on_tick(const loadgen::RunStatus& s) override {
    for (loadgen::RunObserver* t : targets) t->on_tick(s);
  }
};

// raise_fd_limit lifts the soft open-file limit to the hard one: thousands of streams need
// thousands of sockets, and the default soft limit is often 1024.
void raise_fd_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

void run_bench(const BenchOptions& o) {
  auto setup = build_run_setup(o);
  if (!setup) fail(setup.error().message);
  raise_fd_limit();
  std::unique_ptr<ClientMetrics> metrics;
  if (o.metrics_port >= 0) {
    if (o.metrics_port > 65535) fail("cannot use --metrics-port: must be 0..65535");
    auto m = ClientMetrics::start(static_cast<std::uint16_t>(o.metrics_port));
    if (!m) fail(fmt::format("cannot serve client metrics on --metrics-port {}: {}", o.metrics_port, m.error().message));
    metrics = std::move(*m);
    std::fprintf(stderr, "inferscope bench: client metrics on http://127.0.0.1:%u/metrics\n", metrics->port());
  }
  const net::TlsOptions server_tls{o.ca_file, !o.insecure};
  std::optional<ServerStageTotals> stages_before;
  if (!o.server_metrics.empty()) {
    auto scraped = scrape_server_stages(o.server_metrics, server_tls);
    if (!scraped) fail(scraped.error().message);
    stages_before = std::move(*scraped);
  }
  loadgen::RequestBuilder builder(setup->config.target, setup->request);
  loadgen::RequestRunner runner(setup->config, *setup->workload, builder);
  ProgressLine progress(stderr, isatty(STDERR_FILENO) != 0);
  Fanout fanout;
  if (!o.no_progress) fanout.targets.push_back(&progress);
  if (metrics) fanout.targets.push_back(metrics.get());
  runner.set_observer(&fanout);
  auto result = runner.run();
  if (!o.no_progress) progress.finish();
  if (!result) fail(result.error().message);
  setup->info.interrupted = result->interrupted;
  RunStats stats = compute_stats(*result, setup->slo);
  std::fputs(format_summary(stats, setup->info).c_str(), stdout);
  if (stages_before) {
    // The server records a request after its last byte, so one the client just finished may not
    // be counted yet: scrape again (up to ~2 s) until it has counted every request of the run.
    const auto expected = static_cast<double>(result->records.size());
    auto scraped = scrape_server_stages(o.server_metrics, server_tls);
    for (int tries = 0; scraped && scraped->e2e_count - stages_before->e2e_count < expected && tries < 40; ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      scraped = scrape_server_stages(o.server_metrics, server_tls);
    }
    if (!scraped) fail(scraped.error().message);
    std::fputs(format_server_stages(*stages_before, *scraped).c_str(), stdout);
  }
  std::fflush(stdout);
  if (!o.json_path.empty()) {
    std::ofstream out(o.json_path);
    out << summary_json(stats, setup->info).dump(2) << "\n";
    if (!out) fail(fmt::format("cannot write summary to {}: write failed", o.json_path));
  }
  if (!o.csv_path.empty()) {
    if (auto ok = write_request_csv(o.csv_path, *result, setup->info.class_names); !ok) fail(ok.error().message);
  }
  if (!o.jsonl_path.empty()) {
    if (auto ok = write_request_jsonl(o.jsonl_path, *result, setup->info.class_names); !ok) fail(ok.error().message);
  }
  RunVerdict verdict = run_verdict(stats, result->interrupted, setup->fail_under_goodput);
  if (!verdict.reason.empty()) std::fprintf(stderr, "inferscope bench: %s\n", verdict.reason.c_str());
  if (verdict.code != 0) throw CLI::RuntimeError(verdict.code);
}

void add_flags(CLI::App* cmd, BenchOptions& o) {
  cmd->add_option("--base-url", o.base_url, "Server URL, http:// or https:// (default http://127.0.0.1:8000)");
  cmd->add_option("--endpoint", o.endpoint, "API path: /v1/chat/completions (default) or /v1/completions");
  cmd->add_option("--model", o.model, "Model name sent in each request (default: none, the server's default)");
  cmd->add_option("--num-prompts", o.num_prompts, "Requests to measure (default 1000 without --duration/--stages)");
  cmd->add_option("--request-rate", o.request_rate, "Open-loop arrivals per second, or inf (default)");
  cmd->add_option("--burstiness", o.burstiness, "Gamma shape of the gaps: 1 = Poisson, <1 burstier, >1 smoother");
  cmd->add_option("--arrival", o.arrival, "constant | poisson | gamma (default from --burstiness)");
  cmd->add_option("--max-concurrency", o.max_concurrency, "Cap on requests in flight (alone: closed loop)");
  cmd->add_option("--duration", o.duration, "Stop dispatching after this long (e.g. 60s), after warm-up");
  cmd->add_option("--warmup", o.warmup, "Warm-up excluded from statistics: a request count or a duration (10s)");
  cmd->add_option("--stages", o.stages, "Load steps, e.g. 30s:rate=5,60s:rate=50,30s:rate=5 or 20s:concurrency=8");
  cmd->add_option("--slo", o.slo, "Goodput objectives, e.g. ttft=500ms,tpot=50ms,e2e=10s (from intended send)");
  cmd->add_option("--fail-under-goodput", o.fail_under_goodput,
                  "With --slo: exit 3 when the share of requests meeting every objective is below this (0..1)");
  cmd->add_option("--timeout", o.timeout, "Per-request deadline (default 10m)");
  cmd->add_option("--random-input-len", o.random_input_len, "Synthetic prompt tokens (default 1024)");
  cmd->add_option("--random-output-len", o.random_output_len, "Output tokens requested (default 128)");
  cmd->add_option("--random-range-ratio", o.random_range_ratio, "Uniform lengths in [L(1-r), L(1+r)]");
  cmd->add_option("--input-len-dist", o.input_len_dist, "N | uniform:LO:HI | normal:MEAN:SD | lognormal:MEAN:SD");
  cmd->add_option("--output-len-dist", o.output_len_dist, "Same forms as --input-len-dist");
  cmd->add_option("--shared-prefix-ratio", o.shared_prefix_ratio, "Share of each prompt taken from one common prefix");
  cmd->add_option("--prefix-pool", o.prefix_pool,
                  "Distinct prefixes each prompt starts with one of (with --prefix-len; prefix caching)");
  cmd->add_option("--prefix-len", o.prefix_len, "Tokens of each --prefix-pool prefix, counted in the prompt's length");
  cmd->add_option("--lora-adapters", o.lora_adapters,
                  "Spread requests over N LoRA adapters: each names <--lora-prefix>1..N in turn as its model "
                  "(serve --lora-modules lora-1,...,lora-N)");
  cmd->add_option("--lora-prefix", o.lora_prefix, "Adapter name prefix for --lora-adapters (default lora-)");
  cmd->add_option("--mix", o.mix, "Weighted classes name:weight:in:out, e.g. ss:3:128:64,sl:1:128:1024,ll:1:2048:1024");
  cmd->add_option("--dataset-name", o.dataset_name, "random (default) | sharegpt | jsonl");
  cmd->add_option("--dataset-path", o.dataset_path, "Local ShareGPT JSON or JSONL file");
  cmd->add_option("--sharegpt-output-len", o.sharegpt_output_len, "Override ShareGPT output lengths");
  cmd->add_option("--seed", o.seed, "Seed for arrivals and prompts (default 0)");
  cmd->add_flag("--no-stream", o.no_stream, "Ask for whole responses instead of SSE streams");
  cmd->add_flag("--no-include-usage", o.no_include_usage, "Do not ask for usage in streams (tokens are then counted)");
  cmd->add_flag("--ignore-eos", o.ignore_eos, "Ask the server to generate exactly max_tokens");
  cmd->add_option("--ca-file", o.ca_file, "PEM CA certificates to trust besides the system store (https)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--insecure", o.insecure, "Do not verify the server's TLS certificate");
  cmd->add_flag("--no-progress", o.no_progress, "No live progress line");
  cmd->add_option("--header", o.headers, "Extra request header 'Name: value' (repeatable)");
  cmd->add_option("--api-key-env", o.api_key_env, "Environment variable holding the API key");
  cmd->add_option("--api-key-file", o.api_key_file, "File holding the API key");
  cmd->add_option("--server-metrics", o.server_metrics,
                  "The server's /metrics URL: print its stage table (inferscope_stage_duration_seconds) for the run");
  cmd->add_option("--json,--save-result", o.json_path, "Write the summary JSON here");
  cmd->add_option("--csv", o.csv_path, "Write one CSV row per request here");
  cmd->add_option("--jsonl", o.jsonl_path, "Write one JSON object per request here");
  cmd->add_option("--metrics-port", o.metrics_port, "Serve client-side Prometheus metrics on 127.0.0.1:PORT");
  cmd->add_option("--io-threads", o.io_threads,
                  "Threads that read, parse and time-stamp responses, each with its own connections (default 1)");
}

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Load-test an OpenAI-compatible LLM API (coordinated-omission-correct)");
  auto options = std::make_shared<BenchOptions>();
  add_flags(bench, *options);
  CLI::App* compare = bench->add_subcommand("compare", "Print the difference of two --json summaries");
  auto files = std::make_shared<std::vector<std::string>>();
  compare->add_option("files", *files, "A.json B.json")->required()->expected(2);
  bench->require_subcommand(0, 1);
  compare->callback([files] {
    auto text = compare_summary_files((*files)[0], (*files)[1]);
    if (!text) fail(text.error().message);
    std::fputs(text->c_str(), stdout);
  });
  bench->callback([bench, compare, options] {
    if (compare->parsed()) return;
    (void)bench;
    run_bench(*options);
  });
}

}  // namespace inferscope::bench
