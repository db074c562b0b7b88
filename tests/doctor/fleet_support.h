// File: fleet_support.h
// CONSTRUCTED expositions of a disaggregated fleet (router, 2 prefill and 2 decode workers) for the
// doctor's unit tests, not recorded from running systems: inferscope serve's disaggregated names
// (/work/briefs series29: inferscope_stage_duration_seconds{stage="route"|"kv_transfer"},
// inferscope_pool_requests_waiting{pool}, inferscope_endpoint_requests{pool,endpoint}, ...), NVIDIA
// Dynamo's (dynamo_frontend_*, trtllm_kv_transfer_*, worker gauges with worker_id/dp_rank/
// worker_type) and llm-d's router (llm_d_router_epp_*, inference_pool_per_pod_queue_size,
// inference_extension_*), names and labels as ../shared/reference/serving-topologies.md §4-§5 give
// them, values from a simple model of the fleet (FleetState). Rounds every 5 s: a baseline window
// in one state, an incident window in another; histograms and counters advance, gauges are read
// as set, with a small alternating jitter so the baseline has noise.
// Example: Snapshot s = fleet_snapshot(FleetDialect::kDynamo, healthy_fleet(), slowed);
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "doctor/exposition_sampling.h"
#include "doctor/sampled_roles.h"

namespace inferscope::doctor::testing {

enum class FleetDialect { kInferscope, kDynamo, kLlmd };

struct FleetEndpoint {
  std::string pool, name;  // pool "prefill" / "decode"; names prefill-0, decode-1 ...
  double waiting = 0, running = 0;
};

// FleetState is the fleet in one window: per-request stage times (seconds), the mix, the gauges.
struct FleetState {
  double rate = 4;  // finished requests per second
  double preprocess = 0.003, route = 0.002, queue = 0.03, prefill = 0.2, kv_transfer = 0.04, decode = 1.5;
  double prompt = 2000, output = 150;  // tokens per request
  double kv_bytes = 2.6e8;             // bytes per transfer
  double prefix_hit = 0.3;             // the router's prefix hit per decision
  std::vector<FleetEndpoint> endpoints = {{"prefill", "prefill-0", 0.2, 1},
                                          {"prefill", "prefill-1", 0.2, 1},
                                          {"decode", "decode-0", 0.1, 3},
                                          {"decode", "decode-1", 0.1, 3}};
  bool disaggregated = true;  // false: a plain aggregated serve (no route, transfer, pool or endpoint series)
  bool fleet_gauges = true;   // false: the pool and endpoint gauges left out (what the doctor read before)
  double ttft() const { return preprocess + route + queue + prefill + (disaggregated ? kv_transfer : 0) + decode / output; }
  double e2e() const { return preprocess + route + queue + prefill + (disaggregated ? kv_transfer : 0) + decode; }
  FleetEndpoint& endpoint(const std::string& name) {
    for (FleetEndpoint& e : endpoints)
      if (e.name == name) return e;
    return endpoints.front();
  }
  double pool_waiting(const std::string& pool) const {
    double sum = 0;
    for (const FleetEndpoint& e : endpoints)
      if (e.pool == pool) sum += e.waiting;
    return sum;
  }
  double running() const {
    double sum = 0;
    for (const FleetEndpoint& e : endpoints) sum += e.running;
    return sum;
  }
};

inline FleetState healthy_fleet() { return FleetState{}; }

// FleetHist is one cumulative histogram.
struct FleetHist {
  std::vector<double> bounds;
  std::vector<double> counts = std::vector<double>(bounds.size(), 0);
  double sum = 0, count = 0;
  void observe(double v, double n) {
    for (std::size_t i = 0; i < bounds.size(); ++i)
      if (v <= bounds[i]) counts[i] += n;
    sum += v * n;
    count += n;
  }
};

inline std::string fleet_num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// FleetRenderer advances the fleet's cumulative series round by round and renders them.
class FleetRenderer {
 public:
  explicit FleetRenderer(FleetDialect dialect) : dialect_(dialect) {}

