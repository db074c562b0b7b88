// Dialect detection and coverage checks over a parsed exposition.
#include "dialect/detect.h"

#include <cctype>
#include <regex>

#include "dialect/promql.h"

namespace inferscope::dialect {
namespace {

using metrics::ParsedExposition;
using metrics::ParsedLabel;

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::size_t count_prefixed(const ParsedExposition& e, std::string_view prefix) {
  std::size_t n = 0;
  for (const auto& family : e.families) n += starts_with(family.name, prefix) ? 1 : 0;
  return n;
}

bool has_family(const ParsedExposition& e, std::string_view name) { return metrics::find_family(e, name) != nullptr; }

// declared: the family of `name` is in the text, in 0.0.4 or OpenMetrics spelling, or a sample of
// its presence series is (TGI's *_sum counters are samples of a histogram family).
bool declared(const ParsedExposition& e, MetricKind kind, std::string_view name) {
  if (has_family(e, name)) return true;
  for (std::string_view suffix : {"_total", "_sum", "_count"}) {
    if (ends_with(name, suffix) && has_family(e, name.substr(0, name.size() - suffix.size()))) return true;
  }
  return metrics::find_sample(e, presence_series(kind, name)) != nullptr;
}

// has_series: a sample of the presence series that satisfies the binding's fixed matchers.
bool has_series(const ParsedExposition& e, const MetricBinding& b, std::string_view name) {
  for (const auto* sample : metrics::find_samples(e, presence_series(b.kind, name))) {
    if (matchers_hold(b.matchers, sample->labels)) return true;
  }
  return false;
}

struct Matcher {
  std::string name, op, value;
};

// parse_matchers splits `a="x",b!~"y|z"` into matchers; nullopt on malformed text.
std::optional<std::vector<Matcher>> parse_matchers(std::string_view text) {
  std::vector<Matcher> out;
  std::size_t i = 0;
  while (i < text.size()) {
    Matcher m;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) m.name += text[i++];
    for (std::string_view op : {"!=", "=~", "!~", "="}) {
      if (text.substr(i, op.size()) == op) {
        m.op = op;
        i += op.size();
        break;
      }
    }
    if (m.name.empty() || m.op.empty() || i >= text.size() || text[i] != '"') return std::nullopt;
    ++i;
    bool closed = false;
    while (i < text.size()) {
      const char c = text[i++];
      if (c == '\\' && i < text.size()) {
        m.value += text[i++];
      } else if (c == '"') {
        closed = true;
        break;
      } else {
        m.value += c;
      }
    }
    if (!closed) return std::nullopt;
    out.push_back(std::move(m));
    if (i < text.size()) {
      if (text[i] != ',') return std::nullopt;
      ++i;
    }
  }
  return out;
}

std::string variant_of(const ParsedExposition& e, DialectId id) {
  switch (id) {
    case DialectId::kLlamaCpp: {
      if (has_family(e, "llamacpp:kv_cache_usage_ratio")) return "older set (b4748 era, with KV-cache gauges)";
      if (has_family(e, "llamacpp:n_tokens_max") || has_family(e, "llamacpp:prompt_tokens_cached_total")) {
        return "newer set (no KV-cache gauges)";
      }
      return "";
    }
    case DialectId::kVllm: {
      if (has_family(e, "vllm:num_requests_swapped") || has_family(e, "vllm:avg_generation_throughput_toks_per_s")) {
        return "V0 names";
      }
      const bool itl = has_family(e, "vllm:inter_token_latency_seconds");
      const bool old_tpot = has_family(e, "vllm:time_per_output_token_seconds");
      const bool old_kv = has_family(e, "vllm:gpu_cache_usage_perc");
      if (!itl && old_tpot) return "before 0.11 (time_per_output_token_seconds, no inter_token_latency_seconds)";
      if (old_tpot || old_kv) return "legacy aliases on";
      return "";
    }
    case DialectId::kSglang: {
      if (has_family(e, "sglang:num_requests_waiting") || has_family(e, "sglang:waiting_request_latency_seconds")) {
        return "v0.3.5 names (num_requests_waiting, label name, cache_hit_rate in percent)";
      }
      if (has_family(e, "sglang:time_per_output_token_seconds")) {
        return "before inter_token_latency_seconds (time_per_output_token_seconds, no queue_time_seconds)";
      }
      return "";
    }
    case DialectId::kLitellm: {
      if (!has_family(e, "litellm_request_queue_time_seconds")) return "before Dec 2025 (no request queue time)";
      if (!has_family(e, "litellm_in_flight_requests")) return "before Feb 2026 (no in-flight gauge)";
      return "";
    }
    case DialectId::kDynamo: {
      // Which processes of the fleet this exposition comes from: the frontend, the KV router,
      // workers (dynamo_component_* without the router's), and whether disaggregated pools show.
      std::string parts;
      auto add = [&parts](std::string_view part) { parts += (parts.empty() ? "" : ", ") + std::string(part); };
      if (count_prefixed(e, "dynamo_frontend_") > 0) add("frontend");
      if (count_prefixed(e, "dynamo_component_router_") + count_prefixed(e, "dynamo_router_") > 0) add("KV router");
      if (count_prefixed(e, "dynamo_component_") > count_prefixed(e, "dynamo_component_router_")) add("worker");
      for (const auto& family : e.families) {
        if (!starts_with(family.name, "dynamo_")) continue;
        for (const auto& sample : family.samples) {
          const auto type = metrics::label_value(sample, "worker_type");
          if (type == std::optional<std::string_view>("prefill") || type == std::optional<std::string_view>("decode")) {
            add("disaggregated prefill/decode workers");
            return parts;
          }
        }
      }
      return parts;
    }
    case DialectId::kLlmd: {
      const bool current = count_prefixed(e, "llm_d_router_epp_") > 0;
      const bool old = count_prefixed(e, "inference_objective_") + count_prefixed(e, "inference_pool_") > 0;
      if (current && old) return "llm_d_router_epp_* and the GIE-era inference_objective_*/inference_pool_* names";
      if (old) return "GIE-era names (inference_objective_*, inference_pool_*), before llm_d_router_epp_*";
      return "";
    }
    case DialectId::kDcgm: {
      for (const auto& family : e.families) {
        if (!starts_with(family.name, "DCGM_FI_")) continue;
        for (const auto& sample : family.samples) {
          if (metrics::label_value(sample, "simulated") == std::optional<std::string_view>("true")) {
            return "simulated by inferscope serve";
          }
        }
      }
      return "";
    }
    default: return "";
  }
}

// inferscope_kind tells an inferscope server from a gateway from neither (up's own /metrics).
std::optional<DialectId> inferscope_kind(const ParsedExposition& e) {
  const bool engine = has_family(e, "inferscope_engine_requests_waiting") ||
                      has_family(e, "inferscope_engine_requests_running") ||
                      has_family(e, "inferscope_kv_cache_usage_ratio");
  if (engine) return DialectId::kInferscope;
  if (count_prefixed(e, "inferscope_gateway_") + count_prefixed(e, "inferscope_upstream_") > 0) {
    return DialectId::kGateway;
  }
  for (std::string_view stage : {"upstream_connect", "upstream_ttft", "stream"}) {
    if (metrics::find_sample(e, "inferscope_stage_duration_seconds_count", {{"stage", stage}}) != nullptr) {
      return DialectId::kGateway;
    }
  }
  // Request families without an engine: a gateway (serve always registers its engine gauges).
  if (has_family(e, "inferscope_request_duration_seconds") || has_family(e, "inferscope_requests_total")) {
    return DialectId::kGateway;
  }
  return std::nullopt;
}

}  // namespace

