// Engine features: a feature that saved work stopped saving it, so the same requests at the same
// rate cost the engine more. Prefix caching: prompt tokens found in the cache are not computed
// again, so a fall in the hit rate at unchanged prompt length multiplies the prompt tokens each
// request computes, and prefill (TTFT) grows with them while the engine's cost per computed token
// stays what it was (that is prefill_slowdown's, weighed after this family). Speculative decoding:
// a verify step emits the drafts it accepted plus one token, so when acceptance falls each output
// token takes more steps: time per output token rises at an unchanged cost per step (that would
// be decode_slowdown's), while a per-step ITL (vLLM's, one observation per output event) barely
// moves. LoRA adapters: an adapter must sit in one of --max-loras GPU slots for its requests to
// run, so more distinct adapters in flight than slots leave requests passed over (waiting for a
// slot while the batch has room) and adapters loaded and evicted in turn: queue time grows at an
// unchanged rate, prompt length and engine speed.
#include <algorithm>
#include <cmath>

#include "doctor/cause_family.h"

namespace inferscope::doctor::detail {

constexpr CauseSpec kEngineFeatureCauses[] = {
    {.id = CauseId::kPrefixCacheMiss, .name = "prefix_cache_miss", .stage = Stage::kPrefill,
     .weights = {{Stage::kQueue, 0.8}, {Stage::kPrefill, 1}, {Stage::kDecode, 0.5}, {Stage::kInference, 1}},
     .queues_behind_batch = true,
     .next_steps = {"Check the router: prefix- or session-aware routing (llm-d's prefix scorer, Dynamo's KV router, "
                    "sticky sessions) keeps a conversation on the replica that holds its prefix; a rollout, a "
                    "scale-out or a new load-balancer policy spreads it over replicas that must compute it again.",
                    "Check whether the prompt template changed: a timestamp, request id or reordered system prompt "
                    "at the start defeats reuse (the cache matches whole blocks from the first token on).",
                    "Check KV pressure and the number of distinct prefixes: a full KV cache evicts cached prefixes "
                    "first (kv_cache_usage near 1), and more tenants or longer histories than the cache holds lower "
                    "the hit rate; add replicas behind prefix-aware routing or an offload tier (LMCache).",
                    "Check that prefix caching is still on (--enable-prefix-caching; vllm:cache_config_info "
                    "shows enable_prefix_caching)."}},
    {.id = CauseId::kSpecDecodeAcceptanceDrop, .name = "spec_decode_acceptance_drop", .stage = Stage::kDecode,
     .weights = {{Stage::kQueue, 0.8}, {Stage::kDecode, 1}, {Stage::kInference, 1}},
     .queues_behind_batch = true,
     .next_steps = {"Find what changed in the traffic: a new client, language, task (code vs chat) or a higher "
                    "sampling temperature the draft predicts badly; vllm:spec_decode_num_accepted_tokens_per_pos_total "
                    "shows how far drafts still run.",
                    "Lower num_speculative_tokens in --speculative-config, or turn speculation off for that traffic, "
                    "when fewer than about half a draft is accepted per step: rejected drafts still cost verify compute.",
                    "Compare the draft with the last deploy: a draft model (or EAGLE head) out of step with the target "
                    "model's version or tokenizer accepts little; an n-gram proposer needs prompts that repeat.",
                    "Judge users by TPOT, not ITL: under speculation vllm:inter_token_latency_seconds is per step "
                    "(several tokens), so it stays flat while each token takes longer."}},
    {.id = CauseId::kLoraAdapterThrash, .name = "lora_adapter_thrash", .stage = Stage::kQueue,
     .weights = {{Stage::kQueue, 1}, {Stage::kPrefill, 0.3}, {Stage::kDecode, 0.3}, {Stage::kInference, 0.5}},
     .queues_behind_batch = true,
     .next_steps = {"Raise --max-loras to the number of adapters in flight at once (each slot holds the largest "
                    "--max-lora-rank's weights in GPU memory, taken from the KV cache).",
                    "Group traffic by adapter: route each adapter's requests to a subset of replicas (llm-d's LoRA "
                    "affinity, a model-name route) so each replica serves no more adapters than it has slots.",
                    "Check --max-cpu-loras: an adapter evicted from the CPU cache is read from disk again on its next "
                    "load, which multiplies the cost of every swap.",
                    "Find what changed in the adapter mix: a new tenant or adapter, or a fallen --max-loras after a "
                    "deploy (vllm:lora_requests_info's max_lora label)."}},
};
INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(kEngineFeatureCauses, INFERSCOPE_DOCTOR_ENGINE_FEATURE_CAUSES);

std::span<const CauseSpec> engine_feature_causes() { return kEngineFeatureCauses; }

namespace {

// kMinUncached keeps "computed share" = 1 - hit rate away from zero: a cache that served all but
// a token or two of every prompt would otherwise turn noise into huge ratios.
constexpr double kMinUncached = 0.02;

// set_prefix_miss_decode_cap bounds what the prompt tokens no longer cached can add to a decoding
// request, as set_decode_caps does for long prompts (causes_engine_speed.cpp): they share engine
// steps with the decoding batch, so a decoding request is stretched by the engine time spent on
// them while it decodes (lost hits/s x the baseline's prefill seconds per computed token) and
// no more. Absent (no bound) when a figure is missing.
void set_prefix_miss_decode_cap(Evaluation& e, double lost_hits, double cost_per_computed) {
  const Quantity* decode = e.find(Stage::kDecode);
  const Quantity* span_q = decode ? decode : e.find(Stage::kStream);
  const double rate = mean_of(e.found.rate, true);
  if (!span_q || !(span_q->incident.per_request > 0) || !(cost_per_computed > 0) || !(rate >= 0)) return;
  const double busy = std::clamp(rate * std::max(0.0, lost_hits) * cost_per_computed, 0.0, 0.95);
  e.found.decode_caps[CauseId::kPrefixCacheMiss] = busy * span_q->incident.per_request;
}

void evaluate_prefix_cache(Evaluation& e) {
  const Quantity* hit = e.find(SignalId::kPrefixHitRate);
  if (!hit || !hit->baseline.has_data() || !hit->incident.has_data()) return;
  const Quantity* prompt = e.find(SignalId::kPromptTokens);
  const Quantity* prefill = e.find(Stage::kPrefill);
  const double h_b = std::clamp(hit->baseline.mean, 0.0, 1.0), h_i = std::clamp(hit->incident.mean, 0.0, 1.0);
  const double p_b = mean_of(prompt, false), p_i = mean_of(prompt, true);
  const bool lengths_known = p_b > 0 && p_i > 0;
  // Prompt tokens each request computes: its length times the share the cache did not hold.
  const double uncached_b = std::max(1 - h_b, kMinUncached), uncached_i = std::max(1 - h_i, kMinUncached);
  const double computed_b = lengths_known ? p_b * uncached_b : kNaN, computed_i = lengths_known ? p_i * uncached_i : kNaN;
  const double computed_ratio = lengths_known ? computed_i / computed_b : uncached_i / uncached_b;
  // Of the rise in computed tokens, the part the lost hits account for: cached tokens per request
  // fell by P_b h_b - P_i h_i; the rest is longer prompts (long_prompts' news). A prompt that grew
  // around the same cached system prompt lowers the hit *rate* without losing a single hit.
  const double lost_hits = lengths_known ? p_b * h_b - p_i * h_i : kNaN;
  double from_hits = 1;
  if (lengths_known && computed_i > computed_b)
    from_hits = std::clamp(lost_hits / (computed_i - computed_b), 0.0, 1.0);
  // A fall of the hit rate is news once it is a real share of the prompt (8 points start, 25
  // full) and it multiplies the work (x1.3 starts, x2.5 full); both must hold.
  const double fell = ramp(h_b - h_i, 0.08, 0.25);
  const double more_work = log_ramp(computed_ratio, 1.3, 2.5);
  e.found.prefix_miss = std::min(fell, more_work) * from_hits;
  if (prefill && lengths_known && prefill->baseline.mean > 0)
    set_prefix_miss_decode_cap(e, lost_hits, prefill->baseline.mean / computed_b);

  Hypothesis& h = e.add(CauseId::kPrefixCacheMiss);
  h.strength = e.found.prefix_miss;
  h.evidence.push_back(e.ev(hit, "prefix cache hit rate"));
  if (lengths_known) h.evidence.push_back({"computed prompt tokens per request (prompt x (1 - hit rate))", computed_b,
                                           computed_i, "tokens"});
  if (prompt) h.evidence.push_back(e.ev(prompt, "prompt tokens"));
  if (prefill) h.evidence.push_back(e.ev(prefill, "prefill"));
  if (const Quantity* ttft = e.find(SignalId::kTtft)) h.evidence.push_back(e.ev(ttft, "ttft"));
  if (e.found.rate) h.evidence.push_back(e.ev(e.found.rate, "request rate"));
  const std::string lengths =
      !lengths_known ? std::string()
      : e.found.prompt > 0 ? " while prompts also grew " + number(p_b) + " -> " + number(p_i) + " tokens"
                           : " at unchanged prompt length (" + number(p_i) + " tokens)";
  h.summary = "prefix-cache hit rate fell from " + percent(h_b) + " to " + percent(h_i) +
              (lengths_known ? ": each request computes " + number(computed_b) + " -> " + number(computed_i) +
                                   " prompt tokens"
                             : ": the uncached share of each prompt grew " + percent(uncached_b) + " -> " +
                                   percent(uncached_i)) +
              lengths + "; prefill (TTFT) grows with the tokens computed";
  h.why_not = "prefix-cache hit rate " + percent(h_b) + " -> " + percent(h_i) +
              (from_hits < 0.5 ? " (longer prompts explain most of the added work)" : "");
}

// tokens_per_step is what a verify step emits per sequence: 1 + accepted tokens per draft round
// (the accepted drafts and the target model's own token); NaN without both counters.
double tokens_per_step(const Quantity* accepted, const Quantity* drafts, bool incident) {
  const double a = mean_of(accepted, incident), d = mean_of(drafts, incident);
  return d > 0 && a >= 0 ? 1 + a / d : kNaN;
}

void evaluate_spec_decode(Evaluation& e) {
  const Quantity* acceptance = e.find(SignalId::kSpecAcceptance);
  if (!acceptance || !acceptance->baseline.has_data() || !acceptance->incident.has_data()) return;
  const Quantity* accepted = e.find(SignalId::kSpecAcceptedTokens);
  const Quantity* drafts = e.find(SignalId::kSpecDrafts);
  const double a_b = acceptance->baseline.mean, a_i = acceptance->incident.mean;
  const double step_b = tokens_per_step(accepted, drafts, false), step_i = tokens_per_step(accepted, drafts, true);
  // Without the draft rounds the tokens per step are unknown: the acceptance ratio alone says the
  // drafts run shorter, and a step emits at least one token, so (1 + a_b) / (1 + a_i) is a floor.
  const double step_ratio = step_b > 0 && step_i > 0 ? step_b / step_i : (1 + a_b) / (1 + a_i);
  e.found.spec_step_ratio = std::max(1.0, step_ratio);
  // Acceptance fell by 8 points (full at 25) and each token takes x1.15 the steps (full at x1.6);
  // the time per output token is where users feel it.
  const PerToken per_token = e.per_token();
  const double fell = ramp(a_b - a_i, 0.08, 0.25);
  const double more_steps = log_ramp(step_ratio, 1.15, 1.6);
  double strength = std::min(fell, more_steps);
  if (per_token.quantity && !per_token.change.up) strength *= 0.5;  // no per-token rise to explain
  e.found.spec_drop = strength;

  Hypothesis& h = e.add(CauseId::kSpecDecodeAcceptanceDrop);
  h.strength = strength;
  h.evidence.push_back(e.ev(acceptance, "draft acceptance"));
  if (step_b > 0 && step_i > 0) h.evidence.push_back({"tokens per verify step (1 + accepted / drafts)", step_b, step_i, "tokens"});
  if (per_token.quantity) h.evidence.push_back(e.ev(per_token.quantity, "time per output token"));
  if (const Quantity* step = e.find(SignalId::kStep)) h.evidence.push_back(e.ev(step, "engine step"));
  if (e.found.rate) h.evidence.push_back(e.ev(e.found.rate, "request rate"));
  h.summary = "speculative decoding accepts fewer drafts: acceptance " + percent(a_b) + " -> " + percent(a_i) +
              (step_b > 0 && step_i > 0 ? ", tokens per step " + number(step_b) + " -> " + number(step_i) : std::string()) +
              "; each output token takes more engine steps, time per token " + seconds(per_token.change.baseline) +
              " -> " + seconds(per_token.change.incident);
  h.why_not = "draft acceptance " + percent(a_b) + " -> " + percent(a_i);
}

// kLoraLoadFloor keeps the load-rate ratio finite when the baseline loaded no adapter at all (every
// adapter fitted its slots): a swap every ten seconds is the floor.
constexpr double kLoraLoadFloor = 0.1;

void evaluate_lora(Evaluation& e) {
  const Quantity* lora_waiting = e.find(SignalId::kLoraWaiting);
  if (!lora_waiting || !lora_waiting->baseline.has_data() || !lora_waiting->incident.has_data()) return;
  const Quantity* slots = e.find(SignalId::kLoraSlots);
  const Quantity* loaded = e.find(SignalId::kLoraLoaded);
  const Quantity* loads = e.find(SignalId::kLoraLoadRate);
  const Quantity* waiting = e.find(SignalId::kWaiting);
  const double lw_b = lora_waiting->baseline.mean, lw_i = lora_waiting->incident.mean;
  // Requests passed over for want of a slot: from none to one or more on average is the sign.
  const double passed_over = ramp(lw_i - lw_b, 0.25, 1.0);
  // Adapter loads per second rose (x1.5 starts, x4 full): adapters evicted and loaded in turn.
  const double load_b = mean_of(loads, false), load_i = mean_of(loads, true);
  const double load_ratio = load_i >= 0 && load_b >= 0 ? std::max(load_i, 0.0) / std::max(load_b, kLoraLoadFloor) : kNaN;
  const double loads_up = std::isnan(load_ratio) ? 0.5 : log_ramp(load_ratio, 1.5, 4.0);
  // Slots full: every slot holds an adapter (a free slot would have taken the waiting adapter).
  const double s_i = mean_of(slots, true), s_b = mean_of(slots, false), l_i = mean_of(loaded, true);
  const double full = s_i > 0 && l_i >= 0 ? ramp(l_i / s_i, 0.6, 0.95) : 1;
  // The batch has room: most of the queue waits for an adapter, not for a place in the batch.
  const double w_i = mean_of(waiting, true);
  const double room = w_i > 0 ? ramp(lw_i / w_i, 0.3, 0.7) : 1;
  const double strength = std::min(passed_over, std::max(loads_up, s_b > s_i ? 1.0 : 0.0)) * full * room;
  e.found.lora_thrash = strength;

  Hypothesis& h = e.add(CauseId::kLoraAdapterThrash);
  h.strength = strength;
  h.evidence.push_back(e.ev(lora_waiting, "requests waiting for an adapter slot"));
  if (waiting) h.evidence.push_back(e.ev(waiting, "waiting"));
  if (slots) h.evidence.push_back(e.ev(slots, "adapter slots"));
  if (loaded) h.evidence.push_back(e.ev(loaded, "adapters loaded"));
  if (loads) h.evidence.push_back(e.ev(loads, "adapter loads"));
  if (const Quantity* queue = e.find(Stage::kQueue)) h.evidence.push_back(e.ev(queue, "queue"));
  if (e.found.rate) h.evidence.push_back(e.ev(e.found.rate, "request rate"));
  h.summary = "more LoRA adapters in flight than slots: " + number(lw_b) + " -> " + number(lw_i) +
              " requests wait for an adapter slot" +
              (w_i > 0 ? " of " + number(w_i) + " waiting" : std::string()) +
              (s_i > 0 ? ", " + number(l_i) + " of " + number(s_i) + " slots loaded" +
                             (s_b > s_i ? " (slots " + number(s_b) + " -> " + number(s_i) + ")" : std::string())
                       : std::string()) +
              (std::isnan(load_ratio) ? std::string()
                                      : ", adapter loads " + number(load_b) + " -> " + number(load_i) + "/s") +
              "; requests queue for a swap while the batch has room";
  h.why_not = "requests waiting for an adapter " + number(lw_b) + " -> " + number(lw_i);
}

}  // namespace

void evaluate_engine_features(Evaluation& e) {
  evaluate_prefix_cache(e);
  evaluate_spec_decode(e);
  evaluate_lora(e);
}

}  // namespace inferscope::doctor::detail