  // advance adds `seconds` of traffic in `s`, every value scaled by `jitter` (around 1).
  void advance(const FleetState& s, double seconds, double jitter) {
    const double n = s.rate * seconds;
    auto obs = [&](const std::string& key, const std::vector<double>& bounds, double v) {
      auto it = hists_.find(key);
      if (it == hists_.end()) it = hists_.emplace(key, FleetHist{bounds}).first;
      it->second.observe(v * jitter, n);
    };
    obs("e2e", kSeconds, s.e2e());
    obs("ttft", kSeconds, s.ttft());
    obs("preprocess", kSeconds, s.preprocess);
    obs("route", kSeconds, s.route);
    obs("queue", kSeconds, s.queue);
    obs("prefill", kSeconds, s.prefill);
    obs("decode", kSeconds, s.decode);
    obs("tpot", kSeconds, s.decode / (s.output - 1));
    obs("prompt", kTokens, s.prompt);
    obs("output", kTokens, s.output);
    if (s.disaggregated) {
      obs("kv_transfer", kSeconds, s.kv_transfer);
      obs("kv_bytes", kBytes, s.kv_bytes / jitter);
      obs("prefix_hit", kRatio, s.prefix_hit / jitter);
    }
    // ITL: one observation per token.
    auto itl = hists_.find("itl");
    if (itl == hists_.end()) itl = hists_.emplace("itl", FleetHist{kSeconds}).first;
    itl->second.observe(s.decode / (s.output - 1) * jitter, n * (s.output - 1));
    requests_ += n;
    prompt_tokens_ += n * s.prompt;
    output_tokens_ += n * s.output;
  }

  std::string render(const FleetState& s, double jitter) const {
    switch (dialect_) {
      case FleetDialect::kInferscope: return inferscope(s, jitter);
      case FleetDialect::kDynamo: return dynamo(s, jitter);
      case FleetDialect::kLlmd: return llmd(s, jitter);
    }
    return {};
  }

 private:
  inline static const std::vector<double> kSeconds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                      0.5,   1,      2.5,   5,    10,    25,   60};
  inline static const std::vector<double> kTokens = {50, 100, 250, 500, 1000, 2000, 4000, 8000, 16000};
  inline static const std::vector<double> kBytes = {1e5, 5e5, 1e6, 5e6, 1e7, 5e7, 1e8, 5e8, 1e9, 5e9};
  inline static const std::vector<double> kRatio = {0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5,
                                                    0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1};

  void hist(std::string& out, const std::string& key, const std::string& name, const std::string& labels) const {
    auto it = hists_.find(key);
    if (it == hists_.end()) return;
    const FleetHist& h = it->second;
    const std::string prefix = labels.empty() ? "" : labels + ",";
    for (std::size_t i = 0; i < h.bounds.size(); ++i)
      out += name + "_bucket{" + prefix + "le=\"" + fleet_num(h.bounds[i]) + "\"} " + fleet_num(h.counts[i]) + "\n";
    out += name + "_bucket{" + prefix + "le=\"+Inf\"} " + fleet_num(h.count) + "\n";
    const std::string braces = labels.empty() ? "" : "{" + labels + "}";
    out += name + "_sum" + braces + " " + fleet_num(h.sum) + "\n" + name + "_count" + braces + " " + fleet_num(h.count) + "\n";
  }

