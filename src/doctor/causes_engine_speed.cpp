// Engine speed: the same work costs more per token, in decode or in prefill. What load (bigger
// batches), KV preemptions and stalls explain of a per-token rise is theirs, not the engine's.
#include <algorithm>
#include <cmath>

#include "doctor/cause_family.h"

namespace inferscope::doctor::detail {

constexpr CauseSpec kEngineSpeedCauses[] = {
    {.id = CauseId::kDecodeSlowdown, .name = "decode_slowdown", .stage = Stage::kDecode,
     .weights = {{Stage::kQueue, 0.8}, {Stage::kDecode, 1}, {Stage::kInference, 1}},
     .cpu_side = true,  // a step loop that waits for a core decodes slower
     .queues_behind_batch = true,
     .next_steps = {"Check GPU clocks, power and thermals (nvidia-smi -q -d CLOCK,PERFORMANCE; "
                    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS): throttling cuts clocks 2x or more.",
                    "Look for another process sharing the GPU or memory bandwidth (nvidia-smi pmon).",
                    "Compare with the last deploy: model, quantization, driver, engine version, speculative decoding."},
     .next_steps_without_gpu = {"Look for other processes on the server's cores or memory bandwidth (top -H, pidstat "
                                "-t 1 on its host): a CPU backend decodes each token with every core it has, and "
                                "loses speed with each one taken.",
                                "Check the device the model runs on: its clocks and thermal limits (on CPU: cpupower "
                                "frequency-info, the server's thread count against the free cores).",
                                "Compare with the last deploy: model, quantization, engine version, thread and "
                                "batch settings, speculative decoding."}},
    {.id = CauseId::kPrefillSlowdown, .name = "prefill_slowdown", .stage = Stage::kPrefill,
     .weights = {{Stage::kQueue, 0.8}, {Stage::kPrefill, 1}, {Stage::kDecode, 0.5}, {Stage::kInference, 1}},
     .queues_behind_batch = true,
     .next_steps = {"Check GPU clocks, power and thermals (prefill is compute-bound: clocks matter most).",
                    "Check --max-num-batched-tokens / chunked-prefill settings and recent engine changes.",
                    "Look for a co-located job on the same GPU."},
     .next_steps_without_gpu = {"Look for other processes on the server's cores (top -H, pidstat -t 1 on its host): "
                                "prefill is compute-bound, so every core taken slows it.",
                                "Check batch and chunked-prefill settings (--max-num-batched-tokens, llama.cpp "
                                "--batch-size / --ubatch-size) and recent engine changes.",
                                "Check the device the model runs on: its clocks and thermal limits."}},
};
INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(kEngineSpeedCauses, INFERSCOPE_DOCTOR_ENGINE_SPEED_CAUSES);

std::span<const CauseSpec> engine_speed_causes() { return kEngineSpeedCauses; }

