// Doctor roles from the one dialect table (src/dialect): where each binding lands in the
// Snapshot the reasoning reads.
#include "doctor/role_spec.h"

#include <algorithm>

#include "dialect/dialect.h"

namespace inferscope::doctor {
namespace {

using dialect::DialectId;
using dialect::Role;

// Where a dialect role lands in the Snapshot; false when the doctor does not read it.
bool place(const dialect::MetricBinding& b, RoleGroup& group, std::string& id) {
  switch (b.role) {
    case Role::kE2e: group = RoleGroup::kLatency; id = "e2e"; return true;
    case Role::kTtft: group = RoleGroup::kLatency; id = "ttft"; return true;
    case Role::kTpot: group = RoleGroup::kLatency; id = "tpot"; return true;
    case Role::kItl: group = RoleGroup::kLatency; id = "itl"; return true;
    // inference (prefill + decode of one request) is a stage only where the server does not split
    // it (TGI, Triton); role_specs_for drops it next to prefill/decode stages.
    case Role::kInference:
    case Role::kQueue: case Role::kPrefill: case Role::kDecode: case Role::kPreprocess: case Role::kPostprocess:
    case Role::kDependency: case Role::kSend: case Role::kGatewayQueue: case Role::kUpstreamConnect:
    case Role::kUpstreamTtft: case Role::kStream:
      if (b.per_batch) return false;  // per engine step, not a request stage: cannot add up to e2e
      group = RoleGroup::kStage;
      id = std::string(dialect::to_string(b.role));
      return true;
    case Role::kPrefillPerToken: group = RoleGroup::kSignal; id = "prefill_time_per_token"; return true;
    case Role::kWaiting: group = RoleGroup::kSignal; id = "waiting"; return true;
    case Role::kRunning: group = RoleGroup::kSignal; id = "running"; return true;
    case Role::kKvUsage: group = RoleGroup::kSignal; id = "kv_usage"; return true;
    case Role::kPreemptions: group = RoleGroup::kSignal; id = "preemption_rate"; return true;
    case Role::kPrefixCacheQueries: group = RoleGroup::kSignal; id = "prefix_queries"; return true;
    case Role::kPrefixCacheHits: group = RoleGroup::kSignal; id = "prefix_hits"; return true;
    case Role::kRequests: group = RoleGroup::kSignal; id = "request_rate"; return true;
    case Role::kErrors: group = RoleGroup::kSignal; id = "error_rate"; return true;
    case Role::kPromptTokens: group = RoleGroup::kSignal; id = "prompt_token_rate"; return true;
    case Role::kGenerationTokens: group = RoleGroup::kSignal; id = "generation_token_rate"; return true;
    case Role::kPromptLength: group = RoleGroup::kSignal; id = "prompt_tokens"; return true;
    case Role::kGenerationLength: group = RoleGroup::kSignal; id = "output_tokens"; return true;
    case Role::kGpuUtilization: group = RoleGroup::kSignal; id = "gpu_util"; return true;
    case Role::kEngineStep: group = RoleGroup::kLatency; id = "step"; return true;
    case Role::kEngineBusy: group = RoleGroup::kSignal; id = "engine_busy"; return true;
    case Role::kInFlight: group = RoleGroup::kSignal; id = "in_flight"; return true;
    case Role::kDependencyCall: group = RoleGroup::kDependency; id = "dependency"; return true;
    // Client errors (4xx): the error role counts server-side failures only, but a burst of
    // rejected requests (prompts over max_model_len, bad parameters) is an incident too.
    case Role::kClientErrors: group = RoleGroup::kSignal; id = "client_error_rate"; return true;
    // Host CPU: evidence for the CPU-side causes (tokenization, scheduling, the gateway).
    case Role::kHostCpuBusy: group = RoleGroup::kSignal; id = "host_cpu_busy"; return true;
    default: return false;
  }
}

RoleKind kind_of(dialect::MetricKind k, bool& supported) {
  supported = true;
  switch (k) {
    case dialect::MetricKind::kHistogram: return RoleKind::kHistogram;
    case dialect::MetricKind::kCounter: return RoleKind::kCounter;
    case dialect::MetricKind::kGauge: return RoleKind::kGauge;
    case dialect::MetricKind::kCounterRatio: return RoleKind::kCounterRatio;
    case dialect::MetricKind::kBusyFromIdle: return RoleKind::kBusyFromIdle;
    default: supported = false; return RoleKind::kGauge;
  }
}

std::string unit_of(const dialect::MetricBinding& b, RoleKind kind) {
  switch (b.unit) {
    case dialect::Unit::kSeconds: case dialect::Unit::kSecondsPerToken: return "s";
    case dialect::Unit::kRatio: return "ratio";
    case dialect::Unit::kRequests: return kind == RoleKind::kCounter ? "req/s" : "requests";
    case dialect::Unit::kTokens: return kind == RoleKind::kCounter ? "tok/s" : "tokens";
    case dialect::Unit::kEvents: return "1/s";
    default: return "";
  }
}

// The roles the doctor cannot diagnose without; their absence is metrics_missing.
bool expected_role(Role r) {
  switch (r) {
    case Role::kE2e: case Role::kTtft: case Role::kQueue: case Role::kPrefill: case Role::kDecode:
    case Role::kItl: case Role::kPrefillPerToken: case Role::kRequests: return true;
    case Role::kTpot: return true;
    default: return false;
  }
}

const DialectId kOrder[] = {DialectId::kInferscope, DialectId::kGateway, DialectId::kVllm, DialectId::kLlamaCpp,
                            DialectId::kTgi,        DialectId::kTriton,  DialectId::kDcgm,   DialectId::kNode};

}  // namespace

std::vector<std::string> detect_dialects(const std::set<std::string>& names) {
  auto any_prefix = [&](std::string_view prefix) {
    auto it = names.lower_bound(std::string(prefix));
    return it != names.end() && it->compare(0, prefix.size(), prefix) == 0;
  };
  std::vector<std::string> out;
  bool inferscope_requests = any_prefix("inferscope_request_duration_seconds") ||
                             any_prefix("inferscope_stage_duration_seconds") || any_prefix("inferscope_requests_total");
  if (inferscope_requests) out.push_back(any_prefix("inferscope_engine_") ? "inferscope" : "gateway");
  for (DialectId id : kOrder) {
    if (id == DialectId::kInferscope || id == DialectId::kGateway) continue;
    for (std::string_view prefix : dialect::dialect(id).prefixes)
      if (any_prefix(prefix)) {
        out.emplace_back(dialect::to_string(id));
        break;
      }
  }
  return out;
}

std::vector<RoleSpec> role_specs_for(const std::vector<std::string>& dialects) {
  std::vector<RoleSpec> out;
  for (const auto& name : dialects) {
    auto id = dialect::parse_dialect(name);
    if (!id) continue;
    const dialect::Dialect& d = dialect::dialect(*id);
    for (const dialect::MetricBinding& b : d.bindings) {
      RoleSpec s;
      bool supported = false;
      if (!place(b, s.group, s.id)) continue;
      s.kind = kind_of(b.kind, supported);
      if (!supported) continue;
      s.metrics.emplace_back(b.metric);
      for (const auto& legacy : b.legacy) s.metrics.emplace_back(legacy.name);
      s.matchers = std::string(b.matchers);
      s.denominator = std::string(b.operand);
      s.scale = b.scale;
      s.unit = unit_of(b, s.kind);
      s.model_label = b.no_model_label ? std::string() : std::string(d.model_label);
      s.by_label = b.role == Role::kDependencyCall ? std::string(b.kind_label) : std::string();
      s.expected = expected_role(b.role) && b.presence != dialect::Presence::kOptional;
      switch (b.aggregation) {
        case dialect::Aggregation::kSum: s.aggregation = Aggregation::kSum; break;
        case dialect::Aggregation::kAvg: s.aggregation = Aggregation::kAvg; break;
        case dialect::Aggregation::kMax: s.aggregation = Aggregation::kMax; break;
      }
      if (b.role == Role::kEngineStep) {
        // Steps per second come from the same histogram's _count.
        RoleSpec rate = s;
        rate.group = RoleGroup::kSignal;
        rate.id = "step_rate";
        rate.kind = RoleKind::kCounter;
        rate.metrics = {std::string(b.metric) + "_count"};
        rate.unit = "1/s";
        rate.expected = false;
        out.push_back(std::move(rate));
      }
      out.push_back(std::move(s));
    }
  }
  // A role already covered by a richer dialect keeps its first spec only.
  std::vector<RoleSpec> unique;
  std::set<std::pair<int, std::string>> seen;
  bool split_engine = false;  // prefill and decode are stages of their own: inference would count twice
  for (const auto& spec : out) split_engine |= spec.group == RoleGroup::kStage && (spec.id == "prefill" || spec.id == "decode");
  for (auto& spec : out) {
    if (split_engine && spec.group == RoleGroup::kStage && spec.id == "inference") continue;
    if (seen.insert({static_cast<int>(spec.group), spec.id}).second) unique.push_back(std::move(spec));
  }
  return unique;
}

std::vector<RoleSpec> host_specs() {
  std::vector<RoleSpec> out;
  for (auto& spec : role_specs_for({std::string(dialect::to_string(DialectId::kNode))}))
    if (spec.id == "host_cpu_busy") out.push_back(std::move(spec));
  return out;
}

std::string name_pattern() {
  std::string out;
  for (DialectId id : kOrder)
    if (id != DialectId::kNode)
      for (std::string_view prefix : dialect::dialect(id).prefixes) {
      std::string p(prefix);
      out += (out.empty() ? "" : "|") + p + ".+";
    }
  return out;
}

std::vector<std::string> series_names(const RoleSpec& spec, const std::string& metric) {
  if (spec.kind == RoleKind::kHistogram) return {metric + "_bucket", metric + "_sum", metric + "_count"};
  if (spec.kind == RoleKind::kCounterRatio) return {metric, spec.denominator};
  return {metric};
}

}  // namespace inferscope::doctor
