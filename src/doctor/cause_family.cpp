// What every cause family reads: the stage changes, medians by window quarter, per-token times,
// evidence lines and the wording of numbers.
#include "doctor/cause_family.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace inferscope::doctor::detail {

Hypothesis::Hypothesis(CauseId id) : cause(id), stage(spec(id).stage), next_steps(next_steps_of(id)) {}

Hypothesis* Evaluation::find(CauseId id) {
  for (auto& h : hypotheses)
    if (h.cause == id) return &h;
  return nullptr;
}

Hypothesis& Evaluation::add(CauseId id) {
  Hypothesis& h = hypotheses.emplace_back(id);
  if (!gpu_visible(snapshot)) h.next_steps = next_steps_of(id, false);
  return h;
}

bool Evaluation::measured(Stage stage) const { return stage_deltas.count(std::string(dialect::to_string(stage))) > 0; }

double Evaluation::stage_delta(Stage stage) const {
  auto it = stage_deltas.find(std::string(dialect::to_string(stage)));
  return it == stage_deltas.end() ? 0 : std::max(0.0, it->second);
}

double Evaluation::direct_stage_strength(Stage stage) const {
  const Quantity* q = find(stage);
  if (!q || std::isnan(e2e_change.delta)) return 0;
  double delta = stage_delta(stage);
  Change c = compare_per_request(q);
  double threshold = std::isnan(c.threshold) ? 0.02 * e2e->baseline.mean : c.threshold;
  bool before_first_token = stage == Stage::kGatewayQueue || stage == Stage::kPreprocess || stage == Stage::kDependency;
  const Quantity* ttft = find(SignalId::kTtft);
  if (!(delta > threshold)) {
    if (!before_first_token || !ttft) return 0;
    return lagging_stage_strength(q, ttft);
  }
  // How much the stage alone adds to what a request felt before, not its share of a change
  // other causes may dominate (two causes at once must both show).
  double strength = ramp(delta / std::max(e2e->baseline.mean, 1e-9), 0.04, 0.25);
  // A stage in front of the first token is what a streaming user waits for before any output:
  // it also counts by how far it moves TTFT (x1.5 starts, x3 is full), however long decode is.
  if (before_first_token && ttft && ttft->baseline.mean > 0)
    strength = std::max(strength, ramp(delta / ttft->baseline.mean, 0.5, 2.0));
  // A stage multiplied far outside its own noise (x1.5, twice its floor) that adds a real part of
  // e2e (4 % of the baseline's) makes the verdict degraded by itself (the symptom rule); the cause
  // whose mechanism is that stage explains it then, by how far the stage multiplied (x1.5
  // starts, x3 is full), not only by its share of e2e: a send stage x100 at +12 ms beside 220 ms
  // of decode is the network's, not "no known cause".
  const double multiplied = ratio(q->baseline.per_request, q->incident.per_request);
  if (delta > 2 * threshold && multiplied >= 1.5 && delta >= 0.04 * e2e->baseline.mean)
    strength = std::max(strength, log_ramp(multiplied, 1.5, 3.0));
  return strength;
}

// A stage's time per finished request counts the requests that finished in the window, and with
// long answers most of them started before the change: the stage lags by a whole request. TTFT
// is observed at the first token, so it shows a slower stage in front of it within one prefill.
// Such a stage, multiplied far outside its own noise (x2, twice its own floor), is judged by the
// TTFT rise that neither the queue nor the prefill explains (half the baseline TTFT starts, twice
// it is full).
double Evaluation::lagging_stage_strength(const Quantity* q, const Quantity* ttft) const {
  const double base = q->baseline.per_request, now = q->incident.per_request;
  if (!(base >= 0) || !(now > base) || !(ttft->baseline.mean > 0)) return 0;
  Change own = compare(q, 0.10, options.noise_sigmas, 0);
  double floor = 0.1 * base;
  if (!std::isnan(own.threshold) && q->baseline.mean > 0) floor = std::max(floor, own.threshold * base / q->baseline.mean);
  if (!(now - base > 2 * floor) || !(now >= 2 * base)) return 0;
  double ttft_rise = ttft->incident.mean - ttft->baseline.mean;
  for (Stage other : {Stage::kQueue, Stage::kPrefill})
    if (const Quantity* o = find(other)) ttft_rise -= std::max(0.0, o->incident.mean - o->baseline.mean);
  return ramp(ttft_rise / ttft->baseline.mean, 0.5, 2.0);
}

