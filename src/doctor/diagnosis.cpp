// The doctor's reasoning. It follows how an inference server works rather than fitting test
// cases: stage means add up to the e2e mean, so the e2e change splits into stage changes; each
// cause has a mechanism signature (per-token times vs token counts vs load vs KV vs stalls) that
// says which stages it can move; the queue is a symptom shared by every capacity loss.
// This file is the flow (data checks, slowdown, stage table, verdict); each cause's evidence is
// its family's (cause_family.h) and its stages and next steps are its CauseSpec's.
#include "doctor/diagnosis.h"

#include <algorithm>
#include <cmath>

#include "doctor/cause_family.h"
#include "doctor/stage_shares.h"

namespace inferscope::doctor {
namespace {

using detail::compare;
using detail::Evaluation;
using detail::Hypothesis;
using detail::mean_of;
using detail::number;
using detail::percent;
using detail::seconds;

// The name TTFT goes by among the symptoms (the stages go by their own).
constexpr std::string_view kTtftSymptom = "TTFT";

std::string stage_name(const std::optional<Stage>& stage) {
  return stage ? std::string(dialect::to_string(*stage)) : std::string();
}

class Reasoner {
 public:
  Reasoner(const Snapshot& s, const DiagnoseOptions& o) : s_(s), o_(o), e_(s, o) { d_.snapshot = s; }

  Diagnosis run() {
    if (detail::evaluate_data_presence(s_, d_.findings)) {
      d_.verdict = "no_data";
      d_.headline = "no data: every scrape target is down";
      return finish();
    }
    e2e_ = e_.e2e = s_.find(SignalId::kE2e);
    bool llamacpp_style = !e2e_ && (s_.find(SignalId::kTpot) || s_.find(SignalId::kPrefillTimePerToken));
    if (!e2e_ && !llamacpp_style) {
      if (queue_alone("no end-to-end latency metric of a server")) return finish();
      if (failing_alone("no end-to-end latency metric found")) return finish();
      no_data("no end-to-end latency metric found" + std::string(s_.dialect.empty() ? " (no known dialect)" : ""));
      return finish();
    }
    if (e2e_ && !enough_requests()) return finish();
    measure_slowdown(llamacpp_style);
    build_stage_table();
    weigh_causes();
    add_host_cpu_evidence();
    detail::assign_shares(e_);
    rank_and_decide();
    return finish();
  }

 private:
  // --- data presence -------------------------------------------------------------------------
  void no_data(const std::string& why) {
    d_.verdict = "no_data";
    d_.headline = "no data: " + why;
    d_.notes.push_back(why);
  }

  bool enough_requests() {
    double base_n = e2e_->baseline.count, inc_n = e2e_->incident.count;
    if (inc_n >= o_.min_requests && base_n >= o_.min_requests) return true;
    // Nothing finishes while work is pending: that is a stall, not an absence of data.
    double pending = std::max({0.0, mean_of(s_.find(SignalId::kRunning), true), mean_of(s_.find(SignalId::kWaiting), true),
                               mean_of(s_.find(SignalId::kInFlight), true)});
    if (inc_n < o_.min_requests && pending >= 1 && base_n >= o_.min_requests) {
      Hypothesis h = detail::stall_hypothesis(e_, /*from_pending=*/true);
      Finding f{std::string(to_string(h.cause)), stage_name(h.stage), std::max(0.6, h.strength), kNaN, h.summary,
                h.evidence, h.next_steps};
      d_.findings.insert(d_.findings.begin(), f);
      d_.verdict = "degraded";
      d_.headline = "degraded: requests stopped finishing (" + number(inc_n) + " in the window, " + number(pending) +
                    " pending)";
      d_.e2e_baseline = e2e_->baseline;
      d_.e2e_incident = e2e_->incident;
      return false;
    }
    std::string few = "too few finished requests to compare (baseline " + number(base_n) + ", incident " +
                      number(inc_n) + ", need " + number(o_.min_requests) + ")";
    // Workers that stopped consuming leave the server idle: the queue in front tells why.
    if (!queue_alone("the server behind the queue has " + few) && !failing_alone(few)) no_data(few);
    return false;
  }