  std::string inferscope(const FleetState& s, double jitter) const {
    std::string out;
    out += "# TYPE inferscope_request_duration_seconds histogram\n";
    hist(out, "e2e", "inferscope_request_duration_seconds", "model=\"sim\"");
    out += "# TYPE inferscope_time_to_first_token_seconds histogram\n";
    hist(out, "ttft", "inferscope_time_to_first_token_seconds", "model=\"sim\"");
    out += "# TYPE inferscope_time_per_output_token_seconds histogram\n";
    hist(out, "tpot", "inferscope_time_per_output_token_seconds", "model=\"sim\"");
    out += "# TYPE inferscope_inter_token_latency_seconds histogram\n";
    hist(out, "itl", "inferscope_inter_token_latency_seconds", "model=\"sim\"");
    out += "# TYPE inferscope_stage_duration_seconds histogram\n";
    for (const char* stage : {"preprocess", "route", "queue", "prefill", "kv_transfer", "decode"})
      hist(out, stage, "inferscope_stage_duration_seconds", std::string("model=\"sim\",stage=\"") + stage + "\"");
    out += "# TYPE inferscope_request_prompt_tokens histogram\n";
    hist(out, "prompt", "inferscope_request_prompt_tokens", "model=\"sim\"");
    out += "# TYPE inferscope_request_generation_tokens histogram\n";
    hist(out, "output", "inferscope_request_generation_tokens", "model=\"sim\"");
    out += "# TYPE inferscope_requests_total counter\ninferscope_requests_total{model=\"sim\",route=\"/v1/completions\","
           "status_class=\"2xx\",finish_reason=\"length\"} " + fleet_num(requests_) + "\n";
    out += "# TYPE inferscope_prompt_tokens_total counter\ninferscope_prompt_tokens_total{model=\"sim\"} " +
           fleet_num(prompt_tokens_) + "\n";
    out += "# TYPE inferscope_generation_tokens_total counter\ninferscope_generation_tokens_total{model=\"sim\"} " +
           fleet_num(output_tokens_) + "\n";
    double waiting = 0;
    for (const FleetEndpoint& e : s.endpoints) waiting += e.waiting;
    out += "# TYPE inferscope_engine_requests_waiting gauge\ninferscope_engine_requests_waiting{model=\"sim\"} " +
           fleet_num(waiting * jitter) + "\n";
    out += "# TYPE inferscope_engine_requests_running gauge\ninferscope_engine_requests_running{model=\"sim\"} " +
           fleet_num(s.running() * jitter) + "\n";
    out += "# TYPE inferscope_kv_cache_usage_ratio gauge\ninferscope_kv_cache_usage_ratio{model=\"sim\"} 0.3\n";
    if (!s.disaggregated) return out;
    out += "# TYPE inferscope_kv_transfer_bytes histogram\n";
    hist(out, "kv_bytes", "inferscope_kv_transfer_bytes", "");
    out += "# TYPE inferscope_router_prefix_hit_ratio histogram\n";
    hist(out, "prefix_hit", "inferscope_router_prefix_hit_ratio", "");
    if (!s.fleet_gauges) return out;
    out += "# TYPE inferscope_pool_requests_waiting gauge\n";
    for (const char* pool : {"prefill", "decode"})
      out += std::string("inferscope_pool_requests_waiting{pool=\"") + pool + "\"} " +
             fleet_num(s.pool_waiting(pool) * jitter) + "\n";
    out += "# TYPE inferscope_endpoint_requests gauge\n";
    for (const FleetEndpoint& e : s.endpoints)
      out += "inferscope_endpoint_requests{pool=\"" + e.pool + "\",endpoint=\"" + e.name + "\"} " +
             fleet_num((e.waiting + e.running) * jitter) + "\n";
    return out;
  }