namespace {

// PrefillCost is prefill time per prompt token in both windows and where it comes from.
struct PrefillCost {
  double baseline = kNaN, incident = kNaN;
  std::string metric;
};

PrefillCost prefill_cost(const Evaluation& e, const Quantity* prefill, const Quantity* prompt) {
  if (prefill && prompt && prompt->baseline.mean > 0 && prompt->incident.mean > 0)
    return {prefill->baseline.mean / prompt->baseline.mean, prefill->incident.mean / prompt->incident.mean,
            prefill->metric + " / " + prompt->metric};
  if (const Quantity* q = e.find(SignalId::kPrefillTimePerToken)) return {q->baseline.mean, q->incident.mean, q->metric};
  return {};
}

// set_decode_caps bounds what the prefill-side causes can add to a decoding request. Prefill work
// shares engine steps with decoding sequences (chunked prefill, mixed batches): a decoding
// request is stretched by the engine time spent on prefill while it decodes, share u = prompt
// tokens/s x prefill seconds per token, and no more. A long prompt makes no other request's
// decode slower per token except through that time (or through KV, which is kv_cache_pressure's).
// So of the decode change, long prompts may claim at most the added prompt tokens at the old
// per-token cost, a slower prefill at most the added per-token cost at the new rate, each times
// the incident's decode time per request. The measured prefill time per token includes the steps
// it shares, so these bounds are generous. Behind a gateway (no engine stages), the stream after
// the first token is the decode and the upstream's time to first token per prompt token bounds
// its prefill cost from above.
void set_decode_caps(Evaluation& e, const PrefillCost& cost, const Quantity* prompt) {
  const Quantity* decode = e.find(Stage::kDecode);
  const Quantity* span_q = decode ? decode : e.find(Stage::kStream);
  double cap_b = cost.baseline, cap_i = cost.incident;
  if (!(cap_b > 0) && prompt && prompt->baseline.mean > 0 && prompt->incident.mean > 0) {
    const Quantity* first = e.find(Stage::kUpstreamTtft);
    if (!first) first = e.find(SignalId::kTtft);
    if (first) {
      cap_b = first->baseline.mean / prompt->baseline.mean;
      cap_i = first->incident.mean / prompt->incident.mean;
    }
  }
  if (!span_q || !(span_q->incident.per_request > 0) || !(cap_b > 0)) return;
  const Quantity* prompt_rate = e.find(SignalId::kPromptTokenRate);
  double pr_b = prompt_rate ? prompt_rate->baseline.mean : kNaN;
  double pr_i = prompt_rate ? prompt_rate->incident.mean : kNaN;
  if (std::isnan(pr_b) || std::isnan(pr_i)) {  // prompt tokens per request x requests per second
    pr_b = mean_of(prompt, false) * mean_of(e.found.rate, false);
    pr_i = mean_of(prompt, true) * mean_of(e.found.rate, true);
  }
  if (!(pr_b >= 0 && pr_i >= 0)) return;
  double span = span_q->incident.per_request;
  double u = std::clamp(pr_i * cap_b, 0.0, 0.95) - std::clamp(pr_b * cap_b, 0.0, 0.95);
  e.found.decode_caps[CauseId::kLongPrompts] = std::max(0.0, u) * span;
  if (cap_i > 0)
    e.found.decode_caps[CauseId::kPrefillSlowdown] = std::clamp(pr_i * std::max(0.0, cap_i - cap_b), 0.0, 0.95) * span;
}

// PrefillSharing is the share of engine time spent prefilling in each window and what it makes
// of a decoding request's per-token time. A decoding sequence gets one token per engine step, and
// a step that also carries prefill work lasts longer: with a share u of the engine's busy time
// spent on prefill, each token of every decoding sequence takes 1 / (1 - u) times the decode work
// alone. When prompts grow at a rate that fills the steps (u from 0.1 to 0.9), per-token decode
// time rises x9 on an engine that works exactly as fast. u = prompt tokens/s x prefill seconds per
// prompt token / busy share, at the smaller of the two windows' measured prefill cost per prompt
// token: each is an upper bound of the engine's (it includes the steps a prompt shares with
// decoding), and the engine under test is the one that did not change. Capped at 0.95.
// It excuses a per-token rise only on a saturated engine (busy 90 % of the time or more; without
// a busy share, requests waiting): below saturation steps carry prefill now and then, and the
// per-token median and the decode caps (set_decode_caps) already tell the shared steps apart.
struct PrefillSharing {
  double baseline = kNaN, incident = kNaN;
  // ratio: the per-token decode ratio prefill sharing explains at unchanged engine speed (>= 1).
  double ratio() const { return baseline >= 0 && incident > baseline ? (1 - baseline) / (1 - incident) : 1.0; }
};

PrefillSharing prefill_sharing(const Evaluation& e, const PrefillCost& cost, const Quantity* prompt) {
  const double per_token = std::min(cost.baseline, cost.incident);
  if (!(per_token > 0)) return {};
  const Quantity* prompt_rate = e.find(SignalId::kPromptTokenRate);
  const Quantity* busy = e.find(SignalId::kEngineBusy);
  if (!busy) busy = e.find(SignalId::kGpuUtil);
  const double busy_now = mean_of(busy, true);
  const bool saturated = busy ? busy_now >= 0.9 : mean_of(e.find(SignalId::kWaiting), true) >= 1;
  if (!saturated) return {};
  auto share = [&](bool incident) {
    double rate = mean_of(prompt_rate, incident);
    if (!(rate >= 0)) rate = mean_of(prompt, incident) * mean_of(e.found.rate, incident);
    double busy_share = mean_of(busy, incident);
    if (!(busy_share > 0.05)) busy_share = 1;  // unknown (or idle): the whole second is the engine's
    return rate >= 0 ? std::clamp(rate * per_token / std::min(1.0, busy_share), 0.0, 0.95) : kNaN;
  };
  return {share(false), share(true)};
}

// load_phrase says what the load did, as its figures show: " at higher load (arrivals 3.46 -> 4.55
// req/s)", " at unchanged load (...)" only when arrivals moved by under 5 %, and a move inside
// the noise is given with its size rather than called unchanged.
std::string load_phrase(const Found& found) {
  if (!found.rate) return {};
  const Change& c = found.rate_change;
  if (std::isnan(c.baseline) || std::isnan(c.incident)) return {};
  const std::string figures = number(c.baseline) + " -> " + number(c.incident) + " req/s";
  const std::string what = found.rate->metric.starts_with("arrivals/s") ? "arrivals " : "finished requests ";
  if (c.up) return " at higher load (" + what + figures + ")";
  if (c.down) return " at lower load (" + what + figures + ")";
  if (std::abs(c.ratio - 1) < 0.05) return " at unchanged load (" + what + figures + ")";
  return " with " + what + figures + " (" + common::format_printf("%+.0f%%", (c.ratio - 1) * 100) + ", within their noise)";
}

}  // namespace

