// File: faults.h
// FaultSet: every fault `inferscope serve` injects, its JSON form (POST/GET /admin/faults, CLI),
// and the dependency-latency sampler. The engine applies decode/prefill_slowdown, kv_capacity,
// stall, worker_stall, max_num_seqs; the HTTP layer the rest (docs/serve-faults.md).
// Example: auto f = parse_faults(json::parse(R"({"decode_slowdown": 3})"), FaultSet{});
// Thread safety: value types and pure functions. Parsing never throws.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inferscope/common/result.h"

namespace inferscope::serve {

// PeriodicPause is a {for_ms, every_s} fault: a pause of for_ms model milliseconds at the moment
// the fault is set and then every every_s model seconds. Inactive when for_ms == 0.
struct PeriodicPause {
  double for_ms = 0;
  double every_s = 0;
  bool active() const { return for_ms > 0 && every_s > 0; }
  bool operator==(const PeriodicPause&) const = default;
};

// PreprocessSlowdown stretches the HTTP layer's preprocess stage: new = old * factor + add_ms.
struct PreprocessSlowdown {
  double factor = 1.0;
  double add_ms = 0;
  bool active() const { return factor != 1.0 || add_ms != 0; }
  bool operator==(const PreprocessSlowdown&) const = default;
};

// DependencyFault adds a call to an external dependency (embedding, rerank, guardrail, ...) to
// every request's timeline. Latency is log-normal with the given mean and p99 (fixed when
// p99_ms <= mean_ms).
struct DependencyFault {
  std::string name;
  double mean_ms = 0;
  double p99_ms = 0;
  bool operator==(const DependencyFault&) const = default;

  // sample_ms draws one latency in milliseconds. Cost: one normal draw. Never negative.
  template <class Rng>
  double sample_ms(Rng& rng) const {
    double sigma = lognormal_sigma();
    if (sigma <= 0) return mean_ms;
    double mu = std::log(mean_ms) - sigma * sigma / 2;
    return std::exp(mu + sigma * std::normal_distribution<double>(0, 1)(rng));
  }
  // lognormal_sigma solves mean = exp(mu + s^2/2), p99 = exp(mu + 2.326 s) for s (0 = fixed);
  // clamped to 2.326 when p99/mean is beyond what a log-normal can reach (~14.9).
  double lognormal_sigma() const;
};

// EngineSlowdown slows one data-parallel rank (serve --data-parallel-size): its whole step,
// prefill and decode, is `factor` times longer (a bad GPU, a noisy neighbour). Inactive when
// engine < 0.
struct EngineSlowdown {
  int engine = -1;     // rank 0..N-1; -1 = off
  double factor = 1.0; // > 0
  bool active() const { return engine >= 0; }
  bool operator==(const EngineSlowdown&) const = default;
};

// Faults of a disaggregated fleet (serve --prefill-workers/--decode-workers; docs/disaggregation.md);
// the server checks worker indexes and pool sizes (check_fault_ranks).
// KvLink degrades the link into one decode worker: its transfers take `factor` times longer.
struct KvLink {
  int worker = -1;     // decode worker index; -1 = off
  double factor = 1.0; // > 0
  bool active() const { return worker >= 0; }
  bool operator==(const KvLink&) const = default;
};
// PoolWorkers cuts one pool to its first `count` workers (the others take no new requests).
struct PoolWorkers {
  std::string pool;        // "prefill" or "decode"; empty = off
  std::uint32_t count = 0; // >= 1
  bool active() const { return !pool.empty(); }
  bool operator==(const PoolWorkers&) const = default;
};
// RouteSkew makes the router favour one decode endpoint: its load term is multiplied by
// (1 - weight), so requests pile onto it.
struct RouteSkew {
  std::string endpoint;  // "decode-<i>"; empty = off
  double weight = 0;     // 0 < weight <= 1
  bool active() const { return !endpoint.empty(); }
  bool operator==(const RouteSkew&) const = default;
};

// FaultSet holds every fault; FaultSet{} is "no fault".
struct FaultSet {
  double decode_slowdown = 1.0;   // factor > 0 on the decode part of each step
  double prefill_slowdown = 1.0;  // factor > 0 on the prefill part of each step
  double kv_capacity = 1.0;       // fraction (0, 1] of KV blocks kept usable
  PeriodicPause stall;            // whole engine paused (step in flight stretched, GPU busy)
  PeriodicPause worker_stall;     // no scheduling (queue grows, GPU idle)
  PreprocessSlowdown preprocess_slowdown;
  std::vector<DependencyFault> dependencies;
  double error_rate = 0;          // 0..1: HTTP layer answers 500
  double network_delay_ms = 0;    // HTTP layer delays each write
  std::uint32_t max_num_seqs = 0; // >0 overrides EngineOptions::max_num_seqs
  // 0..1: share of new requests whose prompt blocks are hashed apart from everyone's, so they
  // neither hit the prefix cache nor leave reusable blocks (what a router that stopped sending a
  // conversation to the replica holding its prefix, or a per-request token at the prompt's
  // start, does to prefix reuse).
  double prefix_cache_scramble = 0;
  // 0..1: per-position draft acceptance under speculative decoding in place of the configured
  // one (a traffic mix the draft predicts badly); negative = not set.
  double spec_acceptance = -1;
  EngineSlowdown engine_slowdown;  // one data-parallel rank slowed (the server checks the rank)
  std::uint32_t max_loras = 0;     // >0 cuts the LoRA adapter slots to this (at most --max-loras)
  // Disaggregated fleet (docs/serve-faults.md):
  double kv_transfer = 1.0;          // factor > 0 on every KV transfer's time
  KvLink kv_link;                    // one decode worker's link degraded
  double kv_transfer_failure = 0;    // 0..0.95: share of transfer attempts that fail (and are retried)
  std::vector<PoolWorkers> pool_workers;  // at most one per pool
  RouteSkew route_skew;
  // Monitoring faults (what a fire drill causes; docs/serve-faults.md):
  bool metrics_down = false;              // GET /metrics answers 503: the scrape fails (target down)
  std::vector<std::string> hide_metrics;  // metric families left out of /metrics (a rename after an upgrade)
  double gpu_memory_other = 0;            // 0..1: share of the simulated GPU's memory another process holds
  bool operator==(const FaultSet&) const = default;

