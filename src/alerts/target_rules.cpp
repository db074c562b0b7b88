// One target's recording rules and alerts. Recorded series carry `job` and `model` (whatever the
// dialect calls its model label) so alerts, the dashboard and the doctor read one naming scheme;
// the expressions underneath use the dialect's own names through the dialect table.
#include "alerts/target_rules.h"

#include <fmt/format.h>

#include <set>

#include "alerts/rule_group_writer.h"
#include "common/prom_duration.h"
#include "dialect/promql.h"

namespace inferscope::alerts {
namespace {

using dialect::DialectId;
using dialect::MetricBinding;
using dialect::MetricKind;
using dialect::Role;

constexpr const char* kGatewayHint = "put `inferscope gateway` in front of it to measure per-request latency";

struct Context {
  const RulesTarget& target;
  const RulesConfig& config;
  DialectId id;
  const dialect::Dialect& table;
  std::string job_matcher;  // job="J"
  std::string window;       // rate window in Prometheus syntax
};

// model_by returns the grouping labels of per-model records: job and the dialect's model label.
std::vector<std::string> model_by(const Context& c) {
  std::vector<std::string> by{"job"};
  if (!c.table.model_label.empty()) by.emplace_back(c.table.model_label);
  return by;
}

dialect::QueryScope scope(const Context& c, std::vector<std::string> by) {
  return dialect::QueryScope{c.job_matcher, std::move(by), c.window};
}

// normalise renames the dialect's model label to `model` (vLLM's model_name), dropping the old one.
std::string normalise(const Context& c, const std::string& expr) {
  const std::string_view label = c.table.model_label;
  if (label.empty() || label == "model") return expr;
  return fmt::format("max without ({0}) (label_replace({1}, \"model\", \"$1\", \"{0}\", \"(.*)\"))", label, expr);
}

// or_legacy builds `build(binding)` and or-s in the same expression over each legacy name, so a
// target still on an old name (vLLM before a rename) keeps its recorded series.
template <class Build>
std::optional<std::string> or_legacy(const MetricBinding& b, Build build) {
  auto expr = build(b);
  if (!expr) return expr;
  for (const dialect::LegacyName& legacy : b.legacy) {
    if (auto old = build(dialect::with_metric(b, legacy.name))) *expr = "(" + *expr + ") or (" + *old + ")";
  }
  return expr;
}

std::string recorded(std::string_view name, const Context& c) { return std::string(name) + "{" + c.job_matcher + "}"; }

// ---- recording rules ------------------------------------------------------------------------

constexpr Role kLatencyRecords[] = {Role::kE2e,  Role::kTtft,  Role::kTpot,      Role::kItl,
                                    Role::kPrefillPerToken, Role::kRoute, Role::kKvTransfer};

// Request stages recorded under inferscope:stage_seconds{stage} for dialects without a stage label.
constexpr Role kStageRoles[] = {Role::kGatewayQueue, Role::kPreprocess,      Role::kDependency,
                                Role::kQueue,        Role::kPrefill,         Role::kDecode,
                                Role::kPostprocess,  Role::kSend,            Role::kUpstreamConnect,
                                Role::kUpstreamTtft, Role::kStream,          Role::kInference,
                                Role::kRoute,        Role::kKvTransfer};

void record_latency(RuleGroupWriter& g, const Context& c) {
  for (Role role : kLatencyRecords) {
    const MetricBinding* b = dialect::find_binding(c.table, role);
    if (b == nullptr) continue;
    const std::string base = "inferscope:" + std::string(dialect::to_string(role)) + "_seconds:";
    const auto s = scope(c, model_by(c));
    for (auto [q, suffix] : {std::pair{0.5, "p50"}, std::pair{0.95, "p95"}, std::pair{0.99, "p99"}}) {
      const auto expr = or_legacy(*b, [&, q = q](const MetricBinding& x) { return dialect::quantile_expr(x, q, s); });
      if (expr) g.record(base + suffix, normalise(c, *expr));
    }
    const auto mean = or_legacy(*b, [&](const MetricBinding& x) { return dialect::mean_expr(x, s); });
    if (mean) g.record(base + "mean", normalise(c, *mean));
  }
}

void record_stages(RuleGroupWriter& g, const Context& c) {
  if (const MetricBinding* stage = dialect::find_binding(c.table, Role::kStage)) {
    auto by = model_by(c);
    by.emplace_back(stage->kind_label);
    const auto s = scope(c, by);
    g.record("inferscope:stage_seconds:mean", normalise(c, *dialect::mean_expr(*stage, s)));
    g.record("inferscope:stage_seconds:p95", normalise(c, *dialect::quantile_expr(*stage, 0.95, s)));
    return;
  }
  const bool prefill_and_decode = dialect::supports(c.table, Role::kPrefill) && dialect::supports(c.table, Role::kDecode);
  for (Role role : kStageRoles) {
    const MetricBinding* b = dialect::find_binding(c.table, role);
    if (b == nullptr || b->per_batch) continue;
    if (role == Role::kInference && prefill_and_decode) continue;  // would count prefill + decode twice
    const auto s = scope(c, model_by(c));
    const std::map<std::string, std::string> stage{{"stage", std::string(dialect::to_string(role))}};
    if (auto expr = or_legacy(*b, [&](const MetricBinding& x) { return dialect::mean_expr(x, s); })) {
      g.record("inferscope:stage_seconds:mean", normalise(c, *expr), stage);
    }
    if (auto expr = or_legacy(*b, [&](const MetricBinding& x) { return dialect::quantile_expr(x, 0.95, s); })) {
      g.record("inferscope:stage_seconds:p95", normalise(c, *expr), stage);
    }
  }
}

void record_traffic_and_capacity(RuleGroupWriter& g, const Context& c) {
  const auto s = scope(c, model_by(c));
  auto rate_of = [&](Role role, std::string_view name) {
    if (const MetricBinding* b = dialect::find_binding(c.table, role)) {
      if (auto expr = or_legacy(*b, [&](const MetricBinding& x) { return dialect::rate_expr(x, s); })) {
        g.record(name, normalise(c, *expr));
      }
    }
  };
  auto value_of = [&](Role role, std::string_view name) {
    if (const MetricBinding* b = dialect::find_binding(c.table, role)) {
      if (auto expr = or_legacy(*b, [&](const MetricBinding& x) { return dialect::value_expr(x, s); })) {
        g.record(name, normalise(c, *expr));
      }
    }
  };
  rate_of(Role::kRequests, "inferscope:requests:rate");
  if (auto expr = dialect::error_ratio_expr(c.table, s)) g.record("inferscope:errors:ratio", normalise(c, *expr));
  rate_of(Role::kPromptTokens, "inferscope:prompt_tokens:rate");
  rate_of(Role::kGenerationTokens, "inferscope:generation_tokens:rate");
  value_of(Role::kWaiting, "inferscope:waiting");
  value_of(Role::kRunning, "inferscope:running");
  value_of(Role::kKvUsage, "inferscope:kv_usage");
  rate_of(Role::kPreemptions, "inferscope:preemptions:rate");
}

// rename_label moves label `from` to `to` (Dynamo's worker_type and llm-d's pool `name` both
// become `pool`), dropping `from`; a label already named `to` (inferscope serve's pool and
// endpoint) stays as it is, since dropping `from` would then drop the label itself.
std::string rename_label(const std::string& expr, std::string_view from, std::string_view to) {
  if (from == to) return expr;
  return fmt::format("max without ({0}) (label_replace({1}, \"{2}\", \"$1\", \"{0}\", \"(.*)\"))", from, expr, to);
}

// record_disaggregation: the series of a fleet with a router in front of prefill and decode
// pools, each only where the dialect has the metric (docs/disaggregation.md). KV transfer time
// itself is a latency record (inferscope:kv_transfer_seconds:*) and a stage.
void record_disaggregation(RuleGroupWriter& g, const Context& c) {
  const auto s = scope(c, model_by(c));
  auto mean_of = [&](const MetricBinding& b) {
    return or_legacy(b, [&](const MetricBinding& x) { return dialect::mean_expr(x, s); });
  };
  const MetricBinding* bytes = dialect::find_binding(c.table, Role::kKvTransferBytes);
  if (bytes != nullptr) {
    if (auto mean = mean_of(*bytes)) g.record("inferscope:kv_transfer_bytes:mean", normalise(c, *mean));
    // Mean bytes over mean seconds: the bandwidth the transfers achieved (a degraded link or a NIC
    // fallen back to TCP shows here before the TTFT does).
    if (const MetricBinding* transfer = dialect::find_binding(c.table, Role::kKvTransfer)) {
      if (bytes->no_model_label == transfer->no_model_label) {
        g.record("inferscope:kv_transfer_bytes_per_second:mean", recorded("inferscope:kv_transfer_bytes:mean", c) + " / " +
                                                                    recorded("inferscope:kv_transfer_seconds:mean", c));
      } else {
        // One of the two carries no model label (serve's bytes histogram beside its per-model
        // stage): per model the two records never match, so both means are taken per job.
        const auto by_job = scope(c, {"job"});
        auto b = or_legacy(*bytes, [&](const MetricBinding& x) { return dialect::mean_expr(x, by_job); });
        auto t = or_legacy(*transfer, [&](const MetricBinding& x) { return dialect::mean_expr(x, by_job); });
        if (b && t) g.record("inferscope:kv_transfer_bytes_per_second:mean", "(" + *b + ") / (" + *t + ")");
      }
    }
  }
  if (const MetricBinding* hit = dialect::find_binding(c.table, Role::kRoutePrefixHit)) {
    if (auto mean = mean_of(*hit)) g.record("inferscope:route_prefix_hit:mean", normalise(c, *mean));
  }
  const std::string_view pool = c.table.pool_label;
  if (const MetricBinding* waiting = dialect::find_binding(c.table, Role::kPoolWaiting)) {
    // Per pool: one pool's queue growing while the other's stays flat is the P:D imbalance.
    const auto by_pool = scope(c, {"job", std::string(waiting->kind_label)});
    if (auto value = or_legacy(*waiting, [&](const MetricBinding& x) { return dialect::value_expr(x, by_pool); })) {
      g.record("inferscope:pool_waiting", rename_label(*value, waiting->kind_label, "pool"));
      g.record("inferscope:pool_waiting:delta", "delta(" + recorded("inferscope:pool_waiting", c) + "[" + c.window + "])");
    }
  }
  if (const MetricBinding* load = dialect::find_binding(c.table, Role::kEndpointLoad)) {
    // Endpoints are compared with the peers of their own pool (a prefill worker's load is not a
    // decode worker's); spread = busiest / mean, absent while the pool is idle (mean 0).
    std::vector<std::string> by{"job"};
    if (!pool.empty()) by.emplace_back(pool);
    by.emplace_back(load->kind_label);
    const auto by_endpoint = scope(c, by);
    if (auto value = or_legacy(*load, [&](const MetricBinding& x) { return dialect::value_expr(x, by_endpoint); })) {
      std::string expr = rename_label(*value, load->kind_label, "endpoint");
      if (!pool.empty()) expr = rename_label(expr, pool, "pool");
      g.record("inferscope:endpoint_load", expr);
      const std::string per_endpoint = recorded("inferscope:endpoint_load", c);
      g.record("inferscope:endpoint_load:spread",
               fmt::format("max by (job, pool) ({0}) / (avg by (job, pool) ({0}) > 0)", per_endpoint));
    }
  }
}

// rank_table: the dialect whose e2e histogram carries vLLM's per-rank `engine` label for this
// target: vLLM's own, and vLLM's for inferscope serve, which exposes vLLM's families beside its
// own (summed over ranks); nullptr for the others.
const dialect::Dialect* rank_table(const Context& c) {
  if (c.id == DialectId::kVllm) return &c.table;
  if (c.id == DialectId::kInferscope) return &dialect::dialect(DialectId::kVllm);
  return nullptr;
}

// record_engine_features: prefix-cache hit rate, draft acceptance, requests waiting for a LoRA
// adapter slot and, where the series carry vLLM's `engine` label, each data-parallel rank's e2e
// p99. Each only where the dialect has the counters.
void record_engine_features(RuleGroupWriter& g, const Context& c) {
  const auto s = scope(c, model_by(c));
  auto rate_of = [&](Role role, std::string_view name) {
    const MetricBinding* b = dialect::find_binding(c.table, role);
    if (b == nullptr) return false;
    auto expr = or_legacy(*b, [&](const MetricBinding& x) { return dialect::rate_expr(x, s); });
    if (expr) g.record(name, normalise(c, *expr));
    return expr.has_value();
  };
  // Ratios of token rates: absent while nothing is asked (no queries, no drafts), never 0/0.
  if (rate_of(Role::kPrefixCacheQueries, "inferscope:prefix_cache_queries:rate") &&
      rate_of(Role::kPrefixCacheHits, "inferscope:prefix_cache_hits:rate")) {
    g.record("inferscope:prefix_cache_hit:ratio", recorded("inferscope:prefix_cache_hits:rate", c) + " / (" +
                                                      recorded("inferscope:prefix_cache_queries:rate", c) + " > 0)");
  }
  if (rate_of(Role::kSpecDraftTokens, "inferscope:spec_decode_draft_tokens:rate") &&
      rate_of(Role::kSpecAcceptedTokens, "inferscope:spec_decode_accepted_tokens:rate")) {
    g.record("inferscope:spec_decode_acceptance:ratio", recorded("inferscope:spec_decode_accepted_tokens:rate", c) +
                                                            " / (" + recorded("inferscope:spec_decode_draft_tokens:rate", c) +
                                                            " > 0)");
  }
  if (const MetricBinding* waiting = dialect::find_binding(c.table, Role::kLoraWaitingRequests)) {
    if (auto expr = or_legacy(*waiting, [&](const MetricBinding& x) { return dialect::value_expr(x, s); })) {
      g.record("inferscope:lora_waiting", normalise(c, *expr));
    }
  }
  if (const dialect::Dialect* ranks = rank_table(c)) {
    // vLLM V1 labels every series of a data-parallel rank with engine="<rank>"; the ranks of one
    // job are peers behind one API server, so their tails should match.
    const MetricBinding* e2e = dialect::find_binding(*ranks, Role::kE2e);
    const auto by_rank = scope(c, {"job", "engine"});
    if (auto p99 = or_legacy(*e2e, [&](const MetricBinding& x) { return dialect::quantile_expr(x, 0.99, by_rank); })) {
      g.record("inferscope:engine_e2e_seconds:p99", *p99);
    }
  }
}

// gpu_table: where this target's GPU memory metrics come from (used and total both needed).
// inferscope serve exposes DCGM names; nullptr = none.
const dialect::Dialect* gpu_table(const Context& c) {
  if (dialect::supports(c.table, Role::kGpuMemoryUsed) && dialect::supports(c.table, Role::kGpuMemoryTotal)) {
    return &c.table;
  }
  if (c.id == DialectId::kInferscope) return &dialect::dialect(DialectId::kDcgm);
  return nullptr;
}

void record_gpu(RuleGroupWriter& g, const Context& c) {
  const dialect::Dialect* gpu = gpu_table(c);
  if (gpu == nullptr) return;
  std::vector<std::string> by{"job", "instance"};
  const std::string_view device = gpu->device_label;
  if (!device.empty()) by.emplace_back(device);
  const auto s = scope(c, by);
  const auto used = dialect::value_expr(*dialect::find_binding(*gpu, Role::kGpuMemoryUsed), s);
  const auto total = dialect::value_expr(*dialect::find_binding(*gpu, Role::kGpuMemoryTotal), s);
  g.record("inferscope:gpu_memory_used_bytes", *used);
  g.record("inferscope:gpu_memory_total_bytes", *total);
  g.record("inferscope:gpu_memory:ratio",
           recorded("inferscope:gpu_memory_used_bytes", c) + " / " + recorded("inferscope:gpu_memory_total_bytes", c));
  if (const MetricBinding* util = dialect::find_binding(*gpu, Role::kGpuUtilization)) {
    g.record("inferscope:gpu_utilization", *dialect::value_expr(*util, s));
  }
}

// ---- alerts -----------------------------------------------------------------------------------

struct Alerts {
  RuleGroupWriter& group;
  const Context& c;
  std::vector<LackingAlert>& lacking;

