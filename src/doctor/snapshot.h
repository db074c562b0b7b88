// File: snapshot.h
// Snapshot is what the doctor reasons over, whatever the source (Prometheus or direct scrapes):
// for each role (e2e, ttft, each stage, request rate, KV usage ...) its statistics in the
// baseline window and in the incident window, plus per-interval values for noise and stalls.
// Example: const Quantity* e2e = snap.find(SignalId::kE2e); double d = e2e->incident.mean - e2e->baseline.mean;
// Plain values; thread-compatible. NaN means "no data" everywhere.
#pragma once

#include <compare>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dialect/dialect.h"
#include "doctor/signal_id.h"

namespace inferscope::doctor {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// WindowStat is one quantity over one window.
struct WindowStat {
  double mean = kNaN;         // distribution mean (sum/count), counter rate, or gauge average
  double p50 = kNaN, p95 = kNaN, p99 = kNaN;  // distributions only (bucket-interpolated)
  double max = kNaN;          // gauges: largest sample; distributions: upper bound of the top bucket hit
  double count = 0;           // observations (distributions), samples (gauges), increase (counters)
  double per_request = kNaN;  // stages only: stage seconds per finished request (adds up to e2e)
  std::vector<double> intervals;         // per sub-interval value (NaN where none): noise and stalls
  std::vector<double> interval_weights;  // distributions/ratios: observations per sub-interval
  // Gauges: each interval's sample time (Unix seconds); empty where unknown (then the intervals
  // are taken to span the window evenly, its start to its end).
  std::vector<double> interval_times;
  // Distributions only: the median of each quarter of the window and its observations. An
  // incident that began inside the window moves its late quarters' median before the whole one.
  std::vector<double> chunk_p50;
  std::vector<double> chunk_counts;
  bool has_data() const { return !std::isnan(mean); }
};

// Quantity is one role seen in both windows.
struct Quantity {
  WindowStat baseline, incident;
  std::string metric;  // the metric (or expression) behind it, for evidence
  std::string unit;    // "s", "req/s", "tokens", "ratio", "%", "tok/s", "1/s"
  // sampled: some sample in either window. A series a collector asked for and never got (a
  // Celery queue's job counters, a GPU nobody scrapes) can stand in a snapshot without one: absent.
  bool sampled() const { return baseline.has_data() || incident.has_data(); }
};

// Where names a slice of the data: the job, the instance (its instance label; host:port for
// direct scrapes), the model and the engine (a data-parallel rank of that instance: vLLM's
// `engine` label); on a disaggregated fleet the pool (prefill, decode: the dialect's pool label)
// and the endpoint (one worker of it). Empty fields: not narrowed on that axis. A Finding's `where`
// says where its evidence is localized; Snapshot::sources lists where the latency came from.
struct Where {
  std::string job;
  std::string instance;
  std::string model;
  std::string engine = {};
  std::string pool = {};
  std::string endpoint = {};
  bool empty() const {
    return job.empty() && instance.empty() && model.empty() && engine.empty() && pool.empty() && endpoint.empty();
  }
  auto operator<=>(const Where&) const = default;
};

// endpoint_key is Snapshot::endpoints' key: "pool/endpoint" ("/endpoint" without a pool label).
inline std::string endpoint_key(const std::string& pool, const std::string& endpoint) { return pool + "/" + endpoint; }
// split_endpoint_key is its inverse: {pool, endpoint} (pool names carry no '/').
inline std::pair<std::string, std::string> split_endpoint_key(const std::string& key) {
  auto slash = key.find('/');
  if (slash == std::string::npos) return {std::string(), key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

// Snapshot is the whole input of diagnose().
struct Snapshot {
  std::string source;   // "prometheus" or "scrape"
  std::string dialect;  // detected server kind(s), e.g. "inferscope", "vllm", "llamacpp"
  double baseline_start = kNaN, baseline_end = kNaN;  // Unix seconds
  double incident_start = kNaN, incident_end = kNaN;
  double interval_s = kNaN;  // length of one entry of WindowStat::intervals
  // First time with a sample of the end-to-end latency metric (else of any metric read) in the
  // range read; NaN when unknown (scrape mode) or nothing was found. Later than baseline_start
  // when the target or the monitoring stack is younger than the baseline.
  double data_start = kNaN;

  // Latency distributions by id (SignalId kE2e .. kStep).
  std::map<std::string, Quantity> latency;
  // Stage durations by stage name, dialect::to_string of the stage's role (gateway_queue,
  // preprocess, dependency, queue, prefill, decode, postprocess, send, upstream_connect,
  // upstream_ttft, stream, inference).
  std::map<std::string, Quantity> stages;
  // Scalar signals by id (the other SignalIds): rates, ratios, gauges, token means.
  std::map<std::string, Quantity> signals;
  // Dependency call latency by dependency name.
  std::map<std::string, Quantity> dependencies;
  // A disaggregated fleet (docs/disaggregation.md): requests waiting in each pool, by the pool
  // label's value ("prefill", "decode"; an llm-d InferencePool's name), and the load of each
  // endpoint (worker), by endpoint_key(pool, endpoint).
  std::map<std::string, Quantity> pools;
  std::map<std::string, Quantity> endpoints;

  int targets_total = 0;                 // 0 = unknown (no target list)
  std::vector<std::string> targets_down;  // "job/instance: last error"
  std::vector<std::string> missing;       // expected metrics/roles absent ("e2e (inferscope_request_duration_seconds)")
  std::vector<std::string> renamed;       // deprecated names still used ("vllm:gpu_cache_usage_perc -> vllm:kv_cache_usage_perc")
  std::vector<std::string> notes;         // collection notes shown to the user
  // The job / instance / model combinations the e2e series came from (Prometheus: their labels;
  // direct scrapes: each URL's host:port), what localize() breaks the data down by.
  std::vector<Where> sources;

  // find returns the signal (latency or scalar) or the stage, nullptr when absent.
  const Quantity* find(SignalId id) const {
    return find_in(is_latency(id) ? latency : signals, to_string(id));
  }
  const Quantity* find(dialect::Role stage) const { return find_in(stages, dialect::to_string(stage)); }
  // set stores the signal or the stage in its map, replacing what was there.
  void set(SignalId id, Quantity q) {
    (is_latency(id) ? latency : signals)[std::string(to_string(id))] = std::move(q);
  }
  void set(dialect::Role stage, Quantity q) { stages[std::string(dialect::to_string(stage))] = std::move(q); }

 private:
  static const Quantity* find_in(const std::map<std::string, Quantity>& map, std::string_view key) {
    auto it = map.find(std::string(key));
    return it == map.end() ? nullptr : &it->second;
  }
};

}  // namespace inferscope::doctor