  std::string dynamo(const FleetState& s, double jitter) const {
    std::string out;
    const std::string model = "model=\"Qwen/Qwen3-0.6B\"";
    out += "# TYPE dynamo_frontend_request_duration_seconds histogram\n";
    hist(out, "e2e", "dynamo_frontend_request_duration_seconds", model);
    out += "# TYPE dynamo_frontend_time_to_first_token_seconds histogram\n";
    hist(out, "ttft", "dynamo_frontend_time_to_first_token_seconds", model);
    out += "# TYPE dynamo_frontend_inter_token_latency_seconds histogram\n";
    hist(out, "itl", "dynamo_frontend_inter_token_latency_seconds", model);
    out += "# TYPE dynamo_frontend_input_sequence_tokens histogram\n";
    hist(out, "prompt", "dynamo_frontend_input_sequence_tokens", model);
    out += "# TYPE dynamo_frontend_output_sequence_tokens histogram\n";
    hist(out, "output", "dynamo_frontend_output_sequence_tokens", model);
    out += "# TYPE dynamo_frontend_stage_duration_seconds histogram\n";
    hist(out, "route", "dynamo_frontend_stage_duration_seconds", "stage=\"route\"");
    hist(out, "preprocess", "dynamo_frontend_stage_duration_seconds", "stage=\"preprocess\"");
    out += "# TYPE dynamo_frontend_requests_total counter\ndynamo_frontend_requests_total{endpoint=\"chat_completions\"," +
           model + ",request_type=\"stream\",status=\"success\",error_type=\"\"} " + fleet_num(requests_) + "\n";
    out += "# TYPE dynamo_frontend_output_tokens_total counter\ndynamo_frontend_output_tokens_total{" + model + "} " +
           fleet_num(output_tokens_) + "\n";
    double waiting = 0;
    for (const FleetEndpoint& e : s.endpoints) waiting += e.waiting;
    out += "# TYPE dynamo_frontend_active_requests gauge\ndynamo_frontend_active_requests{" + model + "} " +
           fleet_num((waiting + s.running()) * jitter) + "\n";
    out += "# TYPE dynamo_frontend_router_queue_pending_requests gauge\n";
    for (const char* pool : {"prefill", "decode"})
      out += std::string("dynamo_frontend_router_queue_pending_requests{worker_type=\"") + pool + "\"} " +
             fleet_num(s.pool_waiting(pool) * jitter) + "\n";
    // Active decode KV blocks per worker: a decode worker's sequences x ~40 blocks (2000-token
    // prompts in 64-token blocks); a prefill worker holds none once it hands the cache over.
    out += "# TYPE dynamo_frontend_worker_active_decode_blocks gauge\n";
    int index = 0;
    for (const FleetEndpoint& e : s.endpoints) {
      const std::string id = std::to_string(7587889712474989100LL + index++);
      const double blocks = e.pool == "decode" ? (e.running + e.waiting) * 40 * jitter : 0;
      out += "dynamo_frontend_worker_active_decode_blocks{dp_rank=\"0\",worker_id=\"" + id + "\",worker_type=\"" + e.pool +
             "\"} " + fleet_num(blocks) + "\n";
    }
    out += "# TYPE dynamo_component_router_kv_hit_rate histogram\n";
    hist(out, "prefix_hit", "dynamo_component_router_kv_hit_rate",
         "dynamo_namespace=\"dynamo\",dynamo_component=\"router\",router_id=\"0\"");
    const std::string trt = "model_name=\"Qwen/Qwen3-0.6B\",disaggregation_mode=\"generation\",engine_type=\"trtllm\"";
    out += "# TYPE trtllm_kv_transfer_latency_seconds histogram\n";
    hist(out, "kv_transfer", "trtllm_kv_transfer_latency_seconds", trt);
    out += "# TYPE trtllm_kv_transfer_bytes histogram\n";
    hist(out, "kv_bytes", "trtllm_kv_transfer_bytes", trt);
    return out;
  }

