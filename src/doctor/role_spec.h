// File: role_spec.h
// RoleSpec says which metric carries one role the doctor reasons about (e2e latency, a stage,
// the request rate, KV usage ...) for one server dialect, and how to aggregate its series.
// Both collectors (Prometheus and direct scrapes) read the same specs, so the two modes compute
// the same quantities. Example: for (const RoleSpec& s : role_specs_for({"inferscope"})) ...
// Pure values and functions; thread-safe.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dialect/dialect.h"

namespace inferscope::doctor {

// RoleGroup says where a role lands in the Snapshot.
// kPool and kEndpoint are a disaggregated fleet's per-pool waiting and per-endpoint load, one
// quantity per value of by_label (Snapshot::pools, Snapshot::endpoints).
enum class RoleGroup { kLatency, kStage, kSignal, kDependency, kPool, kEndpoint };

// RoleKind is how the role's metric is read.
enum class RoleKind {
  kHistogram,     // <metric>_bucket/_sum/_count: mean, quantiles
  kCounter,       // rate of a counter (or of a histogram's _count)
  kGauge,         // average and max of a gauge
  kCounterRatio,  // rate(metric) / rate(denominator): llama.cpp's seconds-per-token pairs
  kBusyFromIdle,  // 1 - increase(metric{matchers}) / increase(metric): node-exporter's idle CPU seconds
};

// Aggregation combines the series of one metric at one instant.
enum class Aggregation { kSum, kMax, kAvg };

struct RoleSpec {
  RoleGroup group = RoleGroup::kSignal;
  std::string id;        // "e2e", "decode", "request_rate", ...; for kDependency the prefix of names
  RoleKind kind = RoleKind::kGauge;
  std::vector<std::string> metrics;  // first present wins; later ones are deprecated/renamed names
  std::string matchers;              // fixed PromQL matchers without braces (`stage="prefill"`), or 
  std::string denominator;           // kCounterRatio only
  std::string by_label;              // kDependency, kPool, kEndpoint: one quantity per value of this label
  std::string group_label;           // kEndpoint: the label naming the endpoint's pool ("" = none)
  Aggregation aggregation = Aggregation::kSum;
  double scale = 1;                  // raw value * scale = value in `unit` (DCGM %: 0.01)
  std::string unit;
  std::string model_label;           // label carrying the model name ("model", "model_name"), "" = none
  bool expected = false;             // absence is reported as metrics_missing
};

// detect_dialects lists the dialects (src/dialect spellings: "inferscope", "gateway", "vllm",
// "llamacpp", "tgi", "triton", "dcgm") whose family prefixes appear among `metric_names`, richest
// first, then "queue" when up's queue collector series are among them (role_specs_for reads its
// roles: the queue_wait stage, depth, oldest age, jobs, workers). Empty when none is recognised.
std::vector<std::string> detect_dialects(const std::set<std::string>& metric_names);

// role_specs_for turns the dialect table's bindings (src/dialect) into the doctor's role specs,
// richest dialect first for each role (inferscope's stage histograms beat vLLM's phases when a
// server exposes both), plus the few engine signals the table does not carry yet.
std::vector<RoleSpec> role_specs_for(const std::vector<std::string>& dialects);

// role_specs_for one table in hand: a custom target's mapping (dialect/custom_dialect.h).
std::vector<RoleSpec> role_specs_for(const dialect::Dialect& table);

// host_specs returns the host roles (host CPU busy share from node-exporter) that the doctor reads
// from the host a server runs on rather than from the server's own series.
std::vector<RoleSpec> host_specs();

// name_pattern is a PromQL regex matching every family name of the known dialects (host
// exporters excluded: their series are looked up per host).
std::string name_pattern();

// histogram_series_names returns the names a role's metric contributes to an exposition
// (x_bucket, x_sum, x_count for histograms; x itself otherwise).
std::vector<std::string> series_names(const RoleSpec& spec, const std::string& metric);

}  // namespace inferscope::doctor