// An incident that began late in the window (an alert fires soon after the onset) moves the
// median of its own part while the whole window's median still sits on the healthy part, so the
// quarter where the median moved most counts (one holding a fair part of the observations).
// With `rate`, each ratio is first divided by the load ratio of the same part (at least 1): more
// requests stretch the median through bigger batches, and a burst in one quarter must not read
// as a slower engine there. `load_ratio` is the whole window's.
double Evaluation::median_ratio(const Quantity* q, const Quantity* rate, double load_ratio) const {
  if (!q) return kNaN;
  double base = q->baseline.p50;
  double r = detail::ratio(base, q->incident.p50);
  if (!(base > 0)) return r;
  r /= std::max(1.0, load_ratio);
  const WindowStat& w = q->incident;
  const std::size_t chunks = std::min(w.chunk_p50.size(), w.chunk_counts.size());
  // The same quarters of the request rate's per-step values (both follow the window's steps).
  std::vector<double> chunk_load(chunks, load_ratio);
  if (rate && rate->baseline.mean > 0 && chunks > 0 && !rate->incident.intervals.empty()) {
    const auto& iv = rate->incident.intervals;
    std::vector<double> sum(chunks, 0), n(chunks, 0);
    for (std::size_t k = 0; k < iv.size(); ++k)
      if (!std::isnan(iv[k])) {
        sum[k * chunks / iv.size()] += iv[k];
        n[k * chunks / iv.size()] += 1;
      }
    for (std::size_t i = 0; i < chunks; ++i)
      if (n[i] > 0) chunk_load[i] = std::max(load_ratio, sum[i] / n[i] / rate->baseline.mean);
  }
  double min_n = std::max(30.0, 0.1 * w.count);
  for (std::size_t i = 0; i < chunks; ++i)
    if (w.chunk_counts[i] >= min_n && w.chunk_p50[i] > 0)
      r = std::max(std::isnan(r) ? 0.0 : r, w.chunk_p50[i] / base / std::max(1.0, chunk_load[i]));
  return r;
}

Change Evaluation::compare_per_request(const Quantity* q) const {
  Change c = compare(q, 0.10, options.noise_sigmas, 0);
  // The floor is relative to the stage's own baseline or 2% of e2e, whichever is larger.
  double base = std::isnan(q->baseline.per_request) ? 0 : q->baseline.per_request;
  double e2e_base = e2e ? e2e->baseline.mean : 0;
  if (!q->baseline.has_data()) c.threshold = kNaN;  // the stage did not exist before: any time is new
  c.threshold = std::max({std::isnan(c.threshold) ? 0 : c.threshold * (base > 0 && q->baseline.mean > 0
                                                                            ? base / q->baseline.mean
                                                                            : 1.0),
                          0.1 * base, 0.02 * e2e_base});
  return c;
}

PerToken Evaluation::per_token() const {
  PerToken t{find(SignalId::kTpot), {}};
  t.change = compare(t.quantity, 0.10, options.noise_sigmas);
  if (std::isnan(t.change.ratio)) {
    t.quantity = find(SignalId::kItl);
    t.change = compare(t.quantity, 0.10, options.noise_sigmas);
  }
  return t;
}

Evidence Evaluation::ev(const Quantity* q, const std::string& fallback_name, bool use_max) const {
  if (!q) return {fallback_name, kNaN, kNaN, ""};
  return {q->metric, use_max ? q->baseline.max : q->baseline.mean, use_max ? q->incident.max : q->incident.mean,
          q->unit};
}

std::string percent(double v) { return std::isnan(v) ? "n/a" : common::format_printf("%.0f%%", v * 100); }

const Quantity* find_stage_or_latency(const Snapshot& s, const std::string& id) {
  if (auto it = s.stages.find(id); it != s.stages.end()) return &it->second;
  if (auto it = s.latency.find(id); it != s.latency.end()) return &it->second;
  return nullptr;
}

std::vector<std::string> next_steps_of(CauseId id, bool gpu) {
  const NextSteps& steps = gpu || spec(id).next_steps_without_gpu.empty() ? spec(id).next_steps
                                                                          : spec(id).next_steps_without_gpu;
  return {steps.begin(), steps.end()};
}

bool gpu_visible(const Snapshot& s) {
  const Quantity* gpu = s.find(SignalId::kGpuUtil);
  return (gpu && gpu->sampled()) || s.dialect.find("dcgm") != std::string::npos;
}

double mean_of(const Quantity* q, bool incident) {
  if (!q) return kNaN;
  return incident ? q->incident.mean : q->baseline.mean;
}

}  // namespace inferscope::doctor::detail