bool matchers_hold(std::string_view text, const std::vector<ParsedLabel>& labels) {
  const auto matchers = parse_matchers(text);
  if (!matchers) return false;
  for (const Matcher& m : *matchers) {
    std::string_view value;  // an absent label reads as "" in PromQL
    for (const ParsedLabel& label : labels) {
      if (label.name == m.name) value = label.value;
    }
    bool holds = false;
    if (m.op == "=" || m.op == "!=") {
      holds = (value == m.value) == (m.op == "=");
    } else {
      try {
        holds = std::regex_match(value.begin(), value.end(), std::regex(m.value)) == (m.op == "=~");
      } catch (const std::regex_error&) {
        return false;
      }
    }
    if (!holds) return false;
  }
  return true;
}

Detection detect_dialects(const ParsedExposition& e) {
  Detection d;
  const std::optional<DialectId> own = inferscope_kind(e);
  for (DialectId id : kAllDialects) {
    if (id == DialectId::kInferscope || id == DialectId::kGateway) {
      if (own != id) continue;
    }
    std::size_t families = 0;
    for (std::string_view prefix : dialect(id).prefixes) families += count_prefixed(e, prefix);
    if (id == DialectId::kTriton) families += count_prefixed(e, "nv_gpu_");
    if (families == 0) continue;
    d.found.push_back({id, families, variant_of(e, id)});
  }
  // Table order already ranks serving software above exporters: the first found is the primary.
  if (!d.found.empty()) d.primary = d.found.front().id;
  for (const DetectedDialect& f : d.found) {
    if (!d.evidence.empty()) d.evidence += "; ";
    d.evidence += std::to_string(f.families) + " " + std::string(to_string(f.id)) + " families";
    if (!f.variant.empty()) d.evidence += " (" + f.variant + ")";
  }
  if (d.evidence.empty()) d.evidence = "no family of a known dialect";
  return d;
}