  // queue_phrase: what users of the queue feel, "jobs wait in the queue (peak depth 1 -> 40,
  // oldest job 500 ms -> 60.00 s)".
  std::string queue_phrase() const {
    const Quantity* depth = s_.find(SignalId::kQueueDepth);
    const Quantity* age = s_.find(SignalId::kQueueOldestAge);
    std::string text = "jobs wait in the queue (peak depth " + number(depth ? depth->baseline.max : kNaN) +
                       " -> " + number(depth ? depth->incident.max : kNaN);
    // An age only while the queue was empty (Celery without enqueue times) tells no wait.
    const bool base_age = detail::queue_age_known(s_, false), inc_age = detail::queue_age_known(s_, true);
    if (age && (base_age || inc_age))
      text += ", oldest job " + seconds(base_age ? age->baseline.max : kNaN) + " -> " +
              seconds(inc_age ? age->incident.max : kNaN);
    return text + ")";
  }

  // headline_fields are what a cause's Headline templates fill in for finding `f`.
  HeadlineFields headline_fields(const Finding& f) const { return {f.cause, f.stage, f.summary, queue_phrase()}; }

  // named_in_headline: how the headline names the top finding after its lead, "; top cause
  // decode_slowdown (decode)" (CauseSpec::headline); empty when its cause is not named.
  std::string named_in_headline(const Finding& top) const {
    const CauseSpec* cause = spec_named(top.cause);
    const std::string_view names = cause ? cause->headline.names : Headline{}.names;
    if (names.empty()) return {};
    // A disaggregated fleet's pool or endpoint its evidence points at.
    std::string at;
    if (!top.where.endpoint.empty())
      at = " at endpoint " + top.where.endpoint + (top.where.pool.empty() ? "" : " (pool " + top.where.pool + ")");
    else if (!top.where.pool.empty())
      at = " in pool " + top.where.pool;
    return "; " + fill_headline(names, headline_fields(top)) + at;
  }

  // queue_alone weighs the queue in front when the server gives nothing to compare: workers
  // that stopped consuming send it no requests. True when a queue cause was found.
  bool queue_alone(const std::string& why) {
    detail::evaluate_queue(e_);
    for (const Hypothesis& h : e_.hypotheses) {
      const std::string cause(to_string(h.cause));
      if (h.strength < o_.min_score) {
        if (h.strength > 0 || !h.why_not.empty()) d_.considered.push_back({cause, h.strength, h.why_not});
        continue;
      }
      d_.findings.push_back({cause, stage_name(h.stage), std::min(1.0, h.strength), kNaN, h.summary, h.evidence,
                             h.next_steps});
    }
    if (std::none_of(d_.findings.begin(), d_.findings.end(),
                     [](const Finding& f) { return group_of(f.cause) == CauseGroup::kJobQueue; })) {
      e_.hypotheses.clear();
      d_.considered.clear();
      return false;
    }
    std::stable_sort(d_.findings.begin(), d_.findings.end(),
                     [](const Finding& a, const Finding& b) { return a.score > b.score; });
    d_.verdict = "degraded";
    d_.headline = "degraded: " + queue_phrase() + named_in_headline(d_.findings.front());
    d_.notes.push_back(why + ": the queue in front was weighed on its own");
    return true;
  }

  // failing_alone weighs the failures when latency gives nothing to compare: a server that
  // rejects every request has no TTFT, and too few of its requests may finish to compare. True
  // when they are a finding (the verdict is then degraded, never no_data while requests count).
  bool failing_alone(const std::string& why) {
    detail::evaluate_errors(e_);
    const auto failing = std::find_if(e_.hypotheses.begin(), e_.hypotheses.end(), [&](const Hypothesis& h) {
      return group_of(to_string(h.cause)) == CauseGroup::kErrors && h.strength >= o_.min_score;
    });
    if (failing == e_.hypotheses.end()) {
      e_.hypotheses.clear();
      return false;
    }
    const Hypothesis& h = *failing;
    d_.findings.insert(d_.findings.begin(), Finding{std::string(to_string(h.cause)), stage_name(h.stage),
                                                    std::min(1.0, h.strength), kNaN, h.summary, h.evidence,
                                                    h.next_steps});
    d_.verdict = "degraded";
    d_.headline = "degraded: " + h.summary + named_in_headline(d_.findings.front());
    d_.notes.push_back(why + ": the failures were weighed on their own");
    return true;
  }

