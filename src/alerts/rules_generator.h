// File: alerts/rules_generator.h
// Generates the Prometheus rule files of `inferscope up` from the targets' dialects and the SLO
// thresholds: per target, recording rules under uniform names (inferscope:e2e_seconds:p99{job,model},
// ...) computed from that dialect's own metric names, and alerts on them; plus one common file
// (watchdog, relay notifications failing). Alerts a dialect cannot support are listed, not faked.
// Example: RulesConfig c; c.targets = {{.job = "vllm", .dialect = dialect::DialectId::kVllm}};
//          Result<GeneratedRules> r = generate_rules(c);  // r->files[i].name / .text
// Pure and thread-safe: builds text only, touches no file. Docs: src/alerts/README.md.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <inferscope/common/result.h>

#include "alerts/slo_thresholds.h"
#include "dialect/custom_dialect.h"
#include "dialect/dialect.h"

namespace inferscope::alerts {

// Alert names (stable: runbooks, the relay, the drill and tests refer to them).
inline constexpr const char* kE2eP99OverSlo = "InferscopeE2eP99OverSlo";
inline constexpr const char* kE2eP95OverSlo = "InferscopeE2eP95OverSlo";
inline constexpr const char* kTtftP95OverSlo = "InferscopeTtftP95OverSlo";
inline constexpr const char* kTpotP95OverSlo = "InferscopeTpotP95OverSlo";
inline constexpr const char* kRequestsWaiting = "InferscopeRequestsWaiting";
inline constexpr const char* kErrorRatioHigh = "InferscopeErrorRatioHigh";
inline constexpr const char* kKvCacheFull = "InferscopeKvCacheFull";
inline constexpr const char* kPreemptionsRising = "InferscopePreemptionsRising";
inline constexpr const char* kGpuMemoryHigh = "InferscopeGpuMemoryHigh";
inline constexpr const char* kThroughputHalved = "InferscopeOutputThroughputHalved";
inline constexpr const char* kTargetDown = "InferscopeTargetDown";
inline constexpr const char* kLatencyMetricsAbsent = "InferscopeLatencyMetricsAbsent";
// Engine features (prefix caching, speculative decoding, LoRA, data-parallel ranks).
inline constexpr const char* kPrefixCacheHitRateHalved = "InferscopePrefixCacheHitRateHalved";
inline constexpr const char* kSpecDecodeAcceptanceFell = "InferscopeSpecDecodeAcceptanceFell";
inline constexpr const char* kLoraRequestsWaiting = "InferscopeLoraRequestsWaitingForAdapters";
inline constexpr const char* kEngineRankSlow = "InferscopeEngineRankSlow";
// Disaggregated prefill/decode fleets (a router in front of prefill and decode pools).
inline constexpr const char* kKvTransferBandwidthHalved = "InferscopeKvTransferBandwidthHalved";
inline constexpr const char* kPoolRequestsWaiting = "InferscopePoolRequestsWaiting";
inline constexpr const char* kEndpointLoadSkewed = "InferscopeEndpointLoadSkewed";
inline constexpr const char* kNotificationsFailing = "InferscopeNotificationsFailing";
inline constexpr const char* kWatchdog = "InferscopeWatchdog";
// Queue targets (redis, src/queue's inferscope_queue_* series).
inline constexpr const char* kQueueBacklogGrowing = "InferscopeQueueBacklogGrowing";
inline constexpr const char* kQueueWaitHigh = "InferscopeQueueWaitHigh";
inline constexpr const char* kQueueNotConsumed = "InferscopeQueueNotConsumed";
inline constexpr const char* kQueueJobFailuresHigh = "InferscopeQueueJobFailuresHigh";
inline constexpr const char* kQueueWorkersStale = "InferscopeQueueWorkersStale";
inline constexpr const char* kRedisEvictingKeys = "InferscopeRedisEvictingKeys";

// kTargetAlerts lists the per-target alerts in the order the files carry them.
inline constexpr const char* kTargetAlerts[] = {
    kTargetDown,    kLatencyMetricsAbsent, kE2eP99OverSlo,      kE2eP95OverSlo,  kTtftP95OverSlo,
    kTpotP95OverSlo, kRequestsWaiting,     kErrorRatioHigh,     kKvCacheFull,    kPreemptionsRising,
    kGpuMemoryHigh, kThroughputHalved, kPrefixCacheHitRateHalved, kSpecDecodeAcceptanceFell, kLoraRequestsWaiting,
    kEngineRankSlow, kKvTransferBandwidthHalved, kPoolRequestsWaiting, kEndpointLoadSkewed};

// kEngineFeatureAlerts are the per-target alerts on engine features (prefix caching, speculative
// decoding, LoRA, data-parallel ranks). The drill has no case for them yet: each needs serve to
// run the feature under a load that uses it (and two of them a day-old baseline); promtool tests
// cover their rules.
inline constexpr const char* kEngineFeatureAlerts[] = {kPrefixCacheHitRateHalved, kSpecDecodeAcceptanceFell,
                                                       kLoraRequestsWaiting, kEngineRankSlow};

// kDisaggregationAlerts are the per-target alerts on a disaggregated fleet's KV transfers, pools
// and endpoints. The drill has no case for them yet: each needs serve running as a disaggregated
// fleet (--prefill-workers/--decode-workers); promtool tests cover their rules.
inline constexpr const char* kDisaggregationAlerts[] = {kKvTransferBandwidthHalved, kPoolRequestsWaiting,
                                                        kEndpointLoadSkewed};

// kQueueAlerts lists the alerts of a queue target in the order its file carries them (after
// kTargetDown, which a queue target also has: its collector cannot reach Redis).
inline constexpr const char* kQueueAlerts[] = {kQueueNotConsumed, kQueueBacklogGrowing, kQueueWaitHigh,
                                               kQueueJobFailuresHigh, kQueueWorkersStale, kRedisEvictingKeys};

// redis_exporter_job is the Prometheus job of the prometheus-redis-exporter that up runs against
// queue target `queue_job` (its memory, clients, evictions): "<queue_job>-redis".
std::string redis_exporter_job(const std::string& queue_job);

// RulesTarget is one scrape job. dialect nullopt = not known (auto-detection failed): the target
// only gets the generic alerts (down), and every dialect alert is listed as lacking. A custom
// target (dialect kCustom) reads its roles from `custom`, the mapping in up's config.
struct RulesTarget {
  std::string job;
  std::optional<dialect::DialectId> dialect;
  std::shared_ptr<const dialect::CustomDialect> custom = {};
};

// RulesConfig is what the stack fills from its config and flags.
struct RulesConfig {
  std::vector<RulesTarget> targets;
  // queue_jobs: the jobs of redis targets (up's queue collector, scraped from up's API, and the
  // target's redis exporter, job redis_exporter_job()); each gets its own file
  // "queue-<job>.rules.yml" with kTargetDown and kQueueAlerts.
  std::vector<std::string> queue_jobs;
  SloThresholds slo;
  // alert_for overrides an alert's `for` by name (kE2eP99OverSlo -> 0s in a drill); unnamed
  // alerts keep default_for(name).
  std::map<std::string, std::chrono::milliseconds> alert_for;
  std::chrono::milliseconds rate_window{std::chrono::minutes(5)};   // rate() range of recording rules
  std::chrono::milliseconds notification_window{std::chrono::minutes(15)};  // relay failures looked back
  std::chrono::milliseconds throughput_baseline_offset{std::chrono::hours(1)};  // "vs 1 h ago"
  // The engine-feature ratios (prefix-cache hit rate, draft acceptance) are compared with their
  // own value this long ago: a day, so the daily traffic cycle is the same on both sides.
  std::chrono::milliseconds feature_baseline_offset{std::chrono::hours(24)};
  std::optional<std::chrono::milliseconds> evaluation_interval;     // group `interval:`; unset = global
};

// RuleFile is one generated file: name (no folder, e.g. "target-vllm.rules.yml") and YAML text.
struct RuleFile {
  std::string name;
  std::string text;
};

// LackingAlert is an alert a target cannot have, and why (for `up --status`).
struct LackingAlert {
  std::string alert;
  std::string reason;  // e.g. "llama.cpp exposes no latency histograms: put `inferscope gateway` in front"
};

// GeneratedRules are the files plus, per job, the alerts it lacks.
struct GeneratedRules {
  std::vector<RuleFile> files;  // common file first, then one per target, then one per queue job
  std::map<std::string, std::vector<LackingAlert>> lacking;    // job -> lacking alerts (empty if none)
};

// default_for returns the default `for` of an alert (10m for e2e p99, 5m for p95, 2m for the
// error ratio, ...). 0 for unknown names.
std::chrono::milliseconds default_for(const std::string& alert);

// generate_rules builds all rule files. Fails (one line naming the field) on an empty or duplicate
// job name, a negative or NaN threshold, a ratio threshold outside (0, 1], or a zero rate window.
Result<GeneratedRules> generate_rules(const RulesConfig& config);

}  // namespace inferscope::alerts
