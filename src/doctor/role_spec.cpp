// Doctor roles from the one dialect table (src/dialect): where each binding lands in the
// Snapshot the reasoning reads.
#include "doctor/role_spec.h"

#include <algorithm>

#include "dialect/dialect.h"
#include "doctor/signal_id.h"

namespace inferscope::doctor {
namespace {

using dialect::DialectId;
using dialect::Role;

// signal places a role at a SignalId: its id and whether it is a latency distribution.
bool signal(SignalId id, RoleGroup& group, std::string& out) {
  group = is_latency(id) ? RoleGroup::kLatency : RoleGroup::kSignal;
  out = std::string(to_string(id));
  return true;
}

// Where a dialect role lands in the Snapshot; false when the doctor does not read it.
bool place(const dialect::MetricBinding& b, RoleGroup& group, std::string& id) {
  switch (b.role) {
    case Role::kE2e: return signal(SignalId::kE2e, group, id);
    case Role::kTtft: return signal(SignalId::kTtft, group, id);
    case Role::kTpot: return signal(SignalId::kTpot, group, id);
    case Role::kItl: return signal(SignalId::kItl, group, id);
    // inference (prefill + decode of one request) is a stage only where the server does not split
    // it (TGI, Triton); role_specs_for drops it next to prefill/decode stages.
    case Role::kInference:
    case Role::kQueue: case Role::kPrefill: case Role::kDecode: case Role::kPreprocess: case Role::kPostprocess:
    case Role::kDependency: case Role::kSend: case Role::kGatewayQueue: case Role::kUpstreamConnect:
    case Role::kUpstreamTtft: case Role::kStream: case Role::kRoute: case Role::kKvTransfer:
      if (b.per_batch) return false;  // per engine step, not a request stage: cannot add up to e2e
      group = RoleGroup::kStage;
      id = std::string(dialect::to_string(b.role));
      return true;
    case Role::kPrefillPerToken: return signal(SignalId::kPrefillTimePerToken, group, id);
    case Role::kWaiting: return signal(SignalId::kWaiting, group, id);
    case Role::kRunning: return signal(SignalId::kRunning, group, id);
    case Role::kKvUsage: return signal(SignalId::kKvUsage, group, id);
    case Role::kPreemptions: return signal(SignalId::kPreemptionRate, group, id);
    case Role::kPrefixCacheQueries: return signal(SignalId::kPrefixQueries, group, id);
    case Role::kPrefixCacheHits: return signal(SignalId::kPrefixHits, group, id);
    case Role::kSpecDrafts: return signal(SignalId::kSpecDrafts, group, id);
    case Role::kSpecDraftTokens: return signal(SignalId::kSpecDraftTokens, group, id);
    case Role::kSpecAcceptedTokens: return signal(SignalId::kSpecAcceptedTokens, group, id);
    case Role::kLoraAdaptersLoaded: return signal(SignalId::kLoraLoaded, group, id);
    case Role::kLoraSlots: return signal(SignalId::kLoraSlots, group, id);
    case Role::kLoraWaitingRequests: return signal(SignalId::kLoraWaiting, group, id);
    case Role::kLoraLoads: return signal(SignalId::kLoraLoadRate, group, id);
    case Role::kRequests: return signal(SignalId::kRequestRate, group, id);
    case Role::kErrors: return signal(SignalId::kErrorRate, group, id);
    case Role::kPromptTokens: return signal(SignalId::kPromptTokenRate, group, id);
    case Role::kGenerationTokens: return signal(SignalId::kGenerationTokenRate, group, id);
    case Role::kPromptLength: return signal(SignalId::kPromptTokens, group, id);
    case Role::kGenerationLength: return signal(SignalId::kOutputTokens, group, id);
    case Role::kGpuUtilization: return signal(SignalId::kGpuUtil, group, id);
    case Role::kEngineStep: return signal(SignalId::kStep, group, id);
    case Role::kEngineBusy: return signal(SignalId::kEngineBusy, group, id);
    case Role::kEngineHeld: return signal(SignalId::kEngineHeld, group, id);
    case Role::kInFlight: return signal(SignalId::kInFlight, group, id);
    case Role::kDependencyCall: group = RoleGroup::kDependency; id = "dependency"; return true;
    // Client errors (4xx): the error role counts server-side failures only, but a burst of
    // rejected requests (prompts over max_model_len, bad parameters) is an incident too.
    case Role::kClientErrors: return signal(SignalId::kClientErrorRate, group, id);
    // Host CPU: evidence for the CPU-side causes (tokenization, scheduling, the gateway).
    case Role::kHostCpuBusy: return signal(SignalId::kHostCpuBusy, group, id);
    // The job queue in front: its wait is the first stage a user's job passes.
    case Role::kQueueWait: group = RoleGroup::kStage; id = std::string(dialect::to_string(b.role)); return true;
    case Role::kQueueRun: return signal(SignalId::kQueueRun, group, id);
    case Role::kQueueDepth: return signal(SignalId::kQueueDepth, group, id);
    case Role::kQueueOldestAge: return signal(SignalId::kQueueOldestAge, group, id);
    case Role::kQueueInProgress: return signal(SignalId::kQueueInProgress, group, id);
    // A disaggregated fleet's transfer size (time per byte is kv_transfer / this) and the router's
    // prefix hit; per-pool queues and per-endpoint load are split by their label (append_specs).
    case Role::kKvTransferBytes: return signal(SignalId::kKvTransferBytes, group, id);
    case Role::kRoutePrefixHit: return signal(SignalId::kRoutePrefixHit, group, id);
    case Role::kPoolWaiting: group = RoleGroup::kPool; id = "pool_waiting"; return true;
    case Role::kEndpointLoad: group = RoleGroup::kEndpoint; id = "endpoint_load"; return true;
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
    case dialect::Unit::kBytes: return "bytes";
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

constexpr const auto& kOrder = dialect::kAllDialects;

// The queue collector's series stand beside the server dialects under this name.
constexpr std::string_view kQueueSource = "queue";

// queue_specs reads the queue collector's bindings; outcomes and worker states are split into a
// signal each by their label value (docs/queues.md spells them).
std::vector<RoleSpec> queue_specs() {
  std::vector<RoleSpec> out;
  for (const dialect::MetricBinding& b : dialect::queue_bindings()) {
    RoleSpec s;
    bool supported = false;
    s.kind = kind_of(b.kind, supported);
    s.metrics.emplace_back(b.metric);
    s.aggregation = b.aggregation == dialect::Aggregation::kMax ? Aggregation::kMax : Aggregation::kSum;
    auto split = [&](SignalId id, std::string_view label_value, const char* unit) {
      RoleSpec part = s;
      part.group = RoleGroup::kSignal;
      part.id = std::string(to_string(id));
      part.matchers = std::string(b.kind_label) + "=\"" + std::string(label_value) + "\"";
      part.unit = unit;
      out.push_back(std::move(part));
    };
    switch (b.role) {
      case Role::kQueueJobs:
        split(SignalId::kQueueJobsFinished, "finished", "jobs/s");
        split(SignalId::kQueueJobsFailed, "failed", "jobs/s");
        continue;
      case Role::kQueueWorkers:
        split(SignalId::kQueueWorkersBusy, "busy", "workers");
        split(SignalId::kQueueWorkersIdle, "idle", "workers");
        split(SignalId::kQueueWorkersStale, "stale", "workers");
        continue;
      default: break;
    }
    if (!place(b, s.group, s.id)) continue;
    s.unit = b.unit == dialect::Unit::kSeconds ? "s" : "jobs";
    out.push_back(std::move(s));
  }
  return out;
}

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
  bool queue = false;
  for (const dialect::MetricBinding& b : dialect::queue_bindings()) queue = queue || any_prefix(b.metric);
  for (DialectId id : kOrder) {
    if (id == DialectId::kInferscope || id == DialectId::kGateway) continue;
    for (std::string_view prefix : dialect::dialect(id).prefixes)
      if (any_prefix(prefix)) {
        out.emplace_back(dialect::to_string(id));
        break;
      }
  }
  // After the servers: the queue is not a server kind, and a server dialect names the snapshot.
  if (queue) out.emplace_back(kQueueSource);
  return out;
}

namespace {

void append_specs(const dialect::Dialect& d, std::vector<RoleSpec>& out) {
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
      const bool split = b.role == Role::kDependencyCall || b.role == Role::kPoolWaiting || b.role == Role::kEndpointLoad;
      s.by_label = split ? std::string(b.kind_label) : std::string();
      if (b.role == Role::kEndpointLoad && d.pool_label != b.kind_label) s.group_label = std::string(d.pool_label);
      s.expected = expected_role(b.role) && b.presence != dialect::Presence::kOptional &&
                   b.presence != dialect::Presence::kFeature;
      switch (b.aggregation) {
        case dialect::Aggregation::kSum: s.aggregation = Aggregation::kSum; break;
        case dialect::Aggregation::kAvg: s.aggregation = Aggregation::kAvg; break;
        case dialect::Aggregation::kMax: s.aggregation = Aggregation::kMax; break;
      }
      if (b.role == Role::kEngineStep) {
        // Steps per second come from the same histogram's _count.
        RoleSpec rate = s;
        rate.group = RoleGroup::kSignal;
        rate.id = std::string(to_string(SignalId::kStepRate));
        rate.kind = RoleKind::kCounter;
        rate.metrics = {std::string(b.metric) + "_count"};
        rate.unit = "1/s";
        rate.expected = false;
        out.push_back(std::move(rate));
      }
      out.push_back(std::move(s));
    }
}

// unique_specs keeps the first spec of each role (the richer dialect's) and drops TGI/Triton's
// inference stage next to prefill and decode stages.
std::vector<RoleSpec> unique_specs(std::vector<RoleSpec> out) {
  // A role already covered by a richer dialect keeps its first spec only.
  std::vector<RoleSpec> unique;
  std::set<std::pair<int, std::string>> seen;
  bool split_engine = false;  // prefill and decode are stages of their own: inference would count twice
  auto is_stage = [](const RoleSpec& spec, Role stage) {
    return spec.group == RoleGroup::kStage && spec.id == dialect::to_string(stage);
  };
  for (const auto& spec : out) split_engine |= is_stage(spec, Role::kPrefill) || is_stage(spec, Role::kDecode);
  for (auto& spec : out) {
    if (split_engine && is_stage(spec, Role::kInference)) continue;
    if (seen.insert({static_cast<int>(spec.group), spec.id}).second) unique.push_back(std::move(spec));
  }
  return unique;
}

}  // namespace

std::vector<RoleSpec> role_specs_for(const std::vector<std::string>& dialects) {
  std::vector<RoleSpec> out;
  for (const auto& name : dialects) {
    if (name == kQueueSource) {
      for (RoleSpec& spec : queue_specs()) out.push_back(std::move(spec));
      continue;
    }
    if (auto id = dialect::parse_dialect(name)) append_specs(dialect::dialect(*id), out);
  }
  return unique_specs(std::move(out));
}

std::vector<RoleSpec> role_specs_for(const dialect::Dialect& table) {
  std::vector<RoleSpec> out;
  append_specs(table, out);
  return unique_specs(std::move(out));
}

std::vector<RoleSpec> host_specs() {
  std::vector<RoleSpec> out;
  for (auto& spec : role_specs_for({std::string(dialect::to_string(DialectId::kNode))}))
    if (spec.id == to_string(SignalId::kHostCpuBusy)) out.push_back(std::move(spec));
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
