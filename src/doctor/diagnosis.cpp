// The doctor's reasoning. It follows how an inference server works rather than fitting test
// cases: stage means add up to the e2e mean, so the e2e change splits into stage changes; each
// cause has a mechanism signature (per-token times vs token counts vs load vs KV vs stalls) that
// says which stages it can move; the queue is a symptom shared by every capacity loss.
// Functions run long where they list one cause's evidence after another; splitting them would
// scatter each cause's rule over several places.
#include "doctor/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "doctor/diagnosis_stats.h"

namespace inferscope::doctor {
namespace {

using detail::compare;
using detail::log_ramp;
using detail::ramp;

const char* const kPipeline[] = {"gateway_queue", "upstream_connect", "preprocess", "dependency",    "queue",
                                 "prefill",       "decode",           "inference",  "postprocess",   "send",
                                 "upstream_ttft", "stream"};

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// seconds prints a duration with a unit a person reads at a glance.
std::string seconds(double s) {
  if (std::isnan(s)) return "n/a";
  double a = std::fabs(s);
  if (a < 1e-3) return fmt("%.0f us", s * 1e6);
  if (a < 1) return fmt(a < 0.1 ? "%.1f ms" : "%.0f ms", s * 1e3);
  return fmt("%.2f s", s);
}

std::string number(double v) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return "inf";
  double a = std::fabs(v);
  if (a >= 100) return fmt("%.0f", v);
  if (a >= 10) return fmt("%.1f", v);
  return fmt("%.2f", v);
}

std::string percent(double v) { return std::isnan(v) ? "n/a" : fmt("%.0f%%", v * 100); }

double mean_of(const Quantity* q, bool incident) {
  if (!q) return kNaN;
  return incident ? q->incident.mean : q->baseline.mean;
}

// Hypothesis is one cause being weighed.
struct Hypothesis {
  Hypothesis(std::string c, std::string s) : cause(std::move(c)), stage(std::move(s)) {}
  std::string cause;
  std::string stage;      // natural stage when it claims no stage portion
  double strength = 0;    // 0..1, from its own evidence
  bool needs_slowdown = true;
  std::string summary;
  std::string why_not;    // reason shown in considered[] when dropped
  std::vector<Evidence> evidence;
  std::vector<std::string> next_steps;
  std::map<std::string, double> portions;  // stage -> seconds of the e2e change it explains
};

class Reasoner {
 public:
  Reasoner(const Snapshot& s, const DiagnoseOptions& o) : s_(s), o_(o) { d_.snapshot = s; }

  Diagnosis run() {
    if (check_targets()) return finish();
    e2e_ = s_.find_latency("e2e");
    bool llamacpp_style = !e2e_ && (s_.find_latency("tpot") || s_.find_signal("prefill_time_per_token"));
    add_metrics_missing();
    if (!e2e_ && !llamacpp_style) {
      no_data("no end-to-end latency metric found" + std::string(s_.dialect.empty() ? " (no known dialect)" : ""));
      return finish();
    }
    if (e2e_ && !enough_requests()) return finish();
    measure_slowdown(llamacpp_style);
    build_stage_table();
    weigh_causes();
    add_host_cpu_evidence();
    assign_shares();
    rank_and_decide();
    return finish();
  }

 private:
  // --- data presence -------------------------------------------------------------------------
  bool check_targets() {
    if (s_.targets_total <= 0 || s_.targets_down.empty()) return false;
    Finding f;
    f.cause = "target_down";
    bool all = static_cast<int>(s_.targets_down.size()) >= s_.targets_total;
    f.score = all ? 1.0 : 0.8;
    f.summary = std::to_string(s_.targets_down.size()) + " of " + std::to_string(s_.targets_total) +
                " scrape targets are down: " + s_.targets_down.front();
    f.evidence.push_back({"up", static_cast<double>(s_.targets_total),
                          static_cast<double>(s_.targets_total - static_cast<int>(s_.targets_down.size())), "targets"});
    f.next_steps = {"Check that the server process is running and listening (systemd/kubectl status, its log).",
                    "Check that Prometheus can reach it: the Targets page shows the last scrape error.",
                    "Until it is back, its latency is unknown: do not read an empty panel as healthy."};
    d_.findings.push_back(f);
    if (all) {
      d_.verdict = "no_data";
      d_.headline = "no data: every scrape target is down";
      return true;
    }
    return false;
  }

  void add_metrics_missing() {
    if (s_.missing.empty() && s_.renamed.empty()) return;
    Finding f;
    f.cause = "metrics_missing";
    f.score = s_.missing.empty() ? 0.5 : 0.9;
    std::string list;
    for (const auto& m : s_.missing) list += (list.empty() ? "" : ", ") + m;
    for (const auto& r : s_.renamed) list += (list.empty() ? "renamed: " : "; renamed: ") + r;
    f.summary = (s_.missing.empty() ? "deprecated metric names still in use: " : "expected metrics are missing: ") + list;
    for (const auto& m : s_.missing) f.evidence.push_back({m, kNaN, kNaN, "absent"});
    for (const auto& r : s_.renamed) f.evidence.push_back({r, kNaN, kNaN, "renamed"});
    f.next_steps = {"Check that the server exposes its metrics (vLLM: /metrics on the API port; llama.cpp: start it "
                    "with --metrics; inferscope gateway in front of servers without latency histograms).",
                    "Update dashboards and rules that still query renamed metrics (inferscope doctor --check-metrics URL).",
                    "Check relabeling/metric_relabel_configs that may drop the families."};
    d_.findings.push_back(f);
  }

  void no_data(const std::string& why) {
    d_.verdict = "no_data";
    d_.headline = "no data: " + why;
    d_.notes.push_back(why);
  }

  bool enough_requests() {
    double base_n = e2e_->baseline.count, inc_n = e2e_->incident.count;
    if (inc_n >= o_.min_requests && base_n >= o_.min_requests) return true;
    // Nothing finishes while work is pending: that is a stall, not an absence of data.
    double pending = std::max({0.0, mean_of(s_.find_signal("running"), true), mean_of(s_.find_signal("waiting"), true),
                               mean_of(s_.find_signal("in_flight"), true)});
    if (inc_n < o_.min_requests && pending >= 1 && base_n >= o_.min_requests) {
      Hypothesis h = stall_hypothesis(/*from_pending=*/true);
      Finding f{h.cause, h.stage, std::max(0.6, h.strength), kNaN, h.summary, h.evidence, h.next_steps};
      d_.findings.insert(d_.findings.begin(), f);
      d_.verdict = "degraded";
      d_.headline = "degraded: requests stopped finishing (" + number(inc_n) + " in the window, " + number(pending) +
                    " pending)";
      d_.e2e_baseline = e2e_->baseline;
      d_.e2e_incident = e2e_->incident;
      return false;
    }
    no_data("too few finished requests to compare (baseline " + number(base_n) + ", incident " + number(inc_n) +
            ", need " + number(o_.min_requests) + ")");
    return false;
  }

