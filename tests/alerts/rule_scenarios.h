// File: tests/alerts/rule_scenarios.h
// The alert catalog's `promtool test rules` inputs: synthetic series in each dialect's own names
// (and the queue collector's), scenarios that must not fire on a spike shorter than `for`, fire on
// a sustained condition with the expected labels and annotations, and resolve; rendered as the
// `tests:` of a promtool test file. Shared by the rule-file test (tests/alerts) and the
// PrometheusRule export test (tests/up), so both run the same inputs against their form of a file.
// Example: std::string t = dialect_alert_tests({DialectId::kVllm, "t-vllm"}, file, tested);
// Test code only; pure text building, thread-compatible.
#pragma once

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "alerts/rules_generator.h"
#include "dialect/dialect.h"
#include "dialect/promql.h"

namespace inferscope::alerts::rule_scenarios {

using dialect::DialectId;
using dialect::MetricBinding;
using dialect::Role;
using Labels = std::map<std::string, std::string>;
using namespace std::chrono_literals;

inline constexpr int kSteps = 121;               // 30 minutes of samples, 15 s apart
inline constexpr const char* kInstance = "127.0.0.1:9000";
inline constexpr const char* kModel = "m";

// The standard timeline: a 1-minute spike at 5m (shorter than the 3m `for`, even with the 1m rate
// window smearing it) and a sustained condition from 10m to 20m.
inline bool standard_bad(int step) { return (step >= 20 && step < 24) || (step >= 40 && step < 80); }

inline std::string number(double v) { return dialect::format_number(v); }

inline std::string yaml_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

inline std::string selector(const std::string& name, const Labels& labels) {
  std::string out = name + "{";
  bool first = true;
  for (const auto& [k, v] : labels) {
    out += (first ? "" : ",") + k + "=\"" + v + "\"";  // test values need no escaping
    first = false;
  }
  return out + "}";
}

// Series is one input series with a value (or nothing) per step.
struct Series {
  std::string name;
  Labels labels;
  std::vector<std::optional<double>> values;
};

// Scenario is one `tests:` entry: input series plus expected alerts at evaluation times.
struct Scenario {
  std::string alert;
  std::vector<Series> series;
  std::vector<std::pair<std::string, bool>> checks;  // eval time, whether the alert fires then
  Labels labels;                                     // expected labels when firing (alertname implied)
  Labels annotations;                                // expected annotations when firing
};

inline std::vector<std::pair<std::string, bool>> standard_checks() {
  return {{"6m", false}, {"7m", false}, {"8m", false}, {"11m30s", false}, {"14m", true}, {"19m", true},
          {"22m", false}, {"25m", false}};
}

// baseline_dip is the schedule of the alerts that compare a series with its own value 5m ago
// (test_config's baseline offset): bad during a 1m dip at 7m and from 16m to 28m (15 s steps).
inline bool baseline_dip(int step) { return (step >= 28 && step < 32) || (step >= 64 && step < 112); }

// baseline_dip_checks: the 1m dip never fires; the long one holds from about 17m (rate window
// fully in the dip) to about 21m45s (baseline window reaches it), so fires from 20m.
inline std::vector<std::pair<std::string, bool>> baseline_dip_checks() {
  return {{"8m", false}, {"9m", false}, {"18m30s", false}, {"20m30s", true}, {"23m", false}, {"29m", false}};
}

inline Series counter(const std::string& name, Labels labels, const std::function<double(int)>& increment) {
  Series s{name, std::move(labels), {}};
  double total = 0;
  for (int step = 0; step < kSteps; ++step) {
    if (step > 0) total += increment(step);
    s.values.push_back(total);
  }
  return s;
}

inline Series gauge(const std::string& name, Labels labels, const std::function<double(int)>& value) {
  Series s{name, std::move(labels), {}};
  for (int step = 0; step < kSteps; ++step) s.values.push_back(value(step));
  return s;
}

// fixed_labels turns a binding's `=` matchers into labels (`!=` ones are satisfied by omission).
inline Labels fixed_labels(const MetricBinding& b) {
  Labels out;
  std::string_view text = b.matchers;
  while (!text.empty()) {
    const auto comma = text.find(",");
    const std::string_view part = text.substr(0, comma);
    const auto eq = part.find("=\"");
    if (eq != std::string_view::npos && (eq == 0 || part[eq - 1] != '!')) {
      out[std::string(part.substr(0, eq))] = std::string(part.substr(eq + 2, part.size() - eq - 3));
    }
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return out;
}

// Target is one dialect under test with the labels its series carry.
struct Target {
  DialectId id;
  std::string job;
  Labels base() const {
    Labels l{{"job", job}, {"instance", kInstance}};
    const auto& d = dialect::dialect(id);
    if (!d.model_label.empty()) l[std::string(d.model_label)] = kModel;
    if (id == DialectId::kVllm) l["engine"] = "0";
    return l;
  }
  Labels series_labels(const MetricBinding& b) const {
    Labels l = base();
    for (const auto& [k, v] : fixed_labels(b)) l[k] = v;
    return l;
  }
  // alert_labels: labels of an alert on a per-model recorded series.
  Labels model_alert_labels(const std::string& severity) const {
    Labels l{{"job", job}, {"severity", severity}};
    if (!dialect::dialect(id).model_label.empty()) l["model"] = kModel;
    return l;
  }
  std::string where(const std::string& what) const {
    return what + " of " + job + (dialect::dialect(id).model_label.empty() ? "" : std::string(" model ") + kModel);
  }
};

// histogram: 10 observations per step, <= 0.05 s when good, in (10 s, 60 s] when bad; bucket
// bounds in the binding's raw unit (Triton's ms histogram gets 50, 10000, 60000).
inline std::vector<Series> histogram(const Target& t, const MetricBinding& b, const std::function<bool(int)>& bad) {
  const std::string base(b.metric);
  std::vector<Series> out;
  const Labels labels = t.series_labels(b);
  for (double le : {0.05, 10.0, 60.0, static_cast<double>(INFINITY)}) {
    Labels bucket = labels;
    bucket["le"] = std::isinf(le) ? "+Inf" : number(le / b.scale);
    out.push_back(counter(base + "_bucket", bucket, [&, le](int step) {
      return bad(step) ? (le >= 60 ? 10.0 : 0.0) : 10.0;
    }));
  }
  out.push_back(counter(base + "_sum", labels, [&](int step) { return (bad(step) ? 10 * 30.0 : 10 * 0.02) / b.scale; }));
  out.push_back(counter(base + "_count", labels, [](int) { return 10.0; }));
  return out;
}

inline Series up_series(const Target& t, const std::function<bool(int)>& down) {
  return gauge("up", {{"job", t.job}, {"instance", kInstance}}, [&](int step) { return down(step) ? 0.0 : 1.0; });
}

inline constexpr const char* kRunbookE2e =
    "Find the stage that grew: inferscope:stage_seconds:p95 by stage (or `inferscope doctor`); queue growth with "
    "waiting requests up means capacity, one stage alone means a slowdown there.";

inline Scenario latency_scenario(const Target& t, const char* alert, Role role, double q, const char* slo_text,
                          const char* severity) {
  const MetricBinding& b = *dialect::find_binding(t.id, role);
  const std::string label = role == Role::kE2e ? "e2e latency" : role == Role::kTtft ? "TTFT" : "TPOT";
  const std::string qname = q == 0.99 ? "p99" : "p95";
  Scenario s{alert, histogram(t, b, standard_bad), standard_checks(), t.model_alert_labels(severity), {}};
  char value[32];
  std::snprintf(value, sizeof value, "%.4gs", 10 + 50 * q);  // Go's humanizeDuration below a minute
  s.annotations["summary"] = t.where(label + " " + qname) + " over its SLO";
  s.annotations["description"] = label + " " + qname + " is " + value + " (SLO " + slo_text + ", from " +
                                 std::string(b.metric) + ").";
  if (role == Role::kE2e) {
    s.annotations["runbook"] = kRunbookE2e;
  } else if (role == Role::kTtft) {
    s.annotations["runbook"] =
        "TTFT = queue + prefill (+ preprocess): check waiting requests, prompt lengths "
        "(inferscope:prompt_tokens:rate) and prefix-cache hits; then `inferscope doctor`.";
  } else {
    s.annotations["runbook"] =
        "TPOT is decode speed: check running batch size, KV usage and preemptions, GPU clocks/thermals; then "
        "`inferscope doctor`.";
  }
  return s;
}

inline Scenario waiting_scenario(const Target& t) {
  const MetricBinding& b = *dialect::find_binding(t.id, Role::kWaiting);
  Scenario s{kRequestsWaiting,
             {gauge(std::string(b.metric), t.series_labels(b), [](int step) { return standard_bad(step) ? 30.0 : 2.0; })},
             standard_checks(),
             t.model_alert_labels("warning"),
             {}};
  s.annotations = {{"summary", t.where("waiting requests")},
                   {"description", "30 requests are waiting to be scheduled (threshold 20)."},
                   {"runbook", "Requests queue faster than they are served: compare request rate with its baseline "
                               "(load surge), check running batch size and KV usage (capacity), then scale out or "
                               "lower max tokens."}};
  return s;
}

// error_series: 3 good requests per step, plus 1 failed one per step while bad (ratio 0.25).
inline std::vector<Series> error_series(const Target& t) {
  const MetricBinding& requests = *dialect::find_binding(t.id, Role::kRequests);
  const MetricBinding& errors = *dialect::find_binding(t.id, Role::kErrors);
  auto bad_increment = [](int step) { return standard_bad(step) ? 1.0 : 0.0; };
  Labels failed = t.series_labels(errors);
  if (!failed.count(std::string(errors.kind_label))) failed[std::string(errors.kind_label)] = "5xx";
  if (errors.metric == requests.metric) {  // one counter, errors are a labelled subset
    Labels good = failed;
    for (auto& [k, v] : good) {
      if (fixed_labels(errors).count(k)) v = "stop";
    }
    if (good[std::string(errors.kind_label)] == "5xx") good[std::string(errors.kind_label)] = "2xx";
    return {counter(std::string(requests.metric), good, [](int) { return 3.0; }),
            counter(std::string(errors.metric), failed, bad_increment)};
  }
  const bool disjoint = dialect::dialect(t.id).error_accounting == dialect::ErrorAccounting::kDisjointFromRequests;
  return {counter(std::string(requests.metric), t.series_labels(requests),
                  [&](int step) { return 3.0 + (disjoint ? 0.0 : bad_increment(step)); }),
          counter(std::string(errors.metric), failed, bad_increment)};
}

inline Scenario error_scenario(const Target& t) {
  Scenario s{kErrorRatioHigh, error_series(t), standard_checks(), t.model_alert_labels("critical"), {}};
  s.annotations = {{"summary", t.where("error ratio") + " is high"},
                   {"description", "25% of requests fail (threshold 5 %)."},
                   {"runbook", "Break errors down by kind (" +
                                   std::string(dialect::find_binding(t.id, Role::kErrors)->kind_label) +
                                   " label); check the server log; overload errors (429/503) go with a full queue."}};
  return s;
}

inline Scenario kv_scenario(const Target& t) {
  const MetricBinding& b = *dialect::find_binding(t.id, Role::kKvUsage);
  Scenario s{kKvCacheFull,
             {gauge(std::string(b.metric), t.series_labels(b), [](int step) { return standard_bad(step) ? 0.98 : 0.5; })},
             standard_checks(),
             t.model_alert_labels("warning"),
             {}};
  s.annotations = {{"summary", t.where("KV-cache usage") + " is near full"},
                   {"description", "KV cache reached 98% in the last 1m (threshold 95 %)."},
                   {"runbook", "A full KV cache causes preemptions and queueing: lower --max-num-seqs or "
                               "--max-model-len, raise --gpu-memory-utilization, enable prefix caching, or scale out."}};
  return s;
}

inline Scenario preemption_scenario(const Target& t) {
  const MetricBinding& b = *dialect::find_binding(t.id, Role::kPreemptions);
  Scenario s{kPreemptionsRising,
             {counter(std::string(b.metric), t.series_labels(b), [](int step) { return standard_bad(step) ? 3.0 : 0.0; })},
             standard_checks(),
             t.model_alert_labels("warning"),
             {}};
  s.annotations = {{"summary", t.where("preemptions")},
                   {"description", "0.20 preemptions per second: sequences are evicted and recomputed."},
                   {"runbook", "Preemptions mean KV-cache pressure: see KV usage and the running batch; lower "
                               "concurrency or context length, or add capacity."}};
  return s;
}

inline Scenario gpu_scenario(const Target& t) {
  const DialectId gpu = t.id == DialectId::kInferscope ? DialectId::kDcgm : t.id;
  const std::string device(dialect::dialect(gpu).device_label);
  Labels labels{{"job", t.job}, {"instance", kInstance}, {device, "0"}};
  Scenario s{kGpuMemoryHigh, {}, standard_checks(), {{"job", t.job}, {"instance", kInstance}, {device, "0"}, {"severity", "warning"}}, {}};
  auto used = [](int step) { return standard_bad(step) ? 950.0 : 100.0; };
  if (gpu == DialectId::kDcgm) {
    s.series = {gauge("DCGM_FI_DEV_FB_USED", labels, used),
                gauge("DCGM_FI_DEV_FB_FREE", labels, [&](int step) { return 1000.0 - used(step); })};
  } else {
    s.series = {gauge("nv_gpu_memory_used_bytes", labels, [&](int step) { return used(step) * 1e6; }),
                gauge("nv_gpu_memory_total_bytes", labels, [](int) { return 1e9; })};
  }
  s.annotations = {{"summary", std::string("GPU memory of ") + kInstance + " (" + t.job + ") is nearly full"},
                   {"description", "GPU memory is 95% used (threshold 90 %)."},
                   {"runbook", "Look for another process on the GPU, a memory leak, or a --gpu-memory-utilization "
                               "set too high."}};
  return s;
}

// Throughput: 1 request/s throughout; 100 output tokens/s, 40/s during a 1m dip at 7m and from 16m
// to 28m. With the 1m rate window and a 5m baseline offset the condition holds from about 17m
// (window fully in the dip) to about 21m45s (baseline window reaches the dip): firing from 20m.
inline Scenario throughput_scenario(const Target& t) {
  const MetricBinding& requests = *dialect::find_binding(t.id, Role::kRequests);
  const MetricBinding& tokens = *dialect::find_binding(t.id, Role::kGenerationTokens);
  Labels request_labels = t.series_labels(requests);
  Scenario s{kThroughputHalved,
             {counter(std::string(requests.metric), request_labels, [](int) { return 15.0; }),
              counter(std::string(tokens.metric), t.series_labels(tokens),
                      [](int step) { return baseline_dip(step) ? 600.0 : 1500.0; })},
             baseline_dip_checks(),
             t.model_alert_labels("warning"),
             {}};
  s.annotations = {{"summary", t.where("output token throughput") + " fell below 50 % of 5m ago"},
                   {"description", "Output is 40 tokens/s at about the same request rate as 5m ago: each request "
                                   "now gets fewer tokens per second."},
                   {"runbook", "Same load, less output: look at TPOT and decode stage time, preemptions and KV "
                               "usage, GPU utilisation and clocks; a shorter-output request mix also shows here "
                               "(prompt/generation lengths)."}};
  return s;
}

// A ratio of two counters (prefix-cache hits over queries, accepted over draft tokens): the
// denominator steady at 100/s, the numerator at `good` of it, `bad` during a 1m dip at 7m and from
// 16m to 28m. Against its own value 5m ago (test_config's feature_baseline_offset) the condition
// holds from about 17m to about 21m45s, as the throughput scenario's: firing from 20m.
inline Scenario feature_ratio_scenario(const Target& t, const char* alert, Role numerator, Role denominator,
                                       double good, double bad) {
  const MetricBinding& num = *dialect::find_binding(t.id, numerator);
  const MetricBinding& den = *dialect::find_binding(t.id, denominator);
  return Scenario{alert,
                  {counter(std::string(den.metric), t.series_labels(den), [](int) { return 1500.0; }),
                   counter(std::string(num.metric), t.series_labels(num),
                           [&](int step) { return 1500.0 * (baseline_dip(step) ? bad : good); })},
                  baseline_dip_checks(),
                  t.model_alert_labels("warning"),
                  {}};
}

inline Scenario prefix_hit_scenario(const Target& t) {
  Scenario s = feature_ratio_scenario(t, kPrefixCacheHitRateHalved, Role::kPrefixCacheHits, Role::kPrefixCacheQueries,
                                      0.6, 0.1);
  s.annotations = {
      {"summary", t.where("prefix-cache hit rate") + " fell below 50 % of 5m ago"},
      {"description", "10% of prompt tokens hit the prefix cache: every miss is prefill computed again, so TTFT and "
                      "engine load rise with it."},
      {"runbook", "A hit rate that falls at the same traffic: a restart or a flush emptied the cache, a router stopped "
                  "sending a prefix to the replica that holds it, a prompt template changed its leading text, or the "
                  "cache is too small for the prefixes in use (KV usage near full). Then `inferscope doctor` (cause "
                  "prefix_cache_miss)."}};
  return s;
}

inline Scenario acceptance_scenario(const Target& t) {
  Scenario s = feature_ratio_scenario(t, kSpecDecodeAcceptanceFell, Role::kSpecAcceptedTokens, Role::kSpecDraftTokens,
                                      0.7, 0.2);
  s.annotations = {
      {"summary", t.where("draft-token acceptance") + " fell below 70 % of 5m ago"},
      {"description", "20% of draft tokens are accepted: each verify step yields fewer tokens, so TPOT rises at the "
                      "same engine speed."},
      {"runbook", "Acceptance follows the draft model and the traffic: compare the draft model or method and the "
                  "engine version with the last deploy, and the prompt mix (code, languages) with a day ago. At low "
                  "acceptance speculation costs more than it saves: lower --speculative-tokens or turn it off. Then "
                  "`inferscope doctor` (cause spec_decode_acceptance_drop)."}};
  return s;
}

inline Scenario lora_waiting_scenario(const Target& t) {
  const MetricBinding& b = *dialect::find_binding(t.id, Role::kLoraWaitingRequests);
  Scenario s{kLoraRequestsWaiting,
             {gauge(std::string(b.metric), t.series_labels(b), [](int step) { return standard_bad(step) ? 3.0 : 0.0; })},
             standard_checks(),
             t.model_alert_labels("warning"),
             {}};
  s.annotations = {
      {"summary", t.where("requests") + " wait for a LoRA adapter slot"},
      {"description", "3 requests wait because every adapter slot holds another adapter."},
      {"runbook", "More adapters are in use than --max-loras slots: each swap loads an adapter and the requests of "
                  "evicted adapters wait. Raise --max-loras (GPU memory permitting), route an adapter's requests to "
                  "fewer replicas, or merge rarely used adapters. Then `inferscope doctor` (cause "
                  "lora_adapter_thrash)."}};
  return s;
}

// Three data-parallel ranks (vLLM's engine label, also in inferscope serve's vllm:* families); rank 1 answers in (10 s, 60 s] while bad, the
// others always in 50 ms: its p99 is hundreds of times its peers' mean.
inline Scenario rank_slow_scenario(const Target& t) {
  // inferscope serve's ranks are in the vLLM families it exposes beside its own.
  const MetricBinding& b =
      *dialect::find_binding(t.id == DialectId::kInferscope ? DialectId::kVllm : t.id, Role::kE2e);
  Scenario s{kEngineRankSlow, {}, standard_checks(), {{"job", t.job}, {"engine", "1"}, {"severity", "warning"}}, {}};
  for (const char* rank : {"0", "1", "2"}) {
    const bool slowed = std::string_view(rank) == "1";
    for (Series& series : histogram(t, b, [&](int step) { return slowed && standard_bad(step); })) {
      series.labels["engine"] = rank;
      s.series.push_back(std::move(series));
    }
  }
  s.annotations = {
      {"summary", "engine rank 1 of " + t.job + " has a slower e2e p99 than its peers"},
      {"description", "Rank 1 answers its p99 in 59.5s, over 2x the mean p99 of the other ranks of the job."},
      {"runbook", "One data-parallel rank slower than its peers is its GPU or its load: check that GPU's clocks, "
                  "thermals and errors (DCGM gpu label), and whether the rank holds more long requests "
                  "(vllm:num_requests_running by engine). Then `inferscope doctor` (replica_slowdown with "
                  "where.engine)."}};
  return s;
}

// KV transfers of 64 MiB, 1 per second, each taking 31.25 ms (2 GiB/s); 125 ms (512 MiB/s) during
// a 1m dip at 7m and from 16m to 28m. The bandwidth is a ratio against its own value 5m ago like
// the feature ratios: firing from 20m.
inline Scenario kv_bandwidth_scenario(const Target& t) {
  const MetricBinding& seconds = *dialect::find_binding(t.id, Role::kKvTransfer);
  const MetricBinding& bytes = *dialect::find_binding(t.id, Role::kKvTransferBytes);
  Scenario s{kKvTransferBandwidthHalved,
             {counter(std::string(seconds.metric) + "_sum", t.series_labels(seconds),
                      [](int step) { return 15 * (baseline_dip(step) ? 0.125 : 0.03125); }),
              counter(std::string(seconds.metric) + "_count", t.series_labels(seconds), [](int) { return 15.0; }),
              counter(std::string(bytes.metric) + "_sum", t.series_labels(bytes), [](int) { return 15 * 67108864.0; }),
              counter(std::string(bytes.metric) + "_count", t.series_labels(bytes), [](int) { return 15.0; })},
             baseline_dip_checks(),
             // Per model where both histograms carry the model label; per job where one does not (serve's bytes).
             bytes.no_model_label == seconds.no_model_label ? t.model_alert_labels("warning")
                                                            : Labels{{"job", t.job}, {"severity", "warning"}},
             {}};
  s.annotations = {
      {"summary", "KV transfer bandwidth of " + t.job + " fell below 50 % of 5m ago"},
      {"description", "Prefill -> decode KV transfers move 512MiB/s: each request's transfer takes longer for the "
                      "same bytes, and its TTFT with it."},
      {"runbook", "Same bytes, slower transfers: the link between the prefill and decode workers (an RDMA path fallen "
                  "back to TCP, a congested or flapping NIC, a transfer backend change in the last deploy); compare "
                  "inferscope:kv_transfer_seconds:p99 with the bytes per transfer, and the failed transfers. Then "
                  "`inferscope doctor` (cause kv_transfer_slowdown)."}};
  return s;
}

// The prefill pool holds 30 waiting requests while bad (2 otherwise); the decode pool none.
inline Scenario pool_waiting_scenario(const Target& t) {
  const MetricBinding& b = *dialect::find_binding(t.id, Role::kPoolWaiting);
  const std::string pool_label(b.kind_label);
  Labels prefill = t.series_labels(b), decode = t.series_labels(b);
  prefill[pool_label] = "prefill";
  decode[pool_label] = "decode";
  Scenario s{kPoolRequestsWaiting,
             {gauge(std::string(b.metric), prefill, [](int step) { return standard_bad(step) ? 30.0 : 2.0; }),
              gauge(std::string(b.metric), decode, [](int) { return 0.0; })},
             standard_checks(),
             {{"job", t.job}, {"pool", "prefill"}, {"severity", "warning"}},
             {}};
  s.annotations = {
      {"summary", "requests wait in the prefill pool of " + t.job},
      {"description", "30 requests wait in the prefill pool (threshold 20, from " + std::string(b.metric) + ")."},
      {"runbook", "One pool's queue growing while the other's stays flat is a prefill:decode ratio that no longer fits "
                  "the traffic: long prompts load the prefill pool, long answers the decode pool. Check the pool's "
                  "workers (one may have left), the prompt and answer lengths against a day ago, then move workers "
                  "between the pools or scale the short one. Then `inferscope doctor` (causes prefill_pool_saturated, "
                  "decode_pool_saturated)."}};
  return s;
}

// Two decode endpoints share 6 units of load evenly (spread 1); while bad, all of it is on the
// first (busiest / mean = 2, over the 1.5 threshold). The prefill endpoint is alone in its pool.
inline Scenario endpoint_skew_scenario(const Target& t) {
  const MetricBinding& b = *dialect::find_binding(t.id, Role::kEndpointLoad);
  const std::string pool_label(dialect::dialect(t.id).pool_label), endpoint_label(b.kind_label);
  Scenario s{kEndpointLoadSkewed, {}, standard_checks(), {{"job", t.job}, {"pool", "decode"}, {"severity", "warning"}}, {}};
  for (auto [pool, endpoint] : {std::pair{"decode", "e0"}, std::pair{"decode", "e1"}, std::pair{"prefill", "e2"}}) {
    Labels labels = t.series_labels(b);
    labels[pool_label] = pool;
    labels[endpoint_label] = endpoint;
    const bool first = std::string_view(endpoint) == "e0";
    const bool prefill = std::string_view(pool) == "prefill";
    s.series.push_back(gauge(std::string(b.metric), labels, [=](int step) {
      if (prefill) return 4.0;
      return standard_bad(step) ? (first ? 6.0 : 0.0) : 3.0;
    }));
  }
  s.annotations = {
      {"summary", "one endpoint of the decode pool of " + t.job + " carries more than its share"},
      {"description", "The busiest endpoint of the decode pool carries 2.00x the pool's mean load (threshold 1.5x, from " +
                          std::string(b.metric) + ")."},
      {"runbook", "Peers of one pool should share its load: look at the router's decisions per endpoint (a "
                  "prefix-affinity or session pin sending one hot prefix to one worker, an endpoint the router still "
                  "thinks is idle), and whether the busiest endpoint is also slower. inferscope:endpoint_load shows "
                  "each endpoint. Then `inferscope doctor` (cause routing_imbalance)."}};
  return s;
}

inline Scenario down_scenario(const Target& t) {
  Scenario s{kTargetDown, {up_series(t, standard_bad)}, standard_checks(),
             {{"job", t.job}, {"instance", kInstance}, {"severity", "critical"}}, {}};
  s.annotations = {{"summary", std::string(kInstance) + " (" + t.job + ") is down"},
                   {"description", std::string("Prometheus cannot scrape ") + kInstance + " of job " + t.job +
                                       " (up = 0)."},
                   {"runbook", "Check that the server process runs and listens; `inferscope up --status` shows the "
                               "last scrape error; Prometheus /targets has it too."}};
  return s;
}

// absent_scenario: every expected latency family present throughout except the first one, which
// disappears for 1m at 5m and from 10m to 20m. vLLM's ITL is given under its old name only, so an
// alert for it would show that legacy names are not accepted.
inline Scenario absent_scenario(const Target& t) {
  Scenario s{kLatencyMetricsAbsent, {up_series(t, [](int) { return false; })}, standard_checks(), {}, {}};
  std::vector<std::string> seen;
  const MetricBinding* target = nullptr;
  for (const MetricBinding& b : dialect::dialect(t.id).bindings) {
    if (!dialect::is_latency_role(b.role) || b.presence == dialect::Presence::kOptional) continue;
    if (std::find(seen.begin(), seen.end(), b.metric) != seen.end()) continue;
    seen.emplace_back(b.metric);
    const bool toggled = target == nullptr;
    if (toggled) target = &b;
    std::string name = dialect::presence_series(b.kind, b.legacy.empty() || b.role != Role::kItl ? b.metric : b.legacy[0].name);
    Series presence = gauge(name, t.series_labels(b), [](int) { return 1.0; });
    if (toggled) {
      for (int step = 0; step < kSteps; ++step) {
        if (standard_bad(step)) presence.values[step] = standard_bad(step - 1) ? std::nullopt : std::optional(NAN);
      }
    }
    s.series.push_back(std::move(presence));
  }
  if (const MetricBinding* requests = dialect::find_binding(t.id, Role::kRequests)) {
    s.series.push_back(counter(std::string(requests->metric), t.series_labels(*requests), [](int) { return 1.0; }));
  }
  s.labels = {{"job", t.job}, {"instance", kInstance}, {"metric", std::string(target->metric)}, {"severity", "warning"}};
  std::string legacy;
  for (const auto& name : target->legacy) legacy += (legacy.empty() ? " (or its older name " : ", ") + std::string(name.name);
  if (!legacy.empty()) legacy += ")";
  s.annotations = {
      {"summary", std::string(kInstance) + " (" + t.job + ") is up but exposes no " + std::string(target->metric)},
      {"description", "Expected " + std::string(dialect::to_string(target->role)) + " metric " +
                          std::string(target->metric) + legacy +
                          " is absent while the target is up (up = 1): latency panels and alerts on it are silently "
                          "empty."},
      {"runbook", "A server upgrade often renames metrics (vLLM: gpu_cache_usage_perc -> kv_cache_usage_perc, "
                  "time_per_output_token_seconds -> inter_token_latency_seconds). Run `inferscope doctor "
                  "--check-metrics <url>` to see what the target exposes now."}};
  return s;
}

inline std::optional<Scenario> scenario_for(const Target& t, const std::string& alert) {
  if (alert == kE2eP99OverSlo) return latency_scenario(t, kE2eP99OverSlo, Role::kE2e, 0.99, "10s", "critical");
  if (alert == kE2eP95OverSlo) return latency_scenario(t, kE2eP95OverSlo, Role::kE2e, 0.95, "5s", "warning");
  if (alert == kTtftP95OverSlo) return latency_scenario(t, kTtftP95OverSlo, Role::kTtft, 0.95, "3s", "warning");
  if (alert == kTpotP95OverSlo) return latency_scenario(t, kTpotP95OverSlo, Role::kTpot, 0.95, "100ms", "warning");
  if (alert == kRequestsWaiting) return waiting_scenario(t);
  if (alert == kErrorRatioHigh) return error_scenario(t);
  if (alert == kKvCacheFull) return kv_scenario(t);
  if (alert == kPreemptionsRising) return preemption_scenario(t);
  if (alert == kGpuMemoryHigh) return gpu_scenario(t);
  if (alert == kThroughputHalved) return throughput_scenario(t);
  if (alert == kPrefixCacheHitRateHalved) return prefix_hit_scenario(t);
  if (alert == kSpecDecodeAcceptanceFell) return acceptance_scenario(t);
  if (alert == kLoraRequestsWaiting) return lora_waiting_scenario(t);
  if (alert == kEngineRankSlow) return rank_slow_scenario(t);
  if (alert == kKvTransferBandwidthHalved) return kv_bandwidth_scenario(t);
  if (alert == kPoolRequestsWaiting) return pool_waiting_scenario(t);
  if (alert == kEndpointLoadSkewed) return endpoint_skew_scenario(t);
  if (alert == kTargetDown) return down_scenario(t);
  if (alert == kLatencyMetricsAbsent) return absent_scenario(t);
  return std::nullopt;
}

inline std::string render_values(const Series& s) {
  std::string out;
  for (const auto& v : s.values) {
    if (!out.empty()) out += " ";
    out += !v ? "_" : std::isnan(*v) ? "stale" : number(*v);
  }
  return out;
}

inline std::string render_map(const Labels& m, const std::string& indent) {
  std::string out;
  for (const auto& [k, v] : m) out += indent + k + ": " + yaml_quote(v) + "\n";
  return out;
}

inline std::string render_scenario(const Scenario& s) {
  std::string out = "  - name: " + yaml_quote(s.alert) + "\n    interval: 15s\n    input_series:\n";
  for (const Series& series : s.series) {
    out += "      - series: " + yaml_quote(selector(series.name, series.labels)) + "\n";
    out += "        values: " + yaml_quote(render_values(series)) + "\n";
  }
  out += "    alert_rule_test:\n";
  for (const auto& [time, fires] : s.checks) {
    out += "      - eval_time: " + time + "\n        alertname: " + s.alert + "\n";
    if (!fires) {
      out += "        exp_alerts: []\n";
      continue;
    }
    out += "        exp_alerts:\n          - exp_labels:\n" + render_map(s.labels, "              ");
    out += "            exp_annotations:\n" + render_map(s.annotations, "              ");
  }
  return out;
}

inline RulesConfig test_config() {
  RulesConfig config;
  for (const char* alert : kTargetAlerts) config.alert_for[alert] = 3min;
  // Queue alerts look back one rate window (1m) before their condition holds: 2m keeps the
  // 1-minute spike short of `for` and the sustained condition firing by the 14m check.
  for (const char* alert : kQueueAlerts) config.alert_for[alert] = 2min;
  config.rate_window = 1min;
  config.throughput_baseline_offset = 5min;
  config.feature_baseline_offset = 5min;
  config.notification_window = 5min;
  return config;
}

// every_role_mapped maps each role a custom target may map to a name of its own.
inline std::shared_ptr<const dialect::CustomDialect> every_role_mapped() {
  std::vector<dialect::CustomRole> roles;
  std::string list = dialect::mappable_role_list();
  for (std::size_t start = 0; start < list.size();) {
    std::size_t end = list.find(", ", start);
    if (end == std::string::npos) end = list.size();
    const std::string role = list.substr(start, end - start);
    roles.push_back({role, "house_" + role, ""});
    start = end + 2;
  }
  auto made = dialect::make_custom_dialect(std::move(roles), "model");
  return made.ok() ? *made : nullptr;
}

// ---- queue targets --------------------------------------------------------------------------

inline constexpr const char* kQueueJob = "q";

inline Labels queue_labels(const std::string& system = "rq", const std::string& queue = "default") {
  return {{"job", kQueueJob}, {"instance", kInstance}, {"system", system}, {"queue", queue}};
}

inline Labels queue_alert_labels(const std::string& severity) {
  return {{"job", kQueueJob}, {"system", "rq"}, {"queue", "default"}, {"severity", severity}};
}

// Jobs wait throughout; while good a job starts and one finishes each step and a worker is busy;
// while bad nothing starts or ends and both workers are idle. A plain list with jobs waiting is
// never "not consumed": LLEN cannot tell.
inline Scenario not_consumed_scenario() {
  const auto moving = [](int step) { return standard_bad(step) ? 0.0 : 1.0; };
  Labels finished = queue_labels();
  finished["outcome"] = "finished";
  Labels wait = queue_labels();
  wait["le"] = "+Inf";
  Scenario s{kQueueNotConsumed,
             {gauge("inferscope_queue_depth", queue_labels(), [](int) { return 5.0; }),
              gauge("inferscope_queue_depth", queue_labels("list", "plain"), [](int) { return 7.0; }),
              counter("inferscope_queue_wait_seconds_count", queue_labels(), moving),
              counter("inferscope_queue_wait_seconds_bucket", wait, moving),
              counter("inferscope_queue_jobs_total", finished, moving),
              gauge("inferscope_queue_workers", {{"job", kQueueJob}, {"instance", kInstance}, {"system", "rq"}, {"state", "busy"}},
                    [&](int step) { return moving(step); }),
              gauge("inferscope_queue_workers", {{"job", kQueueJob}, {"instance", kInstance}, {"system", "rq"}, {"state", "idle"}},
                    [&](int step) { return 2.0 - moving(step); })},
             standard_checks(),
             queue_alert_labels("critical"),
             {}};
  s.annotations = {{"summary", "queue default (rq) of q is not consumed"},
                   {"description", "5 jobs wait and no worker started or finished one in the last 1m, and none is "
                                   "busy: the workers are gone, stuck or scaled to zero."},
                   {"runbook", "Check the workers (inferscope_queue_workers by state, `inferscope up --status`): "
                               "restart crashed workers, look for a stuck one (stale), scale up from zero. The model "
                               "server behind the queue sits idle meanwhile."}};
  return s;
}

// Over the depth threshold throughout; while bad the depth grows by 10 and the oldest job ages a
// full step per step; while good both hold still (a steady queue is no backlog growing).
inline Scenario backlog_scenario() {
  const auto grown = [](int step) {
    int bad = 0;
    for (int i = 0; i <= step; ++i) bad += standard_bad(i) ? 1 : 0;
    return bad;
  };
  Scenario s{kQueueBacklogGrowing,
             {gauge("inferscope_queue_depth", queue_labels(), [&](int step) { return 150.0 + 10 * grown(step); }),
              gauge("inferscope_queue_oldest_age_seconds", queue_labels(), [&](int step) { return 30.0 + 15 * grown(step); }),
              // Growing below the threshold is not a backlog.
              gauge("inferscope_queue_depth", queue_labels("rq", "small"), [&](int step) { return 1.0 * grown(step); })},
             standard_checks(),
             queue_alert_labels("warning"),
             {}};
  s.annotations = {{"summary", "queue default (rq) of q is backing up"},
                   {"description", "The queue grows by 40 jobs/min while over 100 jobs, and its oldest job keeps "
                                   "ageing."},
                   {"runbook", "Arrivals outpace completions: compare busy workers with all workers (all busy: add "
                               "workers or model-server capacity; idle ones: they are stuck) and the model server's "
                               "latency (a slower server drains the queue more slowly); `inferscope doctor` names the "
                               "cause."}};
  return s;
}

inline Scenario queue_wait_scenario() {
  Scenario s{kQueueWaitHigh,
             {gauge("inferscope_queue_oldest_age_seconds", queue_labels(),
                    [](int step) { return standard_bad(step) ? 120.0 : 5.0; })},
             standard_checks(),
             queue_alert_labels("warning"),
             {}};
  s.annotations = {{"summary", "Jobs of queue default (rq) of q wait too long"},
                   {"description", "The oldest waiting job (or the wait p95) is 2m 0s (slo.queue_wait 1m)."},
                   {"runbook", "Waiting time adds to every user's latency before the model server sees the request: "
                               "check depth and workers (backlog or not consumed), then the model server's own "
                               "latency."}};
  return s;
}

inline Scenario job_failures_scenario() {
  Labels finished = queue_labels();
  finished["outcome"] = "finished";
  Labels failed = queue_labels();
  failed["outcome"] = "failed";
  Scenario s{kQueueJobFailuresHigh,
             {counter("inferscope_queue_jobs_total", finished, [](int) { return 3.0; }),
              counter("inferscope_queue_jobs_total", failed, [](int step) { return standard_bad(step) ? 1.0 : 0.0; })},
             standard_checks(),
             queue_alert_labels("warning"),
             {}};
  s.annotations = {{"summary", "Jobs of queue default (rq) of q fail"},
                   {"description", "25% of the jobs that ended in the last 1m failed (threshold 10 %)."},
                   {"runbook", "Read the failed jobs' exceptions (RQ: the failed job registry, `rq info`; Celery: the "
                               "worker log); errors from the model server show in its own error ratio too."}};
  return s;
}

inline Scenario workers_stale_scenario() {
  Scenario s{kQueueWorkersStale,
             {gauge("inferscope_queue_workers", {{"job", kQueueJob}, {"instance", kInstance}, {"system", "rq"}, {"state", "stale"}},
                    [](int step) { return standard_bad(step) ? 1.0 : 0.0; })},
             standard_checks(),
             {{"job", kQueueJob}, {"system", "rq"}, {"severity", "warning"}},
             {}};
  s.annotations = {{"summary", "1 rq workers of q are stale"},
                   {"description", "1 workers stopped sending heartbeats (killed, OOM, hung) but are still registered: "
                                   "jobs they held may never finish."},
                   {"runbook", "Find the dead or hung worker processes and restart them; RQ re-queues an abandoned job "
                               "only when a live worker cleans its registries up."}};
  return s;
}

inline Labels queue_down_annotations() {
  return {{"summary", "Queue target q is down"},
          {"description", "No queue data for q (value 0): up's collector cannot reach or authenticate to Redis, or "
                          "Prometheus cannot scrape up's /queues/q/metrics or the target's redis exporter (job q-redis)."},
          {"runbook", "`inferscope up --status` shows the collector's last error (unreachable, auth) for the target and "
                      "the exporter child; check that redis-server runs and its password_file/password_env."}};
}

// The scrape of up's /queues/q/metrics works throughout; the collector loses Redis while bad.
inline Scenario queue_down_scenario() {
  Scenario s{kTargetDown,
             {gauge("up", {{"job", kQueueJob}, {"instance", kInstance}}, [](int) { return 1.0; }),
              gauge("inferscope_queue_up", {{"job", kQueueJob}, {"instance", kInstance}, {"target", kQueueJob}},
                    [](int step) { return standard_bad(step) ? 0.0 : 1.0; })},
             standard_checks(),
             {{"job", kQueueJob}, {"instance", kInstance}, {"target", kQueueJob}, {"severity", "critical"}},
             {}};
  s.annotations = queue_down_annotations();
  return s;
}

// The collector works throughout; Prometheus loses the target's redis exporter (job q-redis) while
// bad. The alert carries the queue target's job.
inline Scenario exporter_down_scenario() {
  Scenario s{kTargetDown,
             {gauge("up", {{"job", kQueueJob}, {"instance", kInstance}}, [](int) { return 1.0; }),
              gauge("inferscope_queue_up", {{"job", kQueueJob}, {"instance", kInstance}, {"target", kQueueJob}},
                    [](int) { return 1.0; }),
              gauge("up", {{"job", redis_exporter_job(kQueueJob)}, {"instance", "127.0.0.1:9121"}},
                    [](int step) { return standard_bad(step) ? 0.0 : 1.0; })},
             standard_checks(),
             {{"job", kQueueJob}, {"instance", "127.0.0.1:9121"}, {"severity", "critical"}},
             {}};
  s.annotations = queue_down_annotations();
  return s;
}

// The exporter's eviction counter (INFO evicted_keys) grows by 3 per 15 s step while bad.
inline Scenario evicting_scenario() {
  Scenario s{kRedisEvictingKeys,
             {counter("redis_evicted_keys_total", {{"job", redis_exporter_job(kQueueJob)}, {"instance", "127.0.0.1:9121"}},
                      [](int step) { return standard_bad(step) ? 3.0 : 0.0; })},
             standard_checks(),
             {{"job", kQueueJob}, {"instance", "127.0.0.1:9121"}, {"severity", "critical"}},
             {}};
  s.annotations = {{"summary", "Redis of queue target q is evicting keys"},
                   {"description", "Redis evicted 12 keys in the last 1m (maxmemory reached with an eviction policy): "
                                   "queued jobs and job hashes can vanish silently."},
                   {"runbook", "Raise maxmemory or free memory (redis_memory_used_bytes vs redis_memory_max_bytes of job "
                               "q-redis), set maxmemory-policy noeviction for a Redis that holds queues, and check which "
                               "jobs were lost (RQ: job hashes missing for queued IDs)."}};
  return s;
}

// dialect_alert_tests renders the `tests:` entries for every per-target alert `file` (the rule
// file of `target` alone, made with test_config()) carries, counting them in `tested`; an alert
// with no scenario is a test failure the caller sees as a missing entry (it returns "" then).
inline std::string dialect_alert_tests(const Target& target, const RuleFile& file, std::size_t& tested) {
  std::string tests;
  for (const char* alert : kTargetAlerts) {
    if (file.text.find(std::string("- alert: ") + alert + "\n") == std::string::npos) continue;
    auto scenario = scenario_for(target, alert);
    if (!scenario) return "";
    tests += render_scenario(*scenario);
    ++tested;
  }
  return tests;
}

// common_alert_tests: the common file's watchdog always fires; relay failures fire and resolve.
inline std::string common_alert_tests() {
  Scenario watchdog{kWatchdog, {gauge("up", {{"job", "x"}}, [](int) { return 1.0; })}, {{"1m", true}, {"29m", true}},
                    {{"severity", "none"}}, {}};
  watchdog.annotations = {{"summary", "Watchdog: the alerting pipeline is alive"},
                          {"description", "Always firing (value 1) so that its absence means Prometheus, "
                                          "Alertmanager or the relay stopped."},
                          {"runbook", "Nothing to do while it arrives. When the relay reports it missing, check "
                                      "`inferscope up --status` for a dead child."}};
  // One notification to "ops" fails for good at 10m; deliveries keep succeeding.
  Scenario failing{kNotificationsFailing,
                   {counter("inferscope_notifications_total", {{"channel", "ops"}, {"result", "failed"}},
                            [](int step) { return step == 40 ? 1.0 : 0.0; }),
                    counter("inferscope_notifications_total", {{"channel", "ops"}, {"result", "delivered"}},
                            [](int) { return 1.0; })},
                   {{"9m45s", false}, {"12m", true}, {"16m", false}},
                   {{"channel", "ops"}, {"severity", "critical"}},
                   {}};
  failing.annotations = {
      {"summary", "Notifications to channel ops are failing"},
      {"description", "1 notifications to ops failed after every retry in the last 5m; they are kept in the relay "
                      "outbox."},
      {"runbook", "See `inferscope up --status` and up's log for the channel's last error (bad token or signature, "
                  "rate limit, network); fix the channel config and restart up: kept notifications are resent."}};
  return render_scenario(watchdog) + render_scenario(failing);
}

// queue_alert_tests: every queue alert of queue target kQueueJob's file (made with test_config()).
inline std::string queue_alert_tests() {
  std::string tests;
  for (const Scenario& s : {not_consumed_scenario(), backlog_scenario(), queue_wait_scenario(),
                            job_failures_scenario(), workers_stale_scenario(), queue_down_scenario(),
                            exporter_down_scenario(), evicting_scenario()}) {
    tests += render_scenario(s);
  }
  return tests;
}

// promtool_test_file is a promtool test file loading `rule_file_name` with `tests` as its entries.
inline std::string promtool_test_file(const std::string& rule_file_name, const std::string& tests) {
  return "rule_files:\n  - " + rule_file_name + "\nevaluation_interval: 15s\ntests:\n" + tests;
}

}  // namespace inferscope::alerts::rule_scenarios
