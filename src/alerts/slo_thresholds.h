// File: slo_thresholds.h
// SloThresholds: the thresholds the alerts compare against (seconds, ratios, counts), the one
// struct up's config (`slo:` in inferscope.yaml) fills and the rules generator reads. Example:
//   SloThresholds slo;  slo.ttft_p95_seconds = 1.5;  config.slo = slo;
// Plain value type. Defaults from common practice (../shared/reference/alerting-and-dashboards.md §2).
#pragma once

namespace inferscope::alerts {

// SloThresholds are the alert thresholds. The first eight and the three queue_* are the config's
// `slo:` keys; the others tune the preemption, throughput and engine-feature alerts and keep their
// defaults.
struct SloThresholds {
  double e2e_p99_seconds = 10.0;
  double e2e_p95_seconds = 5.0;
  double ttft_p95_seconds = 3.0;
  double tpot_p95_seconds = 0.1;
  double error_ratio = 0.05;
  double waiting_requests = 20;
  double kv_cache_usage = 0.95;
  double gpu_memory_ratio = 0.90;
  double preemptions_per_second = 0;         // alert while the preemption rate stays above this
  double throughput_drop_ratio = 0.5;        // output tokens/s below this share of the baseline ...
  double same_request_rate_tolerance = 0.2;  // ... while requests/s is within +-20 % of it
  // Engine features, each against its own value a day ago (RulesConfig::feature_baseline_offset):
  // a prefix-cache hit rate below half of it, from a day with at least min_prefix_hit_ratio of
  // the prompt tokens hit (a cache that hardly hit cannot fall meaningfully); a draft acceptance
  // below 70 % of it (speculation's gain goes with acceptance, and at about 40 % it costs more
  // than it saves); one data-parallel rank's e2e p99 above twice its peers' mean.
  double prefix_hit_drop_ratio = 0.5;
  double min_prefix_hit_ratio = 0.1;
  double acceptance_drop_ratio = 0.7;
  double rank_tail_ratio = 2.0;
  // Disaggregated fleets: KV transfer bandwidth (bytes over transfer time) below half of its own
  // value feature_baseline_offset ago (a link fallen back to TCP, a congested NIC); the busiest
  // endpoint of a pool over 1.5x the pool's mean load (with two endpoints: a 3:1 split), while the
  // pool's mean is at least one unit of its load series (an idle pool's spread is noise).
  double kv_bandwidth_drop_ratio = 0.5;
  double endpoint_spread_ratio = 1.5;
  // Queue targets (redis): `slo.queue_wait` (oldest waiting job or wait p95), the depth above
  // which a rising queue is a backlog, the failed share of ended jobs.
  double queue_wait_seconds = 60;
  double queue_depth = 100;
  double queue_failure_ratio = 0.1;
};

}  // namespace inferscope::alerts
