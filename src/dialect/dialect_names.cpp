// Spellings of the dialect, role, kind and unit enums (config values, JSON ids, messages).
#include <array>

#include "dialect/dialect.h"

namespace inferscope::dialect {
namespace {

constexpr std::array<std::string_view, kAllDialects.size()> kDialectNames = {
    "inferscope", "gateway", "vllm", "llamacpp", "tgi", "triton", "sglang", "litellm", "dynamo", "llm-d", "dcgm", "node"};

constexpr std::array<std::string_view, kRoleCount> kRoleNames = {
    "e2e",          "ttft",          "queue",           "prefill",          "decode",
    "inference",    "itl",           "tpot",            "prefill_per_token", "preprocess",
    "postprocess",  "dependency",    "send",            "gateway_queue",    "upstream_connect",
    "upstream_ttft", "stream",       "stage",           "waiting",          "running",
    "kv_usage",     "preemptions",   "prefix_cache_queries", "prefix_cache_hits", "requests",
    "errors",       "prompt_tokens", "generation_tokens", "prompt_length",  "generation_length",
    "gpu_utilization", "gpu_memory_used", "gpu_memory_total", "gpu_temperature", "gpu_power",
    "host_cpu_busy", "host_memory_used", "host_memory_total", "engine_step", "engine_busy",
    "in_flight",    "dependency_call", "client_errors", "queue_wait", "queue_run",
    "queue_depth",  "queue_oldest_age", "queue_in_progress", "queue_jobs", "queue_workers",
    "spec_drafts",  "spec_draft_tokens", "spec_accepted_tokens", "route", "kv_transfer",
    "kv_transfer_bytes", "route_prefix_hit", "pool_waiting", "endpoint_load", "lora_adapters_loaded",
    "lora_slots",   "lora_waiting_requests", "lora_loads", "engine_held"};

static_assert(static_cast<std::size_t>(Role::kEngineHeld) + 1 == kRoleCount, "kRoleNames out of date");

}  // namespace

std::string_view to_string(DialectId id) noexcept {
  if (id == DialectId::kCustom) return "custom";
  return kDialectNames[static_cast<std::size_t>(id)];
}

std::optional<DialectId> parse_dialect(std::string_view name) noexcept {
  for (DialectId id : kAllDialects) {
    if (to_string(id) == name) return id;
  }
  if (name == "llama.cpp" || name == "llama-cpp" || name == "llama_cpp") return DialectId::kLlamaCpp;
  if (name == "node-exporter" || name == "node_exporter") return DialectId::kNode;
  if (name == "dcgm-exporter" || name == "dcgm_exporter") return DialectId::kDcgm;
  if (name == "litellm-proxy" || name == "litellm_proxy") return DialectId::kLitellm;
  if (name == "inferscope-gateway" || name == "inferscope_gateway") return DialectId::kGateway;
  if (name == "llmd" || name == "llm_d") return DialectId::kLlmd;
  return std::nullopt;
}

std::string_view to_string(Role role) noexcept { return kRoleNames[static_cast<std::size_t>(role)]; }

std::optional<Role> parse_role(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kRoleNames.size(); ++i) {
    if (kRoleNames[i] == name) return static_cast<Role>(i);
  }
  return std::nullopt;
}

bool is_latency_role(Role role) noexcept {
  return role <= Role::kStage || role == Role::kRoute || role == Role::kKvTransfer;
}

std::string_view to_string(MetricKind kind) noexcept {
  switch (kind) {
    case MetricKind::kHistogram: return "histogram";
    case MetricKind::kCounter: return "counter";
    case MetricKind::kGauge: return "gauge";
    case MetricKind::kCounterRatio: return "counter_ratio";
    case MetricKind::kGaugeSum: return "gauge_sum";
    case MetricKind::kGaugeDifference: return "gauge_difference";
    case MetricKind::kBusyFromIdle: return "busy_from_idle";
  }
  return "histogram";
}

std::string_view to_string(Unit unit) noexcept {
  switch (unit) {
    case Unit::kSeconds: return "seconds";
    case Unit::kSecondsPerToken: return "seconds_per_token";
    case Unit::kRatio: return "ratio";
    case Unit::kRequests: return "requests";
    case Unit::kTokens: return "tokens";
    case Unit::kBytes: return "bytes";
    case Unit::kCelsius: return "celsius";
    case Unit::kWatts: return "watts";
    case Unit::kEvents: return "events";
    case Unit::kBlocks: return "blocks";
  }
  return "seconds";
}

}  // namespace inferscope::dialect