  // --- slowdown ------------------------------------------------------------------------------
  void measure_slowdown(bool llamacpp_style) {
    if (llamacpp_style) {
      // No latency histograms: the per-token times are the only latency the server tells.
      for (const Quantity* q : {s_.find(SignalId::kTpot), s_.find(SignalId::kPrefillTimePerToken)}) {
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
    const detail::Change& change = e_.e2e_change = compare(e2e_, o_.min_relative_change, o_.noise_sigmas, 1e-4);
    d_.e2e_change_s = change.delta;
    d_.e2e_noise_s = change.threshold;
    slow_ = change.up;
    // A tail that moved a lot while the mean barely did (stalls, preemption gaps) also counts.
    // p95 rather than p99: with tens of requests a window's p99 is one request.
    double p95_ratio = detail::ratio(e2e_->baseline.p95, e2e_->incident.p95);
    tail_slow_ = p95_ratio >= 1.5 && e2e_->incident.count >= 30 && change.delta > 0.5 * change.threshold;
    if (!slow_ && change.delta > 0)
      d_.notes.push_back("mean e2e rose by " + seconds(change.delta) + " (" + percent(change.ratio - 1) +
                         "), below the noise floor of " + seconds(change.threshold) +
                         " set by the baseline's own variation");
    measure_symptoms();
  }

  // measure_symptoms weighs TTFT and each stage's time per request against its own baseline
  // noise, as e2e is. A streaming user waits for the first token: a stage in front of it that
  // multiplies TTFT is a regression even when e2e, dominated by decode, stays within its noise.
  // "Far outside" its noise: twice its floor (itself >= 3 standard errors and >= 10 %) and at
  // least x1.5; a stage must also add a real amount (>= 4 % of the baseline e2e, as a direct
  // stage's cause needs), so a millisecond stage that doubles does not call a server degraded.
  void measure_symptoms() {
    constexpr double kFarNoise = 2, kFarRatio = 1.5, kStageShareOfE2e = 0.04;
    auto far = [&](const detail::Change& c) {
      return c.delta > kFarNoise * c.threshold && c.ratio >= kFarRatio;
    };
    if (const Quantity* ttft = s_.find(SignalId::kTtft)) {
      detail::Change c = compare(ttft, o_.min_relative_change, o_.noise_sigmas, 1e-4);
      e_.symptoms.push_back({std::string(kTtftSymptom), c, far(c)});
    }
    for (Stage stage : detail::pipeline()) {
      const Quantity* q = s_.find(stage);
      if (!q || std::isnan(q->baseline.per_request) || std::isnan(q->incident.per_request)) continue;
      // The stage's time per finished request, so stages add up to e2e; its floor is its own.
      detail::Change c = e_.compare_per_request(q);
      c.baseline = q->baseline.per_request;
      c.incident = q->incident.per_request;
      c.delta = c.incident - c.baseline;
      c.ratio = detail::ratio(c.baseline, c.incident);
      c.up = c.delta > c.threshold;
      bool real = c.delta >= kStageShareOfE2e * e2e_->baseline.mean;
      e_.symptoms.push_back({std::string(dialect::to_string(stage)), c, far(c) && real});
    }
    for (const detail::Symptom& sym : e_.symptoms) symptom_slow_ = symptom_slow_ || sym.far;
  }

  // symptom_phrase names what moved beyond e2e: TTFT (what the user waits for) first, then the
  // stages by their rise in seconds: "TTFT x4.0, preprocess x30.0, e2e +7% (within its noise)".
  std::string symptom_phrase() const {
    std::vector<const detail::Symptom*> far;
    for (const detail::Symptom& sym : e_.symptoms)
      if (sym.far) far.push_back(&sym);
    // measure_symptoms puts TTFT first; a stable sort by rise keeps it there.
    std::stable_sort(far.begin() + (far.empty() || far.front()->name != kTtftSymptom ? 0 : 1), far.end(),
                     [](const detail::Symptom* a, const detail::Symptom* b) { return a->change.delta > b->change.delta; });
    std::string text;
    for (const detail::Symptom* sym : far)
      text += (text.empty() ? "" : ", ") + sym->name + " " +
              (std::isfinite(sym->change.ratio) ? common::format_printf("x%.1f", sym->change.ratio) : std::string("new"));
    const detail::Change& e2e = e_.e2e_change;
    if (!std::isnan(e2e.ratio)) text += ", e2e " + common::format_printf("%+.0f%%", (e2e.ratio - 1) * 100) + " (within its noise)";
    return text;
  }

  // far_symptom_delta: the largest rise (seconds) among the symptoms that carry the verdict.
  double far_symptom_delta() const {
    double delta = 0;
    for (const detail::Symptom& sym : e_.symptoms)
      if (sym.far) delta = std::max(delta, sym.change.delta);
    return delta;
  }

  void build_stage_table() {
    const double change = e_.e2e_change.delta;
    double total = 0;
    for (Stage stage : detail::pipeline()) {
      const Quantity* q = s_.find(stage);
      if (!q) continue;
      StageRow row;
      row.stage = std::string(dialect::to_string(stage));
      row.baseline = q->baseline;
      row.incident = q->incident;
      if (!std::isnan(q->baseline.per_request) && !std::isnan(q->incident.per_request)) {
        row.delta_s = q->incident.per_request - q->baseline.per_request;
        e_.stage_deltas[row.stage] = row.delta_s;
        // The queue's wait comes before the server's e2e: no share of its change.
        if (stage != Stage::kQueueWait) {
          total += row.delta_s;
          if (change > 0) row.share = row.delta_s / change;
        }
      }
      d_.stages.push_back(row);
    }
    if (change > 0 && !e_.stage_deltas.empty()) d_.unexplained_share = std::clamp(1 - total / change, -1.0, 1.0);
    if (d_.stages.empty() && e2e_) {
      d_.notes.push_back(std::string(kNoStageBreakdownNote) + ": " + e2e_->metric +
                         " is the only latency it exposes (no queue, prefill or decode durations), so a slowdown is "
                         "named on e2e with the load and token figures it has");
    }
  }

  // --- causes --------------------------------------------------------------------------------
  // weigh_causes runs the families in the order their discounts need (cause_family.h), then
  // lists the hypotheses in the table's order.
  void weigh_causes() {
    detail::evaluate_load_mix(e_);
    detail::evaluate_kv_capacity(e_);
    detail::evaluate_stalls(e_);
    detail::evaluate_engine_features(e_);
    detail::evaluate_disaggregation(e_);
    detail::evaluate_engine_speed(e_);
    detail::evaluate_capacity_drop(e_);
    detail::evaluate_direct_stages(e_);
    detail::evaluate_errors(e_);
    detail::evaluate_queue(e_);
    std::stable_sort(e_.hypotheses.begin(), e_.hypotheses.end(),
                     [](const Hypothesis& a, const Hypothesis& b) { return a.cause < b.cause; });
  }

  // add_host_cpu_evidence: tokenization, scheduling, detokenization, the HTTP front end and a
  // gateway run on the host's CPUs. When those are saturated, the causes that live there (and a
  // decode or stall whose step loop waits for the CPU) carry that as evidence and as the first
  // next step; otherwise the busy share is shown so a reader can rule the host out.
  void add_host_cpu_evidence() {
    const Quantity* cpu = s_.find(SignalId::kHostCpuBusy);
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
    for (auto& h : e_.hypotheses) {
      if (!spec(h.cause).cpu_side) continue;
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

  // --- verdict -------------------------------------------------------------------------------
  // reported_stage: the stage a cause hits is its own (mechanism) stage when that got a fair
  // part of what it explains; knock-on queueing elsewhere does not rename it. Behind a gateway
  // its own stage shows as the gateway stage standing for it.
  static std::string reported_stage(const Hypothesis& h, double explained) {
    std::string best_stage = stage_name(h.stage);
    double best = 0;
    for (auto& [stage, sec] : h.portions)
      if (sec > best) {
        best = sec;
        best_stage = stage;
      }
    if (!h.stage) return best_stage;
    std::string own = stage_name(h.stage);
    if (!h.portions.count(own))
      if (auto gateway = detail::gateway_stage_of(*h.stage)) own = stage_name(gateway);
    if (auto it = h.portions.find(own); it != h.portions.end() && it->second >= 0.05 * explained) return own;
    return best_stage;
  }

  // failing_share: the share of the incident window's requests that failed, inside the server
  // or rejected (4xx); 0 when neither ratio is exposed.
  double failing_share() const {
    double share = 0;
    for (SignalId id : {SignalId::kErrorRatio, SignalId::kClientErrorRatio}) {
      const double r = mean_of(s_.find(id), true);
      if (!std::isnan(r)) share += r;
    }
    return share;
  }

  void rank_and_decide() {
    // Without an e2e change the symptom that moved far outside its noise is what a cause explains
    // (its share of the e2e change would divide by noise).
    const bool symptom_only = !slow_ && !tail_slow_ && symptom_slow_;
    bool latency_changed = slow_ || tail_slow_ || symptom_slow_;
    const detail::Change& e2e_change = e_.e2e_change;
    double change = e2e_change.delta;
    double reference = symptom_only ? far_symptom_delta() : change;
    for (auto& h : e_.hypotheses) {
      const std::string cause(to_string(h.cause));
      double explained = 0;
      for (auto& [stage, sec] : h.portions) explained += sec;
      double part = reference > 0 && !h.portions.empty() ? explained / reference : kNaN;
      double share = symptom_only ? kNaN : part;
      double score = h.strength;
      if (spec(h.cause).needs_slowdown) {
        if (!latency_changed) {
          if (h.strength > 0) d_.considered.push_back({cause, h.strength, "no significant latency change"});
          continue;
        }
        if (symptom_only) h.summary += " (" + symptom_phrase() + ")";
        if (!std::isnan(part)) score = h.strength * (0.4 + 0.6 * std::min(1.0, part / 0.5));
        else if (!e_.stage_deltas.empty()) score = h.strength * 0.4;  // explains no measured stage change
      }
      if (score < o_.min_score) {
        d_.considered.push_back({cause, score, h.why_not});
        continue;
      }
      Finding f{cause, reported_stage(h, explained), std::min(1.0, score), share, h.summary, h.evidence, h.next_steps};
      f.where = h.where;
      d_.findings.push_back(f);
    }
    std::stable_sort(d_.findings.begin(), d_.findings.end(),
                     [](const Finding& a, const Finding& b) { return a.score > b.score; });
    // Most requests failing in the window is the incident, whatever else moved: the latency
    // histograms then time mostly failures (a 404 ends in microseconds, a timeout at its limit),
    // so a latency or stage change among them follows from the failures and ranks after them.
    const bool failing_most = failing_share() >= 0.5;
    if (failing_most)
      std::stable_partition(d_.findings.begin(), d_.findings.end(),
                            [](const Finding& f) { return group_of(f.cause) == CauseGroup::kErrors; });
    bool has_cause = false, only_data = true;
    for (const auto& f : d_.findings) {
      if (group_of(f.cause) != CauseGroup::kDataPresence) only_data = false;
      has_cause = true;
    }
    if (latency_changed || (has_cause && !only_data)) {
      d_.verdict = "degraded";
      // A degraded verdict always says where to look: what moved and what was ruled out.
      if (d_.findings.empty() || only_data) {
        d_.findings.push_back(detail::unexplained_finding(e_, d_));
        if (symptom_only) d_.findings.back().summary += " (" + symptom_phrase() + ")";
        std::stable_sort(d_.findings.begin(), d_.findings.end(),
                         [](const Finding& a, const Finding& b) { return a.score > b.score; });
      }
      const Finding& top = d_.findings.front();
      const CauseSpec* top_cause = spec_named(top.cause);
      const bool failures_lead = failing_most && group_of(top.cause) == CauseGroup::kErrors;
      if ((!latency_changed || failures_lead) && top_cause && !top_cause->headline.lead_without_slowdown.empty()) {
        d_.headline = "degraded: " + fill_headline(top_cause->headline.lead_without_slowdown, headline_fields(top));
      } else if (symptom_only) {
        d_.headline = "degraded: " + symptom_phrase();
      } else if (e2e_ && !std::isnan(change)) {
        d_.headline = "degraded: mean e2e " + seconds(e2e_change.baseline) + " -> " + seconds(e2e_change.incident) +
                      " (" + common::format_printf("%+.0f%%", (e2e_change.ratio - 1) * 100) + ")";
      } else {
        d_.headline = "degraded";
      }
      d_.headline += named_in_headline(top);
    } else if (has_cause) {
      d_.verdict = "no_data";
      d_.headline = "no data: cannot confirm health, metrics are missing or renamed";
    } else {
      d_.verdict = "healthy";
      d_.headline = e2e_ ? "healthy: mean e2e " + seconds(e2e_change.baseline) + " -> " + seconds(e2e_change.incident) +
                               " (within noise)"
                         : "healthy: per-token times unchanged";
    }
    note_stages_outside_noise();
    note_missing_views();
  }

  // note_missing_views names what the doctor could not see behind a finding that depends on the
  // hardware: without the host's CPU series, contention from other processes cannot be told
  // from a slower engine; without GPU series, next steps name no GPU command.
  void note_missing_views() {
    if (d_.verdict != "degraded") return;
    const bool hardware_bound = std::any_of(d_.findings.begin(), d_.findings.end(), [](const Finding& f) {
      const CauseSpec* c = spec_named(f.cause);
      return c && (c->cpu_side || !c->next_steps_without_gpu.empty());
    });
    if (!hardware_bound) return;
    const bool scraped = s_.source == "scrape";
    // A host series the collector asked for and got nothing back for (Prometheus without
    // node-exporter for these hosts) is as missing as one never asked for.
    const Quantity* host_cpu = s_.find(SignalId::kHostCpuBusy);
    if (!host_cpu || !host_cpu->incident.has_data())
      d_.notes.push_back(scraped ? "no host CPU view: add node-exporter's URL on the server's host "
                                   "(http://HOST:9100/metrics) as another --scrape to see whether other processes "
                                   "take its cores"
                                 : "no host CPU view: Prometheus has no node-exporter series for the selected "
                                   "targets' hosts; scrape node-exporter there to see whether other processes take "
                                   "the server's cores");
    if (!detail::gpu_visible(s_))
      d_.notes.push_back(std::string("no GPU series: the next steps assume no GPU; if the server runs on one, ") +
                         (scraped ? "add dcgm-exporter's URL as another --scrape"
                                  : "scrape dcgm-exporter on its host") +
                         " to see its clocks and utilization");
  }

  // note_stages_outside_noise: a stage whose time per request multiplied far outside its own
  // noise is never silent. The verdict's symptom rule also asks that a stage add a real part of
  // e2e (4 %), so a send stage x100 at +10 ms beside 2 s of decode does not call the server
  // degraded; but it is a change of its own (the network, a slow client, a proxy), and a reader
  // must see it. Only adds: a note where no finding names the stage.
  void note_stages_outside_noise() {
    // Multiplied, beyond twice its own floor (10 % of it, 3 standard errors of its chunks: not the
    // share of e2e the verdict asks), and by at least half a millisecond: below that, a stage's
    // change is scheduling jitter whatever its ratio.
    constexpr double kMultiplied = 2, kFarNoise = 2, kNoticeable_s = 5e-4;
    for (Stage stage : detail::pipeline()) {
      const Quantity* q = s_.find(stage);
      if (!q || std::isnan(q->baseline.per_request) || std::isnan(q->incident.per_request)) continue;
      const std::string name(dialect::to_string(stage));
      const double base = q->baseline.per_request, now = q->incident.per_request, delta = now - base;
      detail::Change own = compare(q, o_.min_relative_change, o_.noise_sigmas, 0);
      double floor = o_.min_relative_change * base;
      if (!std::isnan(own.threshold) && q->baseline.mean > 0) floor = std::max(floor, own.threshold * base / q->baseline.mean);
      const double ratio = detail::ratio(base, now);
      if (!(delta >= kNoticeable_s && delta > kFarNoise * floor && (!(ratio < kMultiplied)))) continue;
      if (std::any_of(d_.findings.begin(), d_.findings.end(), [&](const Finding& f) { return f.stage == name; })) continue;
      const std::string why =
          d_.verdict == "healthy"
              ? "under 4% of the baseline e2e (" + seconds(e2e_ ? e2e_->baseline.mean : kNaN) +
                    "), so it does not make the verdict, but it is a change of its own"
              : "no finding names it";
      d_.notes.push_back(name + " " +
                         (std::isfinite(ratio) ? common::format_printf("x%.1f", ratio) : std::string("new")) +
                         " per request (" + seconds(base) + " -> " + seconds(now) + ", +" + seconds(delta) +
                         "), far outside its own noise (floor " + seconds(floor) + "): " + why);
    }
  }

  Diagnosis finish() {
    if (d_.verdict.empty()) d_.verdict = "no_data";
    return std::move(d_);
  }

  const Snapshot& s_;
  const DiagnoseOptions& o_;
  Evaluation e_;
  Diagnosis d_;
  const Quantity* e2e_ = nullptr;
  bool slow_ = false, tail_slow_ = false;
  bool symptom_slow_ = false;  // TTFT or a stage far outside its own noise
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
