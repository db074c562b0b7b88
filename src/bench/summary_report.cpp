#include "bench/summary_report.h"

#include <fmt/format.h>

namespace inferscope::bench {
namespace {

void line(std::string& out, std::string_view label, double v, int decimals = 2) {
  out += fmt::format("{:<40} {:<10.{}f}\n", label, v, decimals);
}
void line(std::string& out, std::string_view label, std::uint64_t v) { out += fmt::format("{:<40} {:<10}\n", label, v); }
// rule centres `title` in a 50-char line of `c`, like Python's '{:c^50}'.
void rule(std::string& out, std::string_view title, char c) {
  std::size_t pad = title.size() < 50 ? 50 - title.size() : 0;
  out += std::string(pad / 2, c);
  out += title;
  out += std::string(pad - pad / 2, c);
  out += '\n';
}

void latency_section(std::string& out, const RunStats& st, std::string_view metric, std::string_view title,
                     std::string_view label) {
  const Summary& s = st.metric(metric);
  if (s.count == 0) return;
  rule(out, title, '-');
  line(out, fmt::format("Mean {} (ms):", label), s.mean);
  line(out, fmt::format("Median {} (ms):", label), s.median());
  for (double p : kReportedPercentiles) {
    if (p == 50) continue;
    line(out, fmt::format("P{} {} (ms):", percentile_key(p).substr(1), label), s.quantile(p));
  }
  line(out, fmt::format("Max {} (ms):", label), s.max);
}

}  // namespace

std::string target_loss_line(const TargetLoss& loss) {
  if (!loss.lost) return {};
  if (loss.never_reached) {
    return fmt::format("TARGET UNREACHABLE: no request succeeded; the last {} failed at the connection level "
                       "(from {:.3f} s into the run).\n",
                       loss.failed_after, loss.at_s);
  }
  return fmt::format("TARGET WENT AWAY at {:.3f} s into the run (last successful response at {:.3f} s): the {} "
                     "requests that ended after it all failed at the connection level.\n",
                     loss.at_s, loss.last_success_s, loss.failed_after);
}

std::string percentile_key(double p) {
  return p == static_cast<double>(static_cast<int>(p)) ? fmt::format("p{}", static_cast<int>(p)) : fmt::format("p{}", p);
}

std::string format_summary(const RunStats& st, const RunInfo& info) {
  std::string out;
  rule(out, " Serving Benchmark Result ", '=');
  line(out, "Successful requests:", static_cast<std::uint64_t>(st.completed));
  line(out, "Failed requests:", static_cast<std::uint64_t>(st.failed));
  if (info.max_concurrency > 0) line(out, "Maximum request concurrency:", static_cast<std::uint64_t>(info.max_concurrency));
  if (info.request_rate > 0) line(out, "Request rate configured (RPS):", info.request_rate);
  line(out, "Benchmark duration (s):", st.duration_s);
  line(out, "Total input tokens:", st.total_input_tokens);
  line(out, "Total generated tokens:", st.total_output_tokens);
  line(out, "Request throughput (req/s):", st.request_throughput);
  if (st.has_slo) line(out, "Request goodput (req/s):", st.request_goodput);
  line(out, "Output token throughput (tok/s):", st.output_throughput);
  line(out, "Peak output token throughput (tok/s):", st.peak_output_throughput);
  line(out, "Peak concurrent requests:", static_cast<std::uint64_t>(st.peak_concurrency));
  line(out, "Total token throughput (tok/s):", st.total_token_throughput);
  latency_section(out, st, "ttft", "Time to First Token", "TTFT");
  latency_section(out, st, "tpot", "Time per Output Token (excl. 1st token)", "TPOT");
  latency_section(out, st, "itl", "Inter-token Latency", "ITL");
  latency_section(out, st, "e2el", "End-to-end Latency", "E2EL");
  latency_section(out, st, "ttft_corrected", "TTFT from Intended Send (corrected)", "corrected TTFT");
  latency_section(out, st, "e2el_corrected", "E2EL from Intended Send (corrected)", "corrected E2EL");
  if (info.max_concurrency > 0) latency_section(out, st, "queue_time", "Client-side Queueing", "queue time");
  latency_section(out, st, "schedule_lag", "Client Schedule Lag", "lag");
  latency_section(out, st, "io_loop_lag", "Client IO Loop Lag (read lag)", "IO lag");
  rule(out, "Errors and Tokens", '-');
  for (int k = 1; k < loadgen::kErrorKindCount; ++k) {
    if (st.errors[static_cast<std::size_t>(k)] == 0) continue;
    line(out, fmt::format("Errors {}:", to_string(static_cast<loadgen::ErrorKind>(k))), st.errors[static_cast<std::size_t>(k)]);
  }
  if (st.has_slo) line(out, "SLO attainment (%):", st.slo_attainment * 100);
  for (int k = 1; k < 4; ++k) {
    if (st.token_sources[static_cast<std::size_t>(k)] == 0) continue;
    line(out, fmt::format("Output tokens from {} (req):", to_string(static_cast<loadgen::TokenSource>(k))),
         st.token_sources[static_cast<std::size_t>(k)]);
  }
  for (int k = 1; k < 4; ++k) {
    if (st.input_token_sources[static_cast<std::size_t>(k)] == 0) continue;
    line(out, fmt::format("Input tokens from {} (req):", to_string(static_cast<loadgen::TokenSource>(k))),
         st.input_token_sources[static_cast<std::size_t>(k)]);
  }
  if (st.warmup > 0) line(out, "Warm-up requests (excluded):", static_cast<std::uint64_t>(st.warmup));
  out += std::string(50, '=') + "\n";
  if (info.interrupted) out += "Interrupted: partial results.\n";
  out += target_loss_line(st.target_loss);
  if (st.client_fell_behind) {
    out += fmt::format("WARNING: the client fell behind its schedule: {:.1f}% of requests were sent more than 1 ms "
                       "late (see Client Schedule Lag); latencies from the intended send stay correct.\n",
                       st.late_fraction * 100);
  }
  return out;
}

nlohmann::json summary_json(const RunStats& st, const RunInfo& info) {
  nlohmann::json j;
  j["backend"] = info.endpoint.find("chat") != std::string::npos ? "openai-chat" : "openai";
  j["endpoint_type"] = info.endpoint;
  j["model_id"] = info.model;
  j["base_url"] = info.base_url;
  j["num_prompts"] = info.num_prompts;
  j["request_rate"] = info.request_rate > 0 ? nlohmann::json(info.request_rate) : nlohmann::json("inf");
  j["burstiness"] = info.burstiness;
  j["max_concurrency"] = info.max_concurrency > 0 ? nlohmann::json(info.max_concurrency) : nlohmann::json(nullptr);
  j["duration"] = st.duration_s;
  j["completed"] = st.completed;
  j["failed"] = st.failed;
  j["warmup_requests"] = st.warmup;
  j["total_input_tokens"] = st.total_input_tokens;
  j["total_output_tokens"] = st.total_output_tokens;
  j["request_throughput"] = st.request_throughput;
  j["request_goodput"] = st.has_slo ? nlohmann::json(st.request_goodput) : nlohmann::json(nullptr);
  j["slo_attainment"] = st.has_slo ? nlohmann::json(st.slo_attainment) : nlohmann::json(nullptr);
  j["output_throughput"] = st.output_throughput;
  j["total_token_throughput"] = st.total_token_throughput;
  j["max_output_tokens_per_s"] = st.peak_output_throughput;
  j["max_concurrent_requests"] = st.peak_concurrency;
  for (const auto& [name, s] : st.metrics) {
    j["mean_" + name + "_ms"] = s.mean;
    j["median_" + name + "_ms"] = s.median();
    j["std_" + name + "_ms"] = s.stddev;
    j["max_" + name + "_ms"] = s.max;
    j["count_" + name] = s.count;
    for (double p : kReportedPercentiles) j[percentile_key(p) + "_" + name + "_ms"] = s.quantile(p);
  }
  nlohmann::json errors = nlohmann::json::object();
  for (int k = 1; k < loadgen::kErrorKindCount; ++k) errors[std::string(to_string(static_cast<loadgen::ErrorKind>(k)))] = st.errors[static_cast<std::size_t>(k)];
  j["errors"] = errors;
  nlohmann::json sources = nlohmann::json::object();
  for (int k = 1; k < 4; ++k) sources[std::string(to_string(static_cast<loadgen::TokenSource>(k)))] = st.token_sources[static_cast<std::size_t>(k)];
  j["token_sources"] = sources;
  nlohmann::json input_sources = nlohmann::json::object();
  for (int k = 1; k < 4; ++k) {
    input_sources[std::string(to_string(static_cast<loadgen::TokenSource>(k)))] = st.input_token_sources[static_cast<std::size_t>(k)];
  }
  j["input_token_sources"] = input_sources;
  if (st.target_loss.lost) {
    j["target_lost"] = {{"at_s", st.target_loss.at_s},
                        {"last_success_s", st.target_loss.never_reached ? nlohmann::json(nullptr)
                                                                        : nlohmann::json(st.target_loss.last_success_s)},
                        {"failed_after", st.target_loss.failed_after},
                        {"never_reached", st.target_loss.never_reached}};
  } else {
    j["target_lost"] = nullptr;
  }
  j["late_fraction"] = st.late_fraction;
  j["client_fell_behind"] = st.client_fell_behind;
  j["interrupted"] = info.interrupted;
  j["config"] = {{"arrival", info.arrival}, {"stages", info.stages}, {"seed", info.seed},
                 {"streaming", info.streaming}, {"dataset", info.dataset}, {"duration_s", info.duration_s},
                 {"classes", info.class_names}};
  nlohmann::json metrics_doc = nlohmann::json::object();
  for (const auto& [name, what] : kMetricNames) metrics_doc[name] = what;
  j["metric_definitions"] = metrics_doc;
  return j;
}

}  // namespace inferscope::bench