  // --- slowdown ------------------------------------------------------------------------------
  void measure_slowdown(bool llamacpp_style) {
    if (llamacpp_style) {
      // No latency histograms: the per-token times are the only latency the server tells.
      for (const Quantity* q : {s_.find_latency("tpot"), s_.find_signal("prefill_time_per_token")}) {
        auto c = compare(q, o_.min_relative_change, o_.noise_sigmas);
        if (c.up) slow_ = true;
      }
      d_.notes.push_back("this server exposes no latency histograms (llama.cpp): stage shares cannot be computed; "
                         "per-token prefill and decode times are compared instead");
      return;
    }
    d_.e2e_baseline = e2e_->baseline;
    d_.e2e_incident = e2e_->incident;
    for (const auto* w : {&e2e_->baseline, &e2e_->incident}) {
      std::size_t with_data = 0;
      for (double v : w->intervals) with_data += !std::isnan(v);
      if (!w->intervals.empty() && with_data * 2 < w->intervals.size())
        d_.notes.push_back(std::string(w == &e2e_->baseline ? "baseline" : "incident window") + " has requests in only " +
                           std::to_string(with_data) + " of its " + std::to_string(w->intervals.size()) +
                           " intervals (target new, scraped late, or idle): compare with care");
    }
    e2e_change_ = compare(e2e_, o_.min_relative_change, o_.noise_sigmas, 1e-4);
    d_.e2e_change_s = e2e_change_.delta;
    d_.e2e_noise_s = e2e_change_.threshold;
    slow_ = e2e_change_.up;
    // A tail that moved a lot while the mean barely did (stalls, preemption gaps) also counts.
    // p95 rather than p99: with tens of requests a window's p99 is one request.
    double p95_ratio = detail::ratio(e2e_->baseline.p95, e2e_->incident.p95);
    tail_slow_ = p95_ratio >= 1.5 && e2e_->incident.count >= 30 && e2e_change_.delta > 0.5 * e2e_change_.threshold;
    if (!slow_ && e2e_change_.delta > 0)
      d_.notes.push_back("mean e2e rose by " + seconds(e2e_change_.delta) + " (" +
                         percent(e2e_change_.ratio - 1) + "), below the noise floor of " +
                         seconds(e2e_change_.threshold) + " set by the baseline's own variation");
  }

  void build_stage_table() {
    double total = 0;
    for (const char* name : kPipeline) {
      const Quantity* q = s_.find_stage(name);
      if (!q) continue;
      StageRow row;
      row.stage = name;
      row.baseline = q->baseline;
      row.incident = q->incident;
      if (!std::isnan(q->baseline.per_request) && !std::isnan(q->incident.per_request)) {
        row.delta_s = q->incident.per_request - q->baseline.per_request;
        total += row.delta_s;
        stage_delta_[name] = row.delta_s;
        if (e2e_change_.delta > 0) row.share = row.delta_s / e2e_change_.delta;
      }
      d_.stages.push_back(row);
    }
    if (e2e_change_.delta > 0 && !stage_delta_.empty())
      d_.unexplained_share = std::clamp(1 - total / e2e_change_.delta, -1.0, 1.0);
  }

  double stage_delta(const std::string& stage) const {
    auto it = stage_delta_.find(stage);
    return it == stage_delta_.end() ? 0 : std::max(0.0, it->second);
  }

  // direct_stage_strength: how clearly one stage of its own got slower.
  double direct_stage_strength(const std::string& stage) const {
    const Quantity* q = s_.find_stage(stage);
    if (!q || std::isnan(e2e_change_.delta)) return 0;
    double delta = stage_delta(stage);
    Change c = compare_per_request(q);
    double threshold = std::isnan(c.threshold) ? 0.02 * e2e_->baseline.mean : c.threshold;
    if (!(delta > threshold)) return 0;
    // How much the stage alone adds to what a request felt before, not its share of a change
    // other causes may dominate (two causes at once must both show).
    return ramp(delta / std::max(e2e_->baseline.mean, 1e-9), 0.04, 0.25);
  }