void evaluate_engine_speed(Evaluation& e) {
  const Found& found = e.found;
  const Quantity* itl = e.find(SignalId::kItl);
  const Quantity* prompt = e.find(SignalId::kPromptTokens);
  const Quantity* prefill = e.find(Stage::kPrefill);
  const Quantity* hit = e.find(SignalId::kPrefixHitRate);

  // Per-token prefill cost, and what more prefill work sharing the steps does to decoding.
  PrefillCost cost = prefill_cost(e, prefill, prompt);
  const PrefillSharing sharing = prefill_sharing(e, cost, prompt);

  // Per-token decode time: only the rise beyond what more work explains is evidence of a slower
  // engine: the arrival ratio (bigger batches, found.load_ratio) or prefill work sharing every
  // step (sharing.ratio()), whichever is larger; they are two views of one busier engine.
  const double excused = std::max(found.load_ratio, sharing.ratio());
  PerToken per_token = e.per_token();
  const Change& tok_c = per_token.change;
  // Speculative decoding that accepts fewer drafts needs more steps per token at the same step
  // cost: that much of the rise is spec_decode_acceptance_drop's (found.spec_step_ratio).
  double itl_p50_ratio = e.median_ratio(itl, found.rate, excused) / found.spec_step_ratio;  // beyond load and prefill sharing already
  double s_decode_raw = tok_c.up ? log_ramp(tok_c.ratio / excused / found.spec_step_ratio, 1.2, 2.0) : 0;
  // A slower decode step moves the median gap between tokens of every request, short prompts
  // included; prefill interference (long prompts sharing steps), KV preemptions and stalls add
  // a few long gaps and move the mean only. With a per-token median at hand, it decides.
  if (!std::isnan(itl_p50_ratio)) s_decode_raw = std::min(s_decode_raw, log_ramp(itl_p50_ratio, 1.2, 1.8));

  double ppt_ratio = detail::ratio(cost.baseline, cost.incident);
  set_decode_caps(e, cost, prompt);
  // Prefix hits spare prompt tokens their compute: the engine's speed is its cost per token it
  // computed, so a fall of the hit rate (prefix_cache_miss) raises the cost per prompt token only
  // by the tokens it no longer spares, and that much of the ratio is not a slower engine.
  if (hit && hit->baseline.has_data() && hit->incident.has_data())
    ppt_ratio *= std::max(1 - hit->baseline.mean, 0.02) / std::max(1 - hit->incident.mean, 0.02);
  bool prefill_up = prefill ? e.compare_per_request(prefill).delta > e.compare_per_request(prefill).threshold
                            : ppt_ratio > 1.2;
  // A prefill pool cut to fewer workers batches more prompts into each step of those left: that
  // much of the rise is the cut's (prefill_pool_saturated), not a slower engine.
  double s_ppt = prefill_up ? log_ramp(ppt_ratio / found.prefill_concentration, 1.25, 2.0) : 0;

  // Decode slowdown is what is left of a per-token slowdown once load (bigger batches), KV
  // preemptions (recompute gaps) and stalls (one long gap) are accounted for.
  double s_decode = s_decode_raw;
  if (std::isnan(itl_p50_ratio)) s_decode *= (1 - 0.8 * found.kv) * (1 - 0.9 * found.stall);
  // A decode pool with fewer workers, or one decode endpoint the router piles requests onto, runs
  // bigger batches: each token takes longer there with no engine getting slower.
  s_decode *= (1 - 0.8 * found.decode_pool) * (1 - 0.8 * found.routing);
  // A prompt's prefill runs in steps shared with the running batch's decode, so a slower decode
  // step stretches the measured prefill time per prompt token too: a per-token rise next to a
  // decode slowdown is weaker evidence of its own.
  double s_prefill = s_ppt * (1 - 0.5 * found.prompt) * (1 - 0.5 * found.kv) * (1 - 0.8 * found.stall) *
                     (1 - 0.5 * s_decode) * (1 - 0.8 * found.prefix_miss) * (1 - 0.8 * found.prefill_pool) *
                     (1 - 0.8 * found.kv_transfer);

  if (per_token.quantity) {
    Hypothesis& h = e.add(CauseId::kDecodeSlowdown);
    h.strength = s_decode;
    h.evidence.push_back(e.ev(per_token.quantity, "time per output token"));
    if (itl && per_token.quantity != itl)
      h.evidence.push_back({itl->metric + " (p50)", itl->baseline.p50, itl->incident.p50, "s"});
    if (found.rate) h.evidence.push_back(e.ev(found.rate, "request rate"));
    if (const Quantity* gpu = e.find(SignalId::kGpuUtil)) h.evidence.push_back(e.ev(gpu, "gpu util"));
    h.summary = "each output token takes longer: " + seconds(tok_c.baseline) + " -> " + seconds(tok_c.incident) +
                " per token (" + common::format_printf("x%.2f", tok_c.ratio) + ")" + load_phrase(found);
    h.why_not = "per-token time " + seconds(tok_c.baseline) + " -> " + seconds(tok_c.incident) +
                (sharing.ratio() > found.load_ratio && sharing.ratio() >= 1.2
                     ? " (prefill work shares the steps: " + percent(sharing.baseline) + " -> " +
                           percent(sharing.incident) + " of engine time, " +
                           common::format_printf("x%.1f", sharing.ratio()) + " per token at unchanged engine speed)"
                     : s_decode_raw > 0 ? " (explained by load, KV preemptions or stalls)" : "");
  }
  if (prefill || e.find(SignalId::kPrefillTimePerToken)) {
    Hypothesis& h = e.add(CauseId::kPrefillSlowdown);
    h.strength = s_prefill;
    h.evidence.push_back({cost.metric.empty() ? "prefill per prompt token" : cost.metric, cost.baseline, cost.incident,
                          "s/token"});
    if (prefill) h.evidence.push_back(e.ev(prefill, "prefill"));
    if (hit) h.evidence.push_back(e.ev(hit, "prefix cache hit rate"));
    h.summary = "prefill got slower per prompt token: " + seconds(cost.baseline) + " -> " + seconds(cost.incident) +
                " while prompt lengths are " + (found.prompt > 0 ? "also longer" : "unchanged");
    h.why_not = "prefill per prompt token " + seconds(cost.baseline) + " -> " + seconds(cost.incident) +
                (found.prefill_concentration > 1
                     ? common::format_printf(" (x%.1f the prompts per prefill worker in rotation: a pool cut)",
                                             found.prefill_concentration)
                     : std::string());
  }
}

}  // namespace inferscope::doctor::detail