bool Coverage::missing_latency() const {
  for (const MissingMetric& m : missing) {
    if (is_latency_role(m.role)) return true;
  }
  return false;
}

Coverage check_coverage(const ParsedExposition& e, DialectId id) {
  Coverage c{.dialect = id};
  for (std::size_t r = 0; r < kRoleCount; ++r) {
    if (!supports(id, static_cast<Role>(r))) c.unsupported.push_back(static_cast<Role>(r));
  }
  for (const MetricBinding& b : dialect(id).bindings) {
    const bool current = declared(e, b.kind, b.metric);
    bool any = current;
    bool series = current && has_series(e, b, b.metric);
    for (const LegacyName& legacy : b.legacy) {
      if (!declared(e, b.kind, legacy.name)) continue;
      c.renamed.push_back({b.role, std::string(legacy.name), std::string(b.metric), current, std::string(legacy.note)});
      any = true;
      series = series || has_series(e, b, legacy.name);
    }
    if (b.kind == MetricKind::kCounterRatio || b.kind == MetricKind::kGaugeSum ||
        b.kind == MetricKind::kGaugeDifference) {
      // Both halves are needed; a lone half answers nothing.
      const bool operand = declared(e, MetricKind::kCounter, b.operand);
      any = any && operand;
      series = series && operand;
    }
    // A feature's family may be declared with no series of it (inferscope's stage histogram has no
    // route or kv_transfer series outside disaggregated mode): the feature is off.
    if (b.presence == Presence::kFeature && !series) continue;  // the feature is off: nothing is missing
    if (!any) {
      MissingMetric m{b.role, std::string(b.metric), b.presence};
      (b.presence == Presence::kOptional ? c.optional_missing : c.missing).push_back(std::move(m));
      continue;
    }
    c.present.push_back(b.role);
    if (!series) c.without_series.push_back(b.role);
  }
  for (const DeprecatedName& name : dialect(id).deprecated) {
    if (has_family(e, name.name)) c.deprecated.push_back({std::string(name.name), std::string(name.instead)});
  }
  return c;
}

}  // namespace inferscope::dialect