  void add(AlertRule rule) {
    rule.for_duration = alert_for(c.config, rule.name);
    group.alert(rule);
  }
  void lack(const char* name, std::string reason) {
    group.comment(fmt::format("{} is not generated for this target: {}.", name, reason));
    lacking.push_back({name, std::move(reason)});
  }
};

std::string where(std::string_view what) {
  return fmt::format("{} of {{{{ $labels.job }}}}{{{{ if $labels.model }}}} model {{{{ $labels.model }}}}{{{{ end }}}}", what);
}

std::string slo_text(double seconds) { return common::format_prom_duration(std::chrono::milliseconds(
                                                  static_cast<long long>(seconds * 1000 + 0.5))); }

// latency_reason says why a latency quantile alert is missing for this dialect.
std::string latency_reason(const Context& c, Role role) {
  const MetricBinding* b = dialect::find_binding(c.table, role);
  const std::string what(dialect::to_string(role));
  if (b == nullptr) return fmt::format("{} exposes no {} metric; {}", c.table.title, what, kGatewayHint);
  return fmt::format("{} exposes {} only as {} (means, no quantiles); {}", c.table.title, what,
                     dialect::to_string(b->kind), kGatewayHint);
}

void latency_alert(Alerts& a, const char* name, Role role, const char* quantile, double slo, const char* severity) {
  const Context& c = a.c;
  const MetricBinding* b = dialect::find_binding(c.table, role);
  if (b == nullptr || b->kind != MetricKind::kHistogram) return a.lack(name, latency_reason(c, role));
  const std::string role_name(dialect::to_string(role));
  const std::string series = fmt::format("inferscope:{}_seconds:{}", role_name, quantile);
  const std::string label = role_name == "e2e" ? "e2e latency" : role_name == "ttft" ? "TTFT" : "TPOT";
  AlertRule rule{.name = name,
                 .expr = recorded(series, c) + " > " + dialect::format_number(slo),
                 .severity = severity,
                 .summary = where(label + " " + quantile) + " over its SLO",
                 .description = fmt::format("{} {} is {{{{ $value | humanizeDuration }}}} (SLO {}, from {}).", label,
                                            quantile, slo_text(slo), b->metric)};
  if (role == Role::kE2e) {
    rule.runbook = "Find the stage that grew: inferscope:stage_seconds:p95 by stage (or `inferscope doctor`); "
                   "queue growth with waiting requests up means capacity, one stage alone means a slowdown there.";
  } else if (role == Role::kTtft) {
    rule.runbook = "TTFT = queue + prefill (+ preprocess): check waiting requests, prompt lengths "
                   "(inferscope:prompt_tokens:rate) and prefix-cache hits; then `inferscope doctor`.";
  } else {
    rule.runbook = "TPOT is decode speed: check running batch size, KV usage and preemptions, GPU clocks/thermals; "
                   "then `inferscope doctor`.";
  }
  a.add(std::move(rule));
}

// threshold_alert: `series` is a recorded series name (the job matcher is added) or an expression.
void threshold_alert(Alerts& a, const char* name, Role role, std::string_view series, double threshold,
                     std::string summary, std::string description, std::string runbook) {
  if (!dialect::supports(a.c.table, role)) {
    return a.lack(name, fmt::format("{} exposes no {} metric", a.c.table.title, dialect::to_string(role)));
  }
  a.add({.name = name,
         .expr = (series.find('(') == std::string_view::npos ? recorded(series, a.c) : std::string(series)) + " > " +
                 dialect::format_number(threshold),
         .severity = "warning",
         .summary = std::move(summary),
         .description = std::move(description),
         .runbook = std::move(runbook)});
}

// absent_alerts: one alert per expected latency family, firing while the target is up but the
// family (under its current or any legacy name) is gone: the "renamed after an upgrade" trap.
void absent_alerts(Alerts& a) {
  const Context& c = a.c;
  const MetricBinding* requests = dialect::find_binding(c.table, Role::kRequests);
  std::set<std::string_view> seen;
  const dialect::QueryScope by_instance = scope(c, {"job", "instance"});
  for (const MetricBinding& b : c.table.bindings) {
    if (!dialect::is_latency_role(b.role) || b.presence == dialect::Presence::kOptional ||
        b.presence == dialect::Presence::kFeature) {
      continue;
    }
    if (!seen.insert(b.metric).second) continue;
    std::string expr = fmt::format("up{{{}}} == 1 unless on (job, instance) ({})", c.job_matcher,
                                   dialect::presence_expr(b, by_instance, true));
    if (b.presence == dialect::Presence::kLazy) {
      // Lazy families have no series before the first request: only a target that has served
      // requests can be missing them. "Served" is the request counter above 0, not its mere
      // presence: servers expose their outcome counters at 0 from the start (inferscope and vLLM
      // both do), so presence alone would fire this on every idle server.
      if (requests == nullptr) continue;
      expr += fmt::format(" and on (job, instance) (sum by (job, instance) ({}) > 0)",
                          dialect::series_selector(dialect::presence_series(requests->kind, requests->metric),
                                                  requests->matchers, by_instance.matchers));
    }
    std::string legacy;
    for (const auto& name : b.legacy) legacy += (legacy.empty() ? " (or its older name " : ", ") + std::string(name.name);
    if (!legacy.empty()) legacy += ")";
    a.add({.name = kLatencyMetricsAbsent,
           .expr = std::move(expr),
           .severity = "warning",
           .labels = {{"metric", std::string(b.metric)}},
           .summary = "{{ $labels.instance }} ({{ $labels.job }}) is up but exposes no " + std::string(b.metric),
           .description = fmt::format("Expected {} metric {}{} is absent while the target is up (up = {{{{ $value }}}}): "
                                      "latency panels and alerts on it are silently empty.",
                                      dialect::to_string(b.role), b.metric, legacy),
           .runbook = "A server upgrade often renames metrics (vLLM: gpu_cache_usage_perc -> kv_cache_usage_perc, "
                      "time_per_output_token_seconds -> inter_token_latency_seconds). Run `inferscope doctor "
                      "--check-metrics <url>` to see what the target exposes now."});
  }
}

void throughput_alert(Alerts& a) {
  const Context& c = a.c;
  if (!dialect::supports(c.table, Role::kRequests) || !dialect::supports(c.table, Role::kGenerationTokens)) {
    return a.lack(kThroughputHalved, fmt::format("{} exposes no {} counter", c.table.title,
                                                 dialect::supports(c.table, Role::kRequests) ? "generation-token" : "request"));
  }
  const std::string offset = common::format_prom_duration(c.config.throughput_baseline_offset);
  const std::string tokens = recorded("inferscope:generation_tokens:rate", c);
  const std::string requests = recorded("inferscope:requests:rate", c);
  const SloThresholds& slo = c.config.slo;
  a.add({.name = kThroughputHalved,
         .expr = fmt::format("{0} < {2} * ({0} offset {3}) and on (job, model) "
                             "(abs({1} / ({1} offset {3}) - 1) <= {4})",
                             tokens, requests, dialect::format_number(slo.throughput_drop_ratio), offset,
                             dialect::format_number(slo.same_request_rate_tolerance)),
         .severity = "warning",
         .summary = where("output token throughput") + " fell below " +
                    dialect::format_number(slo.throughput_drop_ratio * 100) + " % of " + offset + " ago",
         .description = "Output is {{ $value | humanize }} tokens/s at about the same request rate as " + offset +
                        " ago: each request now gets fewer tokens per second.",
         .runbook = "Same load, less output: look at TPOT and decode stage time, preemptions and KV usage, GPU "
                    "utilisation and clocks; a shorter-output request mix also shows here (prompt/generation lengths)."});
}

// feature_ratio_alert: a recorded ratio below `drop` times its own value `offset` ago.
void feature_ratio_alert(Alerts& a, const char* name, std::string_view ratio, double drop, std::string extra_condition,
                         std::string summary, std::string description, std::string runbook) {
  const std::string offset = common::format_prom_duration(a.c.config.feature_baseline_offset);
  const std::string now = recorded(ratio, a.c);
  a.add({.name = name,
         .expr = fmt::format("{0} < {1} * ({0} offset {2}){3}", now, dialect::format_number(drop), offset,
                             extra_condition.empty() ? "" : fmt::format(fmt::runtime(extra_condition), now, offset)),
         .severity = "warning",
         .summary = std::move(summary) + " fell below " + dialect::format_number(drop * 100) + " % of " + offset + " ago",
         .description = std::move(description),
         .runbook = std::move(runbook)});
}

void engine_feature_alerts(Alerts& a) {
  const Context& c = a.c;
  const SloThresholds& slo = c.config.slo;
  const dialect::Dialect& t = c.table;
  if (dialect::supports(t, Role::kPrefixCacheHits) && dialect::supports(t, Role::kPrefixCacheQueries)) {
    feature_ratio_alert(
        a, kPrefixCacheHitRateHalved, "inferscope:prefix_cache_hit:ratio", slo.prefix_hit_drop_ratio,
        " and ({0} offset {1}) >= " + dialect::format_number(slo.min_prefix_hit_ratio), where("prefix-cache hit rate"),
        "{{ $value | humanizePercentage }} of prompt tokens hit the prefix cache: every miss is prefill computed again, "
        "so TTFT and engine load rise with it.",
        "A hit rate that falls at the same traffic: a restart or a flush emptied the cache, a router stopped sending "
        "a prefix to the replica that holds it, a prompt template changed its leading text, or the cache is too small "
        "for the prefixes in use (KV usage near full). Then `inferscope doctor` (cause prefix_cache_miss).");
  } else {
    a.lack(kPrefixCacheHitRateHalved, fmt::format("{} exposes no prefix-cache hit and query counters", t.title));
  }
  if (dialect::supports(t, Role::kSpecDraftTokens) && dialect::supports(t, Role::kSpecAcceptedTokens)) {
    feature_ratio_alert(
        a, kSpecDecodeAcceptanceFell, "inferscope:spec_decode_acceptance:ratio", slo.acceptance_drop_ratio, "",
        where("draft-token acceptance"),
        "{{ $value | humanizePercentage }} of draft tokens are accepted: each verify step yields fewer tokens, so "
        "TPOT rises at the same engine speed.",
        "Acceptance follows the draft model and the traffic: compare the draft model or method and the engine version "
        "with the last deploy, and the prompt mix (code, languages) with a day ago. At low acceptance speculation "
        "costs more than it saves: lower --speculative-tokens or turn it off. Then `inferscope doctor` (cause "
        "spec_decode_acceptance_drop).");
  } else {
    a.lack(kSpecDecodeAcceptanceFell, fmt::format("{} exposes no draft and accepted token counters", t.title));
  }
  if (dialect::supports(t, Role::kLoraWaitingRequests)) {
    a.add({.name = kLoraRequestsWaiting,
           .expr = recorded("inferscope:lora_waiting", c) + " > 0",
           .severity = "warning",
           .summary = where("requests") + " wait for a LoRA adapter slot",
           .description = "{{ $value }} requests wait because every adapter slot holds another adapter.",
           .runbook = "More adapters are in use than --max-loras slots: each swap loads an adapter and the requests "
                      "of evicted adapters wait. Raise --max-loras (GPU memory permitting), route an adapter's "
                      "requests to fewer replicas, or merge rarely used adapters. Then `inferscope doctor` (cause "
                      "lora_adapter_thrash)."});
  } else {
    a.lack(kLoraRequestsWaiting, fmt::format("{} exposes no count of requests waiting for an adapter", t.title));
  }
  if (rank_table(c) != nullptr) {
    // Each rank against the mean of the others: a median of two ranks would hide the slow one.
    const std::string rank = recorded("inferscope:engine_e2e_seconds:p99", c);
    const std::string others =
        fmt::format("((sum by (job) ({0}) - on (job) group_right {0}) / on (job) group_left () (count by (job) ({0}) - 1))",
                    rank);
    a.add({.name = kEngineRankSlow,
           .expr = fmt::format("{} > {} * {}", rank, dialect::format_number(slo.rank_tail_ratio), others),
           .severity = "warning",
           .summary = "engine rank {{ $labels.engine }} of {{ $labels.job }} has a slower e2e p99 than its peers",
           .description = fmt::format("Rank {{{{ $labels.engine }}}} answers its p99 in {{{{ $value | humanizeDuration }}}}, "
                                      "over {}x the mean p99 of the other ranks of the job.",
                                      dialect::format_number(slo.rank_tail_ratio)),
           .runbook = "One data-parallel rank slower than its peers is its GPU or its load: check that GPU's clocks, "
                      "thermals and errors (DCGM gpu label), and whether the rank holds more long requests "
                      "(vllm:num_requests_running by engine). Then `inferscope doctor` (replica_slowdown with "
                      "where.engine)."});
  } else {
    a.lack(kEngineRankSlow, fmt::format("{} exposes no per-rank latency (vLLM's engine label)", t.title));
  }
}

// disaggregation_alerts: a fleet with a router in front of prefill and decode pools. Each only
// where the dialect has the series (docs/disaggregation.md lists them per dialect).
void disaggregation_alerts(Alerts& a) {
  const Context& c = a.c;
  const SloThresholds& slo = c.config.slo;
  const dialect::Dialect& t = c.table;
  const std::string fleet = "{{ $labels.job }}";
  if (dialect::supports(t, Role::kKvTransferBytes) && dialect::supports(t, Role::kKvTransfer)) {
    feature_ratio_alert(
        a, kKvTransferBandwidthHalved, "inferscope:kv_transfer_bytes_per_second:mean", slo.kv_bandwidth_drop_ratio, "",
        "KV transfer bandwidth of " + fleet,
        "Prefill -> decode KV transfers move {{ $value | humanize1024 }}B/s: each request's transfer takes longer for "
        "the same bytes, and its TTFT with it.",
        "Same bytes, slower transfers: the link between the prefill and decode workers (an RDMA path fallen back to "
        "TCP, a congested or flapping NIC, a transfer backend change in the last deploy); compare "
        "inferscope:kv_transfer_seconds:p99 with the bytes per transfer, and the failed transfers. Then `inferscope "
        "doctor` (cause kv_transfer_slowdown).");
  } else {
    a.lack(kKvTransferBandwidthHalved, fmt::format("{} exposes no KV transfer time and bytes", t.title));
  }
  if (dialect::supports(t, Role::kPoolWaiting)) {
    a.add({.name = kPoolRequestsWaiting,
           .expr = recorded("inferscope:pool_waiting", c) + " > " + dialect::format_number(slo.waiting_requests),
           .severity = "warning",
           .summary = "requests wait in the {{ $labels.pool }} pool of " + fleet,
           .description = fmt::format("{{{{ $value }}}} requests wait in the {{{{ $labels.pool }}}} pool (threshold {}, "
                                      "from {}).",
                                      dialect::format_number(slo.waiting_requests),
                                      dialect::find_binding(t, Role::kPoolWaiting)->metric),
           .runbook = "One pool's queue growing while the other's stays flat is a prefill:decode ratio that no longer "
                      "fits the traffic: long prompts load the prefill pool, long answers the decode pool. Check the "
                      "pool's workers (one may have left), the prompt and answer lengths against a day ago, then move "
                      "workers between the pools or scale the short one. Then `inferscope doctor` (causes "
                      "prefill_pool_saturated, decode_pool_saturated)."});
  } else {
    a.lack(kPoolRequestsWaiting, fmt::format("{} exposes no per-pool waiting requests", t.title));
  }
  if (dialect::supports(t, Role::kEndpointLoad)) {
    const std::string load = recorded("inferscope:endpoint_load", c);
    a.add({.name = kEndpointLoadSkewed,
           .expr = fmt::format("{} > {} and on (job, pool) (avg by (job, pool) ({}) >= 1)",
                               recorded("inferscope:endpoint_load:spread", c),
                               dialect::format_number(slo.endpoint_spread_ratio), load),
           .severity = "warning",
           .summary = "one endpoint of the {{ $labels.pool }} pool of " + fleet + " carries more than its share",
           .description = fmt::format("The busiest endpoint of the {{{{ $labels.pool }}}} pool carries {{{{ $value | "
                                      "printf \"%.2f\" }}}}x the pool's mean load (threshold {}x, from {}).",
                                      dialect::format_number(slo.endpoint_spread_ratio),
                                      dialect::find_binding(t, Role::kEndpointLoad)->metric),
           .runbook = "Peers of one pool should share its load: look at the router's decisions per endpoint (a "
                      "prefix-affinity or session pin sending one hot prefix to one worker, an endpoint the router "
                      "still thinks is idle), and whether the busiest endpoint is also slower. inferscope:endpoint_load "
                      "shows each endpoint. Then `inferscope doctor` (cause routing_imbalance)."});
  } else {
    a.lack(kEndpointLoadSkewed, fmt::format("{} exposes no per-endpoint load", t.title));
  }
}

void target_down_alert(Alerts& a) {
  a.add({.name = kTargetDown,
         .expr = fmt::format("up{{{}}} == 0", a.c.job_matcher),
         .severity = "critical",
         .summary = "{{ $labels.instance }} ({{ $labels.job }}) is down",
         .description = "Prometheus cannot scrape {{ $labels.instance }} of job {{ $labels.job }} (up = {{ $value }}).",
         .runbook = "Check that the server process runs and listens; `inferscope up --status` shows the last scrape "
                    "error; Prometheus /targets has it too."});
}

std::string error_runbook(const MetricBinding& errors) {
  const std::string tail = "check the server log; overload errors (429/503) go with a full queue.";
  if (errors.kind_label.empty()) return "Errors of " + std::string(errors.metric) + " carry no kind label: " + tail;
  return "Break errors down by kind (" + std::string(errors.kind_label) + " label); " + tail;
}

void serving_alerts(Alerts& a) {
  const Context& c = a.c;
  const SloThresholds& slo = c.config.slo;
  latency_alert(a, kE2eP99OverSlo, Role::kE2e, "p99", slo.e2e_p99_seconds, "critical");
  latency_alert(a, kE2eP95OverSlo, Role::kE2e, "p95", slo.e2e_p95_seconds, "warning");
  latency_alert(a, kTtftP95OverSlo, Role::kTtft, "p95", slo.ttft_p95_seconds, "warning");
  latency_alert(a, kTpotP95OverSlo, Role::kTpot, "p95", slo.tpot_p95_seconds, "warning");
  threshold_alert(a, kRequestsWaiting, Role::kWaiting, "inferscope:waiting", slo.waiting_requests,
                  where("waiting requests"),
                  fmt::format("{{{{ $value }}}} requests are waiting to be scheduled (threshold {}).",
                              dialect::format_number(slo.waiting_requests)),
                  "Requests queue faster than they are served: compare request rate with its baseline (load surge), "
                  "check running batch size and KV usage (capacity), then scale out or lower max tokens.");
  if (auto ratio = dialect::error_ratio_expr(c.table, scope(c, model_by(c)))) {
    a.add({.name = kErrorRatioHigh,
           .expr = recorded("inferscope:errors:ratio", c) + " > " + dialect::format_number(slo.error_ratio),
           .severity = "critical",
           .summary = where("error ratio") + " is high",
           .description = fmt::format("{{{{ $value | humanizePercentage }}}} of requests fail (threshold {}).",
                                      dialect::format_number(slo.error_ratio * 100) + " %"),
           .runbook = error_runbook(*dialect::find_binding(c.table, Role::kErrors))});
  } else {
    a.lack(kErrorRatioHigh, fmt::format("{} exposes no request/error counters; {}", c.table.title, kGatewayHint));
  }
  // A saturated cache oscillates (full, preempt, refill): judge its peak over the rate window,
  // so a cache that keeps hitting full fires although single scrapes dip below the threshold.
  threshold_alert(a, kKvCacheFull, Role::kKvUsage,
                  "max_over_time(" + recorded("inferscope:kv_usage", c) + "[" + c.window + "])", slo.kv_cache_usage,
                  where("KV-cache usage") + " is near full",
                  "KV cache reached {{ $value | humanizePercentage }} in the last " + c.window + " (threshold " +
                      dialect::format_number(slo.kv_cache_usage * 100) + " %).",
                  "A full KV cache causes preemptions and queueing: lower --max-num-seqs or --max-model-len, raise "
                  "--gpu-memory-utilization, enable prefix caching, or scale out.");
  threshold_alert(a, kPreemptionsRising, Role::kPreemptions, "inferscope:preemptions:rate",
                  slo.preemptions_per_second, where("preemptions"),
                  "{{ printf \"%.2f\" $value }} preemptions per second: sequences are evicted and recomputed.",
                  "Preemptions mean KV-cache pressure: see KV usage and the running batch; lower concurrency or "
                  "context length, or add capacity.");
}

void gpu_alert(Alerts& a) {
  const Context& c = a.c;
  if (gpu_table(c) == nullptr) {
    return a.lack(kGpuMemoryHigh, fmt::format("{} exposes no GPU metrics: add a dcgm-exporter target (kind dcgm)",
                                              c.table.title));
  }
  a.add({.name = kGpuMemoryHigh,
         .expr = recorded("inferscope:gpu_memory:ratio", c) + " > " + dialect::format_number(c.config.slo.gpu_memory_ratio),
         .severity = "warning",
         .summary = "GPU memory of {{ $labels.instance }} ({{ $labels.job }}) is nearly full",
         .description = "GPU memory is {{ $value | humanizePercentage }} used (threshold " +
                        dialect::format_number(c.config.slo.gpu_memory_ratio * 100) + " %).",
         .runbook = "Look for another process on the GPU, a memory leak, or a --gpu-memory-utilization set too high."});
}

bool is_serving(DialectId id) { return id != DialectId::kDcgm && id != DialectId::kNode; }

}  // namespace

std::chrono::milliseconds alert_for(const RulesConfig& config, const std::string& name) {
  auto it = config.alert_for.find(name);
  return it != config.alert_for.end() ? it->second : default_for(name);
}

TargetRules build_target_rules(const RulesTarget& target, const RulesConfig& config) {
  TargetRules out;
  RuleGroupWriter group("inferscope-target-" + target.job, config.evaluation_interval);
  if (!target.dialect) {
    group.comment("Dialect of job " + target.job + " unknown (auto-detection found none): only the generic alerts.");
    const DialectId any = DialectId::kInferscope;
    Context c{target, config, any, dialect::dialect(any), "job=" + dialect::promql_string(target.job),
              common::format_prom_duration(config.rate_window)};
    Alerts a{group, c, out.lacking};
    target_down_alert(a);
    for (const char* name : kTargetAlerts) {
      if (std::string_view(name) != kTargetDown) out.lacking.push_back({name, "dialect of the target not detected"});
    }
    out.group_text = group.text();
    return out;
  }
  const DialectId id = *target.dialect;
  const dialect::Dialect& table = target.custom ? target.custom->table() : dialect::dialect(id);
  Context c{target, config, id, table, "job=" + dialect::promql_string(target.job),
            common::format_prom_duration(config.rate_window)};
  group.comment(fmt::format("Job {}: {} (dialect {}). Recorded series carry job and model.", target.job,
                            c.table.title, dialect::to_string(id)));
  if (target.custom) {
    std::string unmapped;
    for (Role role : target.custom->unmapped_roles()) unmapped += (unmapped.empty() ? "" : ", ") + std::string(dialect::to_string(role));
    if (!unmapped.empty()) group.comment("Roles its mapping lacks (no rules, panels or doctor evidence for them): " + unmapped + ".");
  }
  record_latency(group, c);
  record_stages(group, c);
  record_traffic_and_capacity(group, c);
  record_disaggregation(group, c);
  record_engine_features(group, c);
  record_gpu(group, c);
  Alerts a{group, c, out.lacking};
  target_down_alert(a);
  absent_alerts(a);
  if (is_serving(id)) {
    serving_alerts(a);
    gpu_alert(a);
    throughput_alert(a);
    engine_feature_alerts(a);
    disaggregation_alerts(a);
  } else if (gpu_table(c) != nullptr) {
    gpu_alert(a);
  }
  out.group_text = group.text();
  return out;
}

}  // namespace inferscope::alerts