  // median_ratio compares a distribution's median with the baseline's, in the quarter of the
  // window where it moved most (one holding a fair part of the window's observations): an
  // incident that began late in the window (an alert fires soon after the onset) moves the
  // median of its own part while the whole window's median still sits on the healthy part.
  // With `rate`, each ratio is first divided by the load ratio of the same part (at least 1):
  // more requests stretch the median through bigger batches, and a burst in one quarter must
  // not read as a slower engine there. `load_ratio` is the whole window's.
  double median_ratio(const Quantity* q, const Quantity* rate = nullptr, double load_ratio = 1) const {
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

  using Change = detail::Change;
  Change compare_per_request(const Quantity* q) const {
    Change c = compare(q, 0.10, o_.noise_sigmas, 0);
    // The floor is relative to the stage's own baseline or 2% of e2e, whichever is larger.
    double base = std::isnan(q->baseline.per_request) ? 0 : q->baseline.per_request;
    double e2e_base = e2e_ ? e2e_->baseline.mean : 0;
    if (!q->baseline.has_data()) c.threshold = kNaN;  // the stage did not exist before: any time is new
    c.threshold = std::max({std::isnan(c.threshold) ? 0 : c.threshold * (base > 0 && q->baseline.mean > 0
                                                                              ? base / q->baseline.mean
                                                                              : 1.0),
                            0.1 * base, 0.02 * e2e_base});
    return c;
  }

  Evidence ev(const Quantity* q, const std::string& fallback_name, bool use_max = false) const {
    if (!q) return {fallback_name, kNaN, kNaN, ""};
    return {q->metric, use_max ? q->baseline.max : q->baseline.mean, use_max ? q->incident.max : q->incident.mean,
            q->unit};
  }

  // --- causes --------------------------------------------------------------------------------
  void weigh_causes() {
    const Quantity* rate = s_.find_signal("arrival_rate");
    if (!rate) rate = s_.find_signal("request_rate");
    const Quantity* prompt = s_.find_signal("prompt_tokens");
    const Quantity* output = s_.find_signal("output_tokens");
    const Quantity* waiting = s_.find_signal("waiting");
    const Quantity* running = s_.find_signal("running");
    const Quantity* kv = s_.find_signal("kv_usage");
    const Quantity* preempt = s_.find_signal("preemption_rate");
    const Quantity* hit = s_.find_signal("prefix_hit_rate");
    const Quantity* errors = s_.find_signal("error_ratio");
    const Quantity* tpot = s_.find_latency("tpot");
    const Quantity* itl = s_.find_latency("itl");
    const Quantity* decode = s_.find_stage("decode");
    const Quantity* prefill = s_.find_stage("prefill");
    const Quantity* queue = s_.find_stage("queue");

    // Load: more requests per second than before.
    Change rate_c = compare(rate, 0.10, o_.noise_sigmas);
    double s_rate = rate_c.up ? log_ramp(rate_c.ratio, 1.15, 1.8) : 0;

    // Request mix.
    Change prompt_c = compare(prompt, 0.10, o_.noise_sigmas);
    double s_prompt = prompt_c.up ? log_ramp(prompt_c.ratio, 1.25, 2.0) : 0;
    Change output_c = compare(output, 0.10, o_.noise_sigmas);
    double s_output = output_c.up ? log_ramp(output_c.ratio, 1.25, 2.0) : 0;

    // KV cache: near full, or sequences preempted (recomputed) more often per request.
    double kv_max = kv ? kv->incident.max : kNaN, kv_base = kv ? kv->baseline.max : kNaN;
    // Full means no block left for the next sequence: usage near 1 at the peaks (vLLM's own
    // warning level is 0.9; llm-d alerts there too).
    double s_kv_full = ramp(kv_max, 0.8, 0.95) * (kv_base >= 0.85 ? 0.4 : 1.0);
    // Admission bound by KV: requests wait while the free KV share is smaller than what one more
    // running sequence takes (usage need not be near 1: whole prompts must fit).
    double s_kv_bound = 0;
    if (kv && running && waiting && kv->incident.has_data() && running->incident.mean > 0.2) {
      double per_sequence = kv->incident.mean / running->incident.mean;
      double headroom = 1 - kv->incident.mean;
      double waiting_up = ramp(waiting->incident.mean - std::max(1.0, 2 * waiting->baseline.mean), 0, 3);
      s_kv_bound = waiting_up * ramp(per_sequence / std::max(headroom, 0.01), 0.7, 1.0) *
                   ramp(kv->incident.mean, 0.3, 0.6);
    }
    double pre_b = preempt ? preempt->baseline.mean : kNaN, pre_i = preempt ? preempt->incident.mean : kNaN;
    double req_i = mean_of(rate, true), req_b = mean_of(rate, false);
    double per_req_i = req_i > 0 ? pre_i / req_i : kNaN, per_req_b = req_b > 0 ? pre_b / req_b : kNaN;
    // Preemption only happens when KV blocks run out, so any rise from (near) zero counts.
    double s_preempt = ramp((std::isnan(per_req_i) ? 0 : per_req_i) - (std::isnan(per_req_b) ? 0 : per_req_b), 0.005, 0.05);
    double s_kv = std::max({s_kv_full, s_preempt, s_kv_bound});

    // Per-token decode time: TPOT per request, else ITL, else the decode stage per output token.
    Change tok_c = compare(tpot, 0.10, o_.noise_sigmas);
    const Quantity* per_token = tpot;
    if (std::isnan(tok_c.ratio)) {
      tok_c = compare(itl, 0.10, o_.noise_sigmas);
      per_token = itl;
    }
    // More load stretches per-token time only through bigger batches: at unchanged per-token time
    // the running batch grows at most in proportion to arrivals, and a decode step costs at most
    // in proportion to its batch (memory-bound decode grows far less). So only the per-token rise
    // beyond the arrival ratio is evidence of a slower engine; load explains the rest.
    double load_ratio = rate_c.up && rate_c.ratio > 1 ? rate_c.ratio : 1.0;
    double itl_p50_ratio = median_ratio(itl, rate, load_ratio);  // beyond load already
    double s_decode_raw = tok_c.up ? log_ramp(tok_c.ratio / load_ratio, 1.2, 2.0) : 0;
    // A slower decode step moves the median gap between tokens of every request, short prompts
    // included; prefill interference (long prompts sharing steps), KV preemptions and stalls add
    // a few long gaps and move the mean only. With a per-token median at hand, it decides.
    if (!std::isnan(itl_p50_ratio))
      s_decode_raw = std::min(s_decode_raw, log_ramp(itl_p50_ratio, 1.2, 1.8));

    // Per-prompt-token prefill time.
    double ppt_b = kNaN, ppt_i = kNaN;
    std::string ppt_metric;
    if (prefill && prompt && prompt->baseline.mean > 0 && prompt->incident.mean > 0) {
      ppt_b = prefill->baseline.mean / prompt->baseline.mean;
      ppt_i = prefill->incident.mean / prompt->incident.mean;
      ppt_metric = prefill->metric + " / " + prompt->metric;
    } else if (const Quantity* q = s_.find_signal("prefill_time_per_token")) {
      ppt_b = q->baseline.mean;
      ppt_i = q->incident.mean;
      ppt_metric = q->metric;
    }
    double ppt_ratio = detail::ratio(ppt_b, ppt_i);
    // Prefill work shares engine steps with decoding sequences (chunked prefill, mixed batches):
    // a decoding request is stretched by the engine time spent on prefill while it decodes,
    // share u = prompt tokens/s x prefill seconds per token, and no more. A long prompt makes no
    // other request's decode slower per token except through that time (or through KV, which is
    // kv_cache_pressure's). So of the decode change, long prompts may claim at most the added
    // prompt tokens at the old per-token cost, a slower prefill at most the added per-token cost
    // at the new rate, each times the incident's decode time per request. The measured prefill
    // time per token includes the steps it shares, so these bounds are generous.
    // Behind a gateway (no engine stages), the stream after the first token is the decode and
    // the upstream's time to first token per prompt token bounds its prefill cost from above.
    const Quantity* span_q = decode ? decode : s_.find_stage("stream");
    double ppt_cap_b = ppt_b, ppt_cap_i = ppt_i;
    if (!(ppt_cap_b > 0) && prompt && prompt->baseline.mean > 0 && prompt->incident.mean > 0) {
      const Quantity* first = s_.find_stage("upstream_ttft");
      if (!first) first = s_.find_latency("ttft");
      if (first) {
        ppt_cap_b = first->baseline.mean / prompt->baseline.mean;
        ppt_cap_i = first->incident.mean / prompt->incident.mean;
      }
    }
    if (span_q && span_q->incident.per_request > 0 && ppt_cap_b > 0) {
      const Quantity* prompt_rate = s_.find_signal("prompt_token_rate");
      double pr_b = prompt_rate ? prompt_rate->baseline.mean : kNaN;
      double pr_i = prompt_rate ? prompt_rate->incident.mean : kNaN;
      if (std::isnan(pr_b) || std::isnan(pr_i)) {  // prompt tokens per request x requests per second
        pr_b = mean_of(prompt, false) * mean_of(rate, false);
        pr_i = mean_of(prompt, true) * mean_of(rate, true);
      }
      if (pr_b >= 0 && pr_i >= 0) {
        double span = span_q->incident.per_request;
        double u = std::clamp(pr_i * ppt_cap_b, 0.0, 0.95) - std::clamp(pr_b * ppt_cap_b, 0.0, 0.95);
        prefill_decode_caps_["long_prompts"] = std::max(0.0, u) * span;
        if (ppt_cap_i > 0)
          prefill_decode_caps_["prefill_slowdown"] =
              std::clamp(pr_i * std::max(0.0, ppt_cap_i - ppt_cap_b), 0.0, 0.95) * span;
      }
    }
    bool prefill_up = prefill ? compare_per_request(prefill).delta > compare_per_request(prefill).threshold
                              : ppt_ratio > 1.2;
    double s_ppt = prefill_up ? log_ramp(ppt_ratio, 1.25, 2.0) : 0;
    double hit_b = hit ? hit->baseline.mean : kNaN, hit_i = hit ? hit->incident.mean : kNaN;
    double s_prefix = (prefill_up || !prefill) ? ramp(hit_b - hit_i, 0.10, 0.35) : 0;

    // Stalls: long engine steps (stuck working) vs intervals without any step (stuck scheduling).
    Hypothesis stall = stall_hypothesis(false);

    // Queueing that no load change explains: a capped batch (max_num_seqs) or lost capacity.
    double s_waiting = waiting ? ramp(waiting->incident.mean - std::max(1.0, 2 * waiting->baseline.mean), 0, 3) : 0;
    double queue_share = e2e_change_.delta > 0 ? stage_delta("queue") / e2e_change_.delta : 0;

    // Decode slowdown is what is left of a per-token slowdown once load (bigger batches), KV
    // preemptions (recompute gaps) and stalls (one long gap) are accounted for.
    double s_decode = s_decode_raw;
    if (std::isnan(itl_p50_ratio)) s_decode *= (1 - 0.8 * s_kv) * (1 - 0.9 * stall.strength);
    // A prompt's prefill runs in steps shared with the running batch's decode, so a slower decode
    // step stretches the measured prefill time per prompt token too: a per-token rise next to a
    // decode slowdown is weaker evidence of its own.
    double s_prefill = std::max(s_ppt * (1 - 0.5 * s_prompt) * (1 - 0.5 * s_kv) * (1 - 0.8 * stall.strength) *
                                    (1 - 0.5 * s_decode),
                                s_prefix);

    // --- hypotheses, one per cause ---
    if (rate) {
      Hypothesis h{"load_increase", "queue"};
      // Capacity variant: waiting grows while the running batch does not (a concurrency cap binds).
      double batch_flat = 1;
      if (running && running->baseline.has_data() && running->incident.has_data())
        batch_flat = 1 - ramp(running->incident.mean - running->baseline.mean, 0.3, 1.5);
      double s_capacity = ramp(queue_share, 0.2, 0.5) * s_waiting * batch_flat;
      h.strength = std::max(s_rate, 0.0);
      h.evidence.push_back(ev(rate, "request rate"));
      if (running) h.evidence.push_back(ev(running, "running"));
      if (waiting) h.evidence.push_back(ev(waiting, "waiting"));
      if (queue) h.evidence.push_back(ev(queue, "queue"));
      if (s_rate > 0) {
        h.summary = "request rate rose from " + number(rate_c.baseline) + " to " + number(rate_c.incident) +
                    " req/s (" + fmt("x%.2f", rate_c.ratio) + "); requests queue for the engine";
      } else {
        capacity_candidate_ = s_capacity;
        h.summary = "requests wait for a free slot (waiting " + number(mean_of(waiting, false)) + " -> " +
                    number(mean_of(waiting, true)) + ") while the request rate is flat and the running batch stays at " +
                    number(running ? running->incident.max : kNaN) + ": the server's concurrency limit is reached";
      }
      h.next_steps = {"Scale out (more replicas) or shed/rate-limit load at the gateway; the engine is at capacity.",
                      "If KV usage leaves room and the batch is capped, raise --max-num-seqs (costs some ITL).",
                      "Put an admission limit at the gateway so excess load waits visibly instead of timing out."};
      h.why_not = "request rate " + number(rate_c.baseline) + " -> " + number(rate_c.incident) +
                  " req/s: within noise or below 15%";
      hyps_.push_back(h);
    }
    if (prompt) {
      Hypothesis h{"long_prompts", "prefill"};
      h.strength = s_prompt;
      h.evidence.push_back(ev(prompt, "prompt tokens"));
      if (prefill) h.evidence.push_back(ev(prefill, "prefill"));
      h.summary = "prompts got longer: mean " + number(prompt_c.baseline) + " -> " + number(prompt_c.incident) +
                  " tokens; prefill (TTFT) grows with prompt length";
      h.next_steps = {"Find the client or feature sending longer prompts (RAG context, chat history); cap prompt length "
                      "or lower --max-model-len.",
                      "Route long prompts to a separate pool, or lower --max-num-batched-tokens (e.g. 2048; vLLM V1 "
                      "always chunks prefills) so each step carries less prefill and running requests' ITL suffers "
                      "less (costs TTFT).",
                      "Enable prefix caching (--enable-prefix-caching) if the long prompts share a prefix."};
      h.why_not = "mean prompt tokens " + number(prompt_c.baseline) + " -> " + number(prompt_c.incident);
      hyps_.push_back(h);
    }
    if (output) {
      Hypothesis h{"long_outputs", "decode"};
      h.strength = s_output;
      h.evidence.push_back(ev(output, "output tokens"));
      if (per_token) h.evidence.push_back(ev(per_token, "per-token time"));
      if (decode) h.evidence.push_back(ev(decode, "decode"));
      h.summary = "responses got longer: mean " + number(output_c.baseline) + " -> " + number(output_c.incident) +
                  " output tokens while the time per token stays " + (tok_c.up ? "higher" : "flat") +
                  "; decode takes longer per request";
      h.next_steps = {"Check max_tokens sent by clients and whether a client stopped sending stop sequences.",
                      "Set a server-side cap on output length for the affected route/model.",
                      "Add decode capacity (replicas) if the longer answers are expected."};
      h.why_not = "mean output tokens " + number(output_c.baseline) + " -> " + number(output_c.incident);
      hyps_.push_back(h);
    }
    if (kv || preempt) {
      Hypothesis h{"kv_cache_pressure", "queue"};
      h.strength = s_kv;
      if (kv) h.evidence.push_back(ev(kv, "kv usage", /*use_max=*/true));
      if (preempt) h.evidence.push_back(ev(preempt, "preemptions"));
      if (waiting) h.evidence.push_back(ev(waiting, "waiting"));
      if (running) h.evidence.push_back(ev(running, "running"));
      h.summary = "KV cache is full (peak usage " + percent(kv_max) + ", baseline " + percent(kv_base) +
                  "), preemptions " + number(pre_b) + " -> " + number(pre_i) +
                  "/s: fewer sequences fit, the rest wait or are recomputed";
      h.next_steps = {"Raise --gpu-memory-utilization if the GPU has free memory (more KV blocks).",
                      "Lower --max-num-seqs or --max-num-batched-tokens so fewer sequences compete for KV blocks; "
                      "lower --max-model-len only if a few very long sequences hold most blocks (paged KV is "
                      "allocated on demand, so it does not help ordinary requests).",
                      "Use an FP8 KV cache (--kv-cache-dtype fp8) or more tensor parallelism; or scale out."};
      h.why_not = "KV peak " + percent(kv_max) + ", preemptions " + number(pre_i) + "/s";
      hyps_.push_back(h);
    }
    if (per_token) {
      Hypothesis h{"decode_slowdown", "decode"};
      h.strength = s_decode;
      h.evidence.push_back(ev(per_token, "time per output token"));
      if (itl && per_token != itl) h.evidence.push_back({itl->metric + " (p50)", itl->baseline.p50, itl->incident.p50, "s"});
      if (rate) h.evidence.push_back(ev(rate, "request rate"));
      if (const Quantity* gpu = s_.find_signal("gpu_util")) h.evidence.push_back(ev(gpu, "gpu util"));
      h.summary = "each output token takes longer: " + seconds(tok_c.baseline) + " -> " + seconds(tok_c.incident) +
                  " per token (" + fmt("x%.2f", tok_c.ratio) + ") at " +
                  (s_rate > 0 ? "higher" : "unchanged") + " load";
      h.next_steps = {"Check GPU clocks, power and thermals (nvidia-smi -q -d CLOCK,PERFORMANCE; "
                      "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS): throttling cuts clocks 2x or more.",
                      "Look for another process sharing the GPU or memory bandwidth (nvidia-smi pmon).",
                      "Compare with the last deploy: model, quantization, driver, engine version, speculative decoding."};
      h.why_not = "per-token time " + seconds(tok_c.baseline) + " -> " + seconds(tok_c.incident) +
                  (s_decode_raw > 0 ? " (explained by load, KV preemptions or stalls)" : "");
      hyps_.push_back(h);
    }
    if (prefill || s_.find_signal("prefill_time_per_token")) {
      Hypothesis h{"prefill_slowdown", "prefill"};
      h.strength = s_prefill;
      h.evidence.push_back({ppt_metric.empty() ? "prefill per prompt token" : ppt_metric, ppt_b, ppt_i, "s/token"});
      if (prefill) h.evidence.push_back(ev(prefill, "prefill"));
      if (hit) h.evidence.push_back(ev(hit, "prefix cache hit rate"));
      if (s_prefix > 0 && s_prefix >= s_ppt * 0.5) {
        h.summary = "prefix-cache hit rate fell from " + percent(hit_b) + " to " + percent(hit_i) +
                    ": more prompt tokens are computed, prefill per prompt token " + seconds(ppt_b) + " -> " +
                    seconds(ppt_i);
        h.next_steps = {"Check that prefix caching is still on (--enable-prefix-caching) and the cache is not evicted "
                        "by KV pressure.",
                        "Check the router: prefix/session-aware routing keeps shared prefixes on one replica.",
                        "Check whether the prompt template changed (a timestamp or id at the start of the prompt "
                        "defeats prefix reuse)."};
      } else {
        h.summary = "prefill got slower per prompt token: " + seconds(ppt_b) + " -> " + seconds(ppt_i) +
                    " while prompt lengths are " + (s_prompt > 0 ? "also longer" : "unchanged");
        h.next_steps = {"Check GPU clocks, power and thermals (prefill is compute-bound: clocks matter most).",
                        "Check --max-num-batched-tokens / chunked-prefill settings and recent engine changes.",
                        "Look for a co-located job on the same GPU."};
      }
      h.why_not = "prefill per prompt token " + seconds(ppt_b) + " -> " + seconds(ppt_i);
      hyps_.push_back(h);
    }
    hyps_.push_back(stall);
    direct("preprocess_slowdown", "preprocess",
           "input processing (tokenization, chat template) got slower",
           {"Tokenization/templating is CPU-bound: check host CPU saturation and the API server's CPU time.",
            "Add API server processes (vLLM --api-server-count) or move tokenization off the serving process.",
            "Check for a changed chat template or tokenizer version."});
    direct_dependency();
    direct("network_slowdown", "send",
           "writing responses to clients got slower (server-side send time), the engine is not slower",
           {"Check the network path to clients: load balancer, proxy buffering (nginx proxy_buffering off for SSE), TLS.",
            "Check for slow readers (clients on poor links) and socket send buffers.",
            "Compare client-side TTFT with server-side TTFT to locate the gap."});
    direct("gateway_queue", "gateway_queue",
           "requests wait at the gateway for admission while upstream time is flat",
           {"Raise the gateway's concurrency limit if the upstream has headroom (its queue and KV usage are low).",
            "Otherwise add upstream replicas; the gateway queue only shows that demand exceeds the limit.",
            "Check that the gateway's limit matches the upstream's --max-num-seqs across replicas."});
    const Quantity* client_errors = s_.find_signal("client_error_ratio");
    if (errors || client_errors) {
      // Server-side failures first; a burst of rejected (4xx) requests counts too, named as such.
      auto strength_of = [&](const Quantity* q, double& eb, double& ei) {
        Change c = compare(q, 0.0, o_.noise_sigmas, 0.005);
        eb = std::isnan(c.baseline) ? 0 : c.baseline;
        ei = std::isnan(c.incident) ? 0 : c.incident;
        return (c.up && ei >= 2 * eb) ? ramp(ei - eb, 0.005, 0.05) : 0.0;
      };
      double eb = 0, ei = 0, cb = 0, ci = 0;
      double s_server = errors ? strength_of(errors, eb, ei) : 0;
      double s_client = client_errors ? strength_of(client_errors, cb, ci) : 0;
      bool client = s_client > s_server;
      Hypothesis h{"error_spike", ""};
      h.needs_slowdown = false;
      h.strength = std::max(s_server, s_client);
      if (errors) h.evidence.push_back({errors->metric, eb, ei, "ratio"});
      if (client_errors) h.evidence.push_back({client_errors->metric, cb, ci, "ratio"});
      if (rate) h.evidence.push_back(ev(rate, "request rate"));
      h.summary = client ? "requests rejected with 4xx rose from " + percent(cb) + " to " + percent(ci) +
                               " (prompt too long for --max-model-len, bad parameters, rate limits)"
                         : "error ratio rose from " + percent(eb) + " to " + percent(ei) + " of requests";
      h.next_steps = {"Look at the error kinds (status class, finish_reason=error) and the server log at these times.",
                      "Failed requests end fast and can hide a slowdown: compare successful-request latency.",
                      client ? "Check what clients send now (prompt lengths vs --max-model-len, parameters) and "
                               "recent client releases."
                             : "Check recent deploys/config changes, KV capacity (a sequence that cannot fit fails) "
                               "and dependencies for failures."};
      h.why_not = "error ratio " + percent(eb) + " -> " + percent(ei) + ", 4xx " + percent(cb) + " -> " + percent(ci);
      hyps_.push_back(h);
    }
  }

  void direct(const std::string& cause, const std::string& stage, const std::string& what,
              std::vector<std::string> steps) {
    const Quantity* q = s_.find_stage(stage);
    if (!q) return;
    Hypothesis h{cause, stage};
    h.strength = direct_stage_strength(stage);
    h.evidence.push_back({q->metric + " (per request)", q->baseline.per_request, q->incident.per_request, "s"});
    h.evidence.push_back({q->metric + " (p95)", q->baseline.p95, q->incident.p95, "s"});
    h.summary = what + ": " + seconds(q->baseline.per_request) + " -> " + seconds(q->incident.per_request) +
                " per request";
    h.next_steps = std::move(steps);
    h.why_not = stage + " " + seconds(q->baseline.per_request) + " -> " + seconds(q->incident.per_request);
    if (stage == "gateway_queue") {
      if (const Quantity* up = s_.find_stage("upstream_ttft")) {
        h.evidence.push_back({up->metric, up->baseline.mean, up->incident.mean, "s"});
        if (compare(up, 0.2, o_.noise_sigmas).up) h.strength *= 0.5;  // upstream slower too: not the gateway alone
      }
    }
    hyps_.push_back(h);
  }

  void direct_dependency() {
    const Quantity* q = s_.find_stage("dependency");
    if (!q) return;
    Hypothesis h{"dependency_slowdown", "dependency"};
    h.strength = direct_stage_strength("dependency");
    std::string worst;
    double worst_delta = -INFINITY;
    for (const auto& [name, dep] : s_.dependencies) {
      double delta = (std::isnan(dep.incident.mean) ? 0 : dep.incident.mean) -
                     (std::isnan(dep.baseline.mean) ? 0 : dep.baseline.mean);
      h.evidence.push_back({dep.metric + "{dependency=\"" + name + "\"}", dep.baseline.mean, dep.incident.mean, "s"});
      if (delta > worst_delta) {
        worst_delta = delta;
        worst = name;
      }
    }
    h.evidence.push_back({q->metric + " (per request)", q->baseline.per_request, q->incident.per_request, "s"});
    h.summary = "calls to " + (worst.empty() ? std::string("a dependency") : "dependency '" + worst + "'") +
                " got slower: " + seconds(q->baseline.per_request) + " -> " + seconds(q->incident.per_request) +
                " per request";
    h.next_steps = {"Look at " + (worst.empty() ? std::string("the dependency") : "'" + worst + "'") +
                        ": its own latency dashboards, error rate and recent changes.",
                    "Give the call a timeout and a fallback, or cache its results.",
                    "Call it concurrently with other pre-processing if the request allows."};
    h.why_not = "dependency " + seconds(q->baseline.per_request) + " -> " + seconds(q->incident.per_request);
    hyps_.push_back(h);
  }

  // stall_hypothesis tells an engine stuck working (long steps, GPU busy) from one that stopped
  // scheduling (intervals without steps, GPU idle, waiting grows).
  Hypothesis stall_hypothesis(bool from_pending) {
    const Quantity* step = s_.find_latency("step");
    const Quantity* steps = s_.find_signal("step_rate");
    const Quantity* busy = s_.find_signal("engine_busy");
    if (!busy) busy = s_.find_signal("gpu_util");
    const Quantity* itl = s_.find_latency("itl");
    const Quantity* waiting = s_.find_signal("waiting");
    const Quantity* running = s_.find_signal("running");

    double long_step = 0;
    Evidence step_ev;
    // Longer steps that the work explains are no stall: a uniformly slower engine (the per-token
    // median moved) or longer prompts (bigger prefill steps) stretch the longest step too.
    double explained = 1;
    if (double r = median_ratio(itl); r > 0 && std::isfinite(r)) explained *= std::max(1.0, r);
    // The longest prefill step is set by the longest prompt (or chunk), not the mean one: a few
    // long prompts among short ones stretch the longest step by their length ratio.
    if (const Quantity* prompt = s_.find_signal("prompt_tokens"); prompt && prompt->baseline.mean > 0 &&
                                                                  prompt->incident.mean > 0) {
      double longer = prompt->incident.mean / prompt->baseline.mean;
      if (prompt->baseline.max > 0 && prompt->incident.max > 0)
        longer = std::max(longer, prompt->incident.max / prompt->baseline.max);
      explained *= std::max(1.0, longer);
    }
    if (step && step->baseline.has_data() && step->incident.has_data()) {
      double r = detail::ratio(std::max(step->baseline.max, step->baseline.p99), step->incident.max) / explained;
      // A slower prefill or decode stretches steps a few times; a stall makes one step an order
      // of magnitude longer than any the baseline saw.
      long_step = std::isinf(r) ? 1 : log_ramp(r, 4, 12) * ramp(step->incident.max, 0.02, 0.2);
      step_ev = {step->metric + " (max bucket)", step->baseline.max, step->incident.max, "s"};
    } else if (itl && itl->baseline.has_data() && itl->incident.has_data()) {
      // Without a step histogram, one long gap per running sequence shows as an ITL tail that
      // moves while the median does not.
      double tail_b = detail::ratio(itl->baseline.p50, itl->baseline.max);
      double tail_i = detail::ratio(itl->incident.p50, itl->incident.max);
      double p50_r = detail::ratio(itl->baseline.p50, itl->incident.p50);
      long_step = p50_r < 1.3 ? log_ramp(detail::ratio(tail_b, tail_i), 3, 20) : 0;
      step_ev = {itl->metric + " (max bucket)", itl->baseline.max, itl->incident.max, "s"};
    }
    // Intervals with no engine step while work was pending. A scrape that comes late makes one
    // interval read no increase and the next one read two intervals' worth; a stalled engine does
    // not make up the steps it missed. So an empty interval next to one with about twice the
    // usual step count is a late scrape, not a stall.
    auto idle_fraction = [&](const WindowStat& st, const WindowStat* pending) {
      if (st.intervals.empty()) return 0.0;
      std::vector<double> busy_values;
      for (double v : st.intervals)
        if (v > 0) busy_values.push_back(v);
      double usual = kNaN;
      if (!busy_values.empty()) {
        std::nth_element(busy_values.begin(), busy_values.begin() + busy_values.size() / 2, busy_values.end());
        usual = busy_values[busy_values.size() / 2];
      }
      auto caught_up = [&](std::size_t i) { return i < st.intervals.size() && st.intervals[i] >= 1.6 * usual; };
      int idle = 0, n = 0;
      for (std::size_t i = 0; i < st.intervals.size(); ++i) {
        double v = st.intervals[i];
        if (std::isnan(v)) continue;
        ++n;
        double p = pending && i < pending->intervals.size() ? pending->intervals[i] : 1;
        bool late_scrape = caught_up(i + 1) || (i > 0 && caught_up(i - 1));
        if (v <= 0 && !(p < 0.5) && !late_scrape) ++idle;
      }
      return n ? static_cast<double>(idle) / n : 0.0;
    };
    double idle_b = 0, idle_i = 0;
    if (steps) {
      idle_b = idle_fraction(steps->baseline, waiting ? &waiting->baseline : nullptr);
      idle_i = idle_fraction(steps->incident, waiting ? &waiting->incident : nullptr);
    }
    double busy_b = busy ? busy->baseline.mean : kNaN, busy_i = busy ? busy->incident.mean : kNaN;
    // Whole intervals without a step take their share of the busy time with them: an engine (or
    // GPU) as busy as before cannot have stopped for a tenth of the window. Where the busy share
    // is known, the idle share counts only as far as the busy share fell (twice that, for the
    // sampling of both), so a scrape gap the late-scrape rule missed is not a stall.
    double idle_delta = idle_i - idle_b;
    if (busy_b > 0 && !std::isnan(busy_i))
      idle_delta = std::min(idle_delta, 2 * std::max(0.0, (busy_b - busy_i) / busy_b));
    double s_idle = ramp(idle_delta, 0.02, 0.15);
    double busy_drop = ramp((busy_b - busy_i) / std::max(busy_b, 1e-9), 0.05, 0.3);
    double waiting_up = waiting ? ramp(waiting->incident.mean - waiting->baseline.mean, 0.5, 3) : 0;

    // Stuck scheduling: no steps, GPU idle, waiting grows; stuck working: one long step, GPU busy.
    double s_worker = std::max(s_idle * (1 - 0.7 * long_step), busy_drop * waiting_up * (1 - long_step));
    double s_engine = long_step * (1 - 0.7 * busy_drop);
    if (from_pending && s_worker == 0 && s_engine == 0) {
      s_worker = busy_drop > 0 ? 0.6 : 0.3;
      s_engine = busy_drop > 0 ? 0.3 : 0.6;
    }
    bool worker = s_worker > s_engine;
    Hypothesis h{worker ? "worker_stall" : "engine_stall", worker ? "queue" : "decode"};
    h.strength = std::max(s_worker, s_engine);
    h.needs_slowdown = true;
    if (!step_ev.metric.empty()) h.evidence.push_back(step_ev);
    if (steps)
      h.evidence.push_back({steps->metric + " (share of intervals without a step)", idle_b, idle_i, "ratio"});
    if (busy) h.evidence.push_back(ev(busy, "busy"));
    if (waiting) h.evidence.push_back(ev(waiting, "waiting"));
    if (running) h.evidence.push_back(ev(running, "running"));
    if (worker) {
      h.summary = "the engine stopped scheduling for whole intervals (" + percent(idle_i) +
                  " of intervals without a step, baseline " + percent(idle_b) +
                  ") while requests waited and the GPU idled";
      h.next_steps = {"Look for a blocked scheduler/worker: py-spy dump of the engine process, GC pauses, a stuck "
                      "tokenizer or detokenizer thread, a hung collective (NCCL) between workers.",
                      "Check host CPU and memory pressure (node-exporter: CPU steal, swap) on the serving host.",
                      "If it repeats, restart the replica and capture its log around the gaps."};
    } else {
      h.summary = "the engine stalled while busy: single steps took " + seconds(step_ev.incident) + " (baseline " +
                  seconds(step_ev.baseline) + "); every running sequence saw the same gap";
      h.next_steps = {"Look at the server log at the stall times for CUDA errors, hung kernels or NCCL timeouts; "
                      "check dmesg for GPU XID errors.",
                      "Check GPU health (nvidia-smi -q: ECC, retired pages, clocks) and host swap/IO stalls.",
                      "Restart the replica if stalls repeat; drain it from the load balancer meanwhile."};
    }
    h.why_not = "longest step " + seconds(step_ev.incident) + " vs " + seconds(step_ev.baseline) +
                ", intervals without a step " + percent(idle_i);
    return h;
  }

  // add_host_cpu_evidence: tokenization, scheduling, detokenization, the HTTP front end and a
  // gateway run on the host's CPUs. When those are saturated, the causes that live there (and a
  // decode or stall whose step loop waits for the CPU) carry that as evidence and as the first
  // next step; otherwise the busy share is shown so a reader can rule the host out.
  void add_host_cpu_evidence() {
    const Quantity* cpu = s_.find_signal("host_cpu_busy");
    if (!cpu || !cpu->incident.has_data()) return;
    double b = cpu->baseline.mean, i = cpu->incident.mean;
    // Above ~85 % average busy over the window, runnable threads queue for a core in the busy
    // intervals (a window average hides the peaks). It explains a slowdown only if it came with
    // it: a host as busy in the baseline leaves no headroom but is not what changed.
    bool saturated = i >= 0.85;
    bool rose = !(b >= i - 0.05);
    Evidence e{cpu->metric + " (host CPU busy share)", b, i, "ratio"};
    std::string step = "The serving host's CPUs are saturated (" + percent(i) + " busy, baseline " + percent(b) +
                       "): find what uses them (top -H, pidstat -t 1), move co-located jobs away or give the "
                       "server dedicated cores (taskset/cpuset, Kubernetes CPU requests = limits); tokenization, "
                       "scheduling and detokenization wait for a core.";
    for (auto& h : hyps_) {
      static const std::set<std::string> kCpuSide = {"preprocess_slowdown", "worker_stall", "gateway_queue",
                                                      "network_slowdown",    "decode_slowdown", "engine_stall"};
      if (!kCpuSide.count(h.cause)) continue;
      h.evidence.push_back(e);
      if (!saturated || !rose) continue;
      h.next_steps.insert(h.next_steps.begin(), step);
      h.summary += "; the host's CPUs are saturated (" + percent(i) + " busy)";
    }
    if (saturated && rose)
      d_.notes.push_back("host CPU " + percent(b) + " -> " + percent(i) + " busy (" + cpu->metric +
                         "): CPU-side work (tokenization, scheduling, HTTP, the gateway) competes for cores");
    else if (saturated)
      d_.notes.push_back("host CPU was already " + percent(b) + " busy in the baseline (" + percent(i) +
                         " now, " + cpu->metric + "): not what changed, but the host has no headroom");
  }

  // --- shares --------------------------------------------------------------------------------
  Hypothesis* find(const std::string& cause) {
    for (auto& h : hyps_)
      if (h.cause == cause) return &h;
    return nullptr;
  }

  // split shares a stage's change among the causes that can move it, by strength x weight. A cap
  // (seconds per request) bounds what one cause's mechanism can physically add to the stage; what
  // a capped cause cannot take goes to the others by weight, else stays unexplained.
  void split(const std::string& stage, const std::vector<std::pair<std::string, double>>& weights,
             const std::map<std::string, double>& caps = {}) {
    double delta = stage_delta(stage);
    if (delta <= 0) return;
    std::map<std::string, double> give;  // cause -> seconds
    std::set<std::string> full;           // causes at their cap
    double left = delta;
    for (int round = 0; round < 8 && left > 1e-12; ++round) {
      double total = 0;
      for (auto& [cause, w] : weights)
        if (Hypothesis* h = find(cause); h && !full.count(cause)) total += h->strength * w;
      if (total <= 0) break;
      double handed = 0;
      for (auto& [cause, w] : weights) {
        Hypothesis* h = find(cause);
        if (!h || h->strength <= 0 || full.count(cause)) continue;
        double add = left * h->strength * w / total;
        if (auto cap = caps.find(cause); cap != caps.end() && give[cause] + add >= cap->second) {
          add = std::max(0.0, cap->second - give[cause]);
          full.insert(cause);
        }
        give[cause] += add;
        handed += add;
      }
      left -= handed;
    }
    for (auto& [cause, sec] : give)
      if (Hypothesis* h = find(cause); h && sec > 0) h->portions[stage] += sec;
  }

  void assign_shares() {
    // KV pressure that comes with longer requests or more of them is the mechanism, not the
    // change: the change ranks first and both are reported.
    if (Hypothesis* kv = find("kv_cache_pressure")) {
      double root = 0;
      for (const char* c : {"long_prompts", "long_outputs", "load_increase"})
        if (Hypothesis* h = find(c)) root = std::max(root, h->strength);
      kv->strength *= 1 - 0.4 * root;
    }
    if (Hypothesis* load = find("load_increase"); load && load->strength == 0 && capacity_candidate_ > 0) {
      // Queueing with no other capacity loss: the server's own concurrency limit binds.
      double others = 0;
      for (const char* c : {"kv_cache_pressure", "worker_stall", "engine_stall", "decode_slowdown", "prefill_slowdown",
                            "long_prompts", "long_outputs"})
        if (Hypothesis* h = find(c)) others = std::max(others, h->strength);
      load->strength = capacity_candidate_ * (1 - std::min(1.0, 2 * others));
    }
    for (const char* s : {"preprocess", "dependency", "send", "gateway_queue"}) {
      static const std::map<std::string, std::string> kOwner = {{"preprocess", "preprocess_slowdown"},
                                                                {"dependency", "dependency_slowdown"},
                                                                {"send", "network_slowdown"},
                                                                {"gateway_queue", "gateway_queue"}};
      split(s, {{kOwner.at(s), 1.0}});
    }
    const std::string stall = find("worker_stall") ? "worker_stall" : "engine_stall";
    // Decode also stretches when prefills share its steps (chunked prefill), when sequences are
    // preempted and recomputed, or when the batch grows under load.
    split("decode", {{"decode_slowdown", 1}, {"long_outputs", 1}, {"kv_cache_pressure", 0.5}, {stall, 1},
                     {"load_increase", 0.3}, {"prefill_slowdown", 0.5}, {"long_prompts", 0.5}},
          prefill_decode_caps_);
    split("postprocess", {{"network_slowdown", 1}, {"preprocess_slowdown", 0.5}});
    split("prefill", {{"prefill_slowdown", 1}, {"long_prompts", 1}, {"kv_cache_pressure", 0.5}, {stall, 0.7},
                      {"load_increase", 0.3}});
    // A gateway sees the upstream's time to first token (its queue and prefill) and the stream
    // after it (its decode); with no engine stages of its own, those carry the same causes.
    if (!stage_delta_.count("decode"))
      split("stream", {{"decode_slowdown", 1}, {"long_outputs", 1}, {"kv_cache_pressure", 0.5}, {stall, 1},
                       {"load_increase", 0.3}, {"prefill_slowdown", 0.5}, {"long_prompts", 0.5}},
            prefill_decode_caps_);
    if (!stage_delta_.count("prefill") && !stage_delta_.count("queue"))
      split("upstream_ttft", {{"prefill_slowdown", 1}, {"long_prompts", 1}, {"load_increase", 1}, {"kv_cache_pressure", 1},
                              {stall, 1}, {"decode_slowdown", 0.8}, {"long_outputs", 0.8}});
    // Servers that do not split prefill from decode (TGI, Triton) report their sum: every engine-side
    // cause can move it (prefill-side ones within the same bound on the decode part's share).
    split("inference", {{"decode_slowdown", 1}, {"long_outputs", 1}, {"prefill_slowdown", 1}, {"long_prompts", 1},
                        {"kv_cache_pressure", 0.5}, {stall, 1}, {"load_increase", 0.3}});
    split("queue", {{"load_increase", 1}, {"kv_cache_pressure", 1}, {stall, 1}, {"decode_slowdown", 0.8},
                    {"prefill_slowdown", 0.8}, {"long_prompts", 0.8}, {"long_outputs", 0.8}});
  }

  // --- verdict -------------------------------------------------------------------------------
  void rank_and_decide() {
    bool latency_changed = slow_ || tail_slow_;
    double change = e2e_change_.delta;
    for (auto& h : hyps_) {
      double explained = 0;
      std::string best_stage = h.stage;
      double best = 0;
      for (auto& [stage, sec] : h.portions) {
        explained += sec;
        if (sec > best) {
          best = sec;
          best_stage = stage;
        }
      }
      // The stage a cause hits is its own (mechanism) stage when that got a fair part of what it
      // explains; knock-on queueing elsewhere does not rename it.
      // Behind a gateway the mechanism stages show as the upstream's TTFT (queue, prefill) and the
      // stream (decode).
      std::string own_stage = h.stage;
      if (!h.portions.count(own_stage)) {
        if (own_stage == "decode") own_stage = "stream";
        else if (own_stage == "prefill" || own_stage == "queue") own_stage = "upstream_ttft";
      }
      if (auto own = h.portions.find(own_stage); own != h.portions.end() && own->second >= 0.05 * explained)
        best_stage = own_stage;
      double share = change > 0 && !h.portions.empty() ? explained / change : kNaN;
      double score = h.strength;
      if (h.needs_slowdown) {
        if (!latency_changed) {
          if (h.strength > 0) d_.considered.push_back({h.cause, h.strength, "no significant latency change"});
          continue;
        }
        if (!std::isnan(share)) score = h.strength * (0.4 + 0.6 * std::min(1.0, share / 0.5));
        else if (!stage_delta_.empty()) score = h.strength * 0.4;  // explains no measured stage change
      }
      if (score < o_.min_score) {
        d_.considered.push_back({h.cause, score, h.why_not});
        continue;
      }
      Finding f{h.cause, best_stage, std::min(1.0, score), share, h.summary, h.evidence, h.next_steps};
      d_.findings.push_back(f);
    }
    std::stable_sort(d_.findings.begin(), d_.findings.end(),
                     [](const Finding& a, const Finding& b) { return a.score > b.score; });
    bool has_cause = false, only_data = true;
    for (const auto& f : d_.findings) {
      if (f.cause != "metrics_missing" && f.cause != "target_down") only_data = false;
      has_cause = true;
    }
    if (latency_changed || (has_cause && !only_data)) {
      d_.verdict = "degraded";
      if (e2e_ && !std::isnan(change)) {
        d_.headline = "degraded: mean e2e " + seconds(e2e_change_.baseline) + " -> " + seconds(e2e_change_.incident) +
                      " (" + fmt("%+.0f%%", (e2e_change_.ratio - 1) * 100) + ")";
      } else {
        d_.headline = "degraded";
      }
      if (!d_.findings.empty() && d_.findings.front().cause != "metrics_missing")
        d_.headline += "; top cause " + d_.findings.front().cause +
                       (d_.findings.front().stage.empty() ? "" : " (" + d_.findings.front().stage + ")");
      if (latency_changed && (d_.findings.empty() || only_data))
        d_.notes.push_back("latency rose but no known cause matches the evidence; see the stage table");
    } else if (has_cause) {
      d_.verdict = "no_data";
      d_.headline = "no data: cannot confirm health, metrics are missing or renamed";
    } else {
      d_.verdict = "healthy";
      d_.headline = e2e_ ? "healthy: mean e2e " + seconds(e2e_change_.baseline) + " -> " + seconds(e2e_change_.incident) +
                               " (within noise)"
                         : "healthy: per-token times unchanged";
    }
  }

  Diagnosis finish() {
    if (d_.verdict.empty()) d_.verdict = "no_data";
    return std::move(d_);
  }

  const Snapshot& s_;
  const DiagnoseOptions& o_;
  Diagnosis d_;
  const Quantity* e2e_ = nullptr;
  detail::Change e2e_change_;
  bool slow_ = false, tail_slow_ = false;
  double capacity_candidate_ = 0;
  // What prefill-side causes can add to a decoding request: the engine time their extra prefill
  // work takes while it decodes (seconds per request; absent = no bound known).
  std::map<std::string, double> prefill_decode_caps_;
  std::map<std::string, double> stage_delta_;
  std::vector<Hypothesis> hyps_;
};

}  // namespace

Diagnosis diagnose(const Snapshot& snapshot, const DiagnoseOptions& options) {
  return Reasoner(snapshot, options).run();
}

int exit_code_for(const std::string& verdict) {
  if (verdict == "healthy") return 0;
  if (verdict == "degraded") return 1;
  return 2;
}

}  // namespace inferscope::doctor