  // any reports whether any fault is active.
  bool any() const { return !(*this == FaultSet{}); }
};

// parse_faults applies the keys of `json` (an object) on top of `base`: a key with a value sets
// that fault, a key with null clears it, {"clear": true} first resets everything. Unknown keys
// and out-of-range values fail with "cannot parse faults from request: <key>: <cause>" and leave
// nothing applied. Forms: "decode_slowdown": 3, "stall": {"for_ms": 500, "every_s": 10},
// "preprocess_slowdown": 2 | {"factor": 2, "add_ms": 40}, "dependency": {"name": "embedding",
// "mean_ms": 30, "p99_ms": 120} | [ ... ], "error_rate": 0.05, "network_delay_ms": 20,
// "kv_capacity": 0.25, "max_num_seqs": 4, "worker_stall": {...}, "prefill_slowdown": 2,
// "prefix_cache_scramble": 0.8, "spec_acceptance": 0.3, "engine_slowdown": {"engine": 2, "factor": 4}, "max_loras": 1,
// "kv_transfer": 5, "kv_link": {"worker": 1, "factor": 5}, "kv_transfer_failure": 0.2,
// "pool_workers": {"pool": "prefill", "count": 1}, "route_skew": {"endpoint": "decode-0", "weight": 0.9},
// "metrics_down": true, "hide_metrics": ["inferscope_request_ttft_seconds", ...], "gpu_memory_other": 0.97.
Result<FaultSet> parse_faults(const nlohmann::json& json, FaultSet base);

// faults_for_rank returns the faults data-parallel rank `rank` runs with: `faults` with
// engine_slowdown folded into its prefill and decode slowdowns when it names that rank.
FaultSet faults_for_rank(const FaultSet& faults, std::uint32_t rank);

// to_json lists the active faults only ({} when none), in parse_faults' form (round-trips).
nlohmann::json to_json(const FaultSet& faults);

}  // namespace inferscope::serve