  std::string llmd(const FleetState& s, double jitter) const {
    std::string out;
    const std::string model = "model_name=\"Qwen/Qwen3-0.6B\",target_model_name=\"Qwen/Qwen3-0.6B\"";
    out += "# TYPE llm_d_router_epp_request_duration_seconds histogram\n";
    hist(out, "e2e", "llm_d_router_epp_request_duration_seconds", model);
    out += "# TYPE llm_d_router_epp_request_ttft_seconds histogram\n";
    hist(out, "ttft", "llm_d_router_epp_request_ttft_seconds", model);
    out += "# TYPE llm_d_router_epp_request_tpot_seconds histogram\n";
    hist(out, "tpot", "llm_d_router_epp_request_tpot_seconds", model);
    out += "# TYPE llm_d_router_epp_input_tokens histogram\n";
    hist(out, "prompt", "llm_d_router_epp_input_tokens", model);
    out += "# TYPE llm_d_router_epp_output_tokens histogram\n";
    hist(out, "output", "llm_d_router_epp_output_tokens", model);
    out += "# TYPE llm_d_router_epp_request_total counter\nllm_d_router_epp_request_total{" + model +
           ",priority=\"0\"} " + fleet_num(requests_) + "\n";
    out += "# TYPE llm_d_router_epp_running_requests gauge\nllm_d_router_epp_running_requests{model_name=\"Qwen/Qwen3-0.6B\"} " +
           fleet_num(s.running() * jitter) + "\n";
    double waiting = 0;
    for (const FleetEndpoint& e : s.endpoints) waiting += e.waiting;
    out += "# TYPE llm_d_router_epp_average_queue_size gauge\nllm_d_router_epp_average_queue_size{name=\"qwen3-pool\"} " +
           fleet_num(waiting / static_cast<double>(s.endpoints.size()) * jitter) + "\n";
    out += "# TYPE inference_pool_per_pod_queue_size gauge\n";
    for (const FleetEndpoint& e : s.endpoints)
      out += "inference_pool_per_pod_queue_size{name=\"qwen3-pool\",model_server_pod=\"qwen3-" + e.name + "\"} " +
             fleet_num(e.waiting * jitter) + "\n";
    out += "# TYPE inference_extension_scheduler_e2e_duration_seconds histogram\n";
    hist(out, "route", "inference_extension_scheduler_e2e_duration_seconds", "");
    out += "# TYPE inference_extension_prefix_indexer_hit_ratio histogram\n";
    hist(out, "prefix_hit", "inference_extension_prefix_indexer_hit_ratio", "");
    return out;
  }

  FleetDialect dialect_;
  std::map<std::string, FleetHist> hists_;
  double requests_ = 0, prompt_tokens_ = 0, output_tokens_ = 0;
};

// fleet_rounds scrapes the fleet every 5 s: 60 rounds (300 s) in `baseline`, then 24 (120 s) in
// `incident`. Returns the rounds; the windows are [0, 300] and [300, 420].
inline std::vector<ScrapeRound> fleet_rounds(FleetDialect dialect, const FleetState& baseline,
                                             const FleetState& incident) {
  FleetRenderer r(dialect);
  std::vector<ScrapeRound> rounds;
  for (int k = 0; k <= 84; ++k) {
    const FleetState& s = k <= 60 ? baseline : incident;
    const double jitter = 1 + ((k % 4) < 2 ? 0.03 : -0.03);
    r.advance(s, 5, jitter);
    auto parsed = metrics::parse_exposition(r.render(s, jitter), metrics::ExpositionTextFormat::kPrometheus004);
    ScrapeRound round;
    round.time = 5.0 * k;
    if (parsed) round.expositions.push_back(std::move(*parsed));
    rounds.push_back(std::move(round));
  }
  return rounds;
}

// fleet_snapshot samples the rounds the way `doctor --scrape` does and builds the snapshot.
inline Snapshot fleet_snapshot(FleetDialect dialect, const FleetState& baseline, const FleetState& incident,
                               SamplingReport* report_out = nullptr) {
  SamplingReport report;
  SampledRoles sampled = sample_rounds(fleet_rounds(dialect, baseline, incident), "", report);
  Snapshot s = build_snapshot(sampled, {0, 300}, {300, 420});
  s.source = "scrape";
  for (std::size_t i = 0; i < report.dialects.size(); ++i) s.dialect += (i ? "+" : "") + report.dialects[i];
  s.missing = report.missing;
  if (report_out) *report_out = report;
  return s;
}

}  // namespace inferscope::doctor::testing
