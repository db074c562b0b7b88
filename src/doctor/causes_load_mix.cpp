// Load and request mix: more requests per second, longer prompts, longer outputs. The engine
// is as fast as before; it has more work. Later families discount their own causes by these.
#include "doctor/cause_family.h"

namespace inferscope::doctor::detail {

constexpr CauseSpec kLoadMixCauses[] = {
    {.id = CauseId::kLoadIncrease, .name = "load_increase", .stage = Stage::kQueue,
     .weights = {{Stage::kQueue, 1}, {Stage::kPrefill, 0.3}, {Stage::kDecode, 0.3}, {Stage::kInference, 0.3}},
     .next_steps = {"Scale out (more replicas) or shed/rate-limit load at the gateway; the engine is at capacity.",
                    "If KV usage leaves room and the batch is capped, raise --max-num-seqs (costs some ITL).",
                    "Put an admission limit at the gateway so excess load waits visibly instead of timing out."}},
    {.id = CauseId::kLongPrompts, .name = "long_prompts", .stage = Stage::kPrefill,
     .weights = {{Stage::kQueue, 0.8}, {Stage::kPrefill, 1}, {Stage::kDecode, 0.5}, {Stage::kInference, 1}},
     .queues_behind_batch = true,
     .next_steps = {"Find the client or feature sending longer prompts (RAG context, chat history); cap prompt length "
                    "or lower --max-model-len.",
                    "Route long prompts to a separate pool, or lower --max-num-batched-tokens (e.g. 2048; vLLM V1 "
                    "always chunks prefills) so each step carries less prefill and running requests' ITL suffers "
                    "less (costs TTFT).",
                    "Enable prefix caching (--enable-prefix-caching) if the long prompts share a prefix."}},
    {.id = CauseId::kLongOutputs, .name = "long_outputs", .stage = Stage::kDecode,
     .weights = {{Stage::kQueue, 0.8}, {Stage::kDecode, 1}, {Stage::kInference, 1}},
     .queues_behind_batch = true,
     .next_steps = {"Check max_tokens sent by clients and whether a client stopped sending stop sequences.",
                    "Set a server-side cap on output length for the affected route/model.",
                    "Add decode capacity (replicas) if the longer answers are expected."}},
};
INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(kLoadMixCauses, INFERSCOPE_DOCTOR_LOAD_MIX_CAUSES);

std::span<const CauseSpec> load_mix_causes() { return kLoadMixCauses; }

void evaluate_load_mix(Evaluation& e) {
  const Quantity* rate = e.find(SignalId::kArrivalRate);
  if (!rate) rate = e.find(SignalId::kRequestRate);
  const Quantity* prompt = e.find(SignalId::kPromptTokens);
  const Quantity* output = e.find(SignalId::kOutputTokens);
  const double sigmas = e.options.noise_sigmas;

  Change rate_c = compare(rate, 0.10, sigmas);
  Change prompt_c = compare(prompt, 0.10, sigmas);
  Change output_c = compare(output, 0.10, sigmas);
  Found& found = e.found;
  found.rate = rate;
  found.rate_change = rate_c;
  found.load = rate_c.up ? log_ramp(rate_c.ratio, 1.15, 1.8) : 0;
  found.prompt = prompt_c.up ? log_ramp(prompt_c.ratio, 1.25, 2.0) : 0;
  found.output = output_c.up ? log_ramp(output_c.ratio, 1.25, 2.0) : 0;
  // More load stretches per-token time only through bigger batches: at unchanged per-token time
  // the running batch grows at most in proportion to arrivals, and a decode step costs at most
  // in proportion to its batch (memory-bound decode grows far less).
  found.load_ratio = rate_c.up && rate_c.ratio > 1 ? rate_c.ratio : 1.0;

  if (rate) {
    const Quantity* running = e.find(SignalId::kRunning);
    const Quantity* waiting = e.find(SignalId::kWaiting);
    const Quantity* queue = e.find(Stage::kQueue);
    Hypothesis& h = e.add(CauseId::kLoadIncrease);
    h.strength = found.load;
    h.evidence.push_back(e.ev(rate, "request rate"));
    if (running) h.evidence.push_back(e.ev(running, "running"));
    if (waiting) h.evidence.push_back(e.ev(waiting, "waiting"));
    if (queue) h.evidence.push_back(e.ev(queue, "queue"));
    h.summary = "request rate rose from " + number(rate_c.baseline) + " to " + number(rate_c.incident) +
                  " req/s (" + common::format_printf("x%.2f", rate_c.ratio) + "); requests queue for the engine";
    h.why_not = "request rate " + number(rate_c.baseline) + " -> " + number(rate_c.incident) +
                " req/s: within noise or below 15%";
  }
  if (prompt) {
    const Quantity* prefill = e.find(Stage::kPrefill);
    Hypothesis& h = e.add(CauseId::kLongPrompts);
    h.strength = found.prompt;
    h.evidence.push_back(e.ev(prompt, "prompt tokens"));
    if (prefill) h.evidence.push_back(e.ev(prefill, "prefill"));
    h.summary = "prompts got longer: mean " + number(prompt_c.baseline) + " -> " + number(prompt_c.incident) +
                " tokens; prefill (TTFT) grows with prompt length";
    h.why_not = "mean prompt tokens " + number(prompt_c.baseline) + " -> " + number(prompt_c.incident);
  }
  if (output) {
    const Quantity* decode = e.find(Stage::kDecode);
    PerToken per_token = e.per_token();
    Hypothesis& h = e.add(CauseId::kLongOutputs);
    h.strength = found.output;
    h.evidence.push_back(e.ev(output, "output tokens"));
    if (per_token.quantity) h.evidence.push_back(e.ev(per_token.quantity, "per-token time"));
    if (decode) h.evidence.push_back(e.ev(decode, "decode"));
    h.summary = "responses got longer: mean " + number(output_c.baseline) + " -> " + number(output_c.incident) +
                " output tokens while the time per token stays " + (per_token.change.up ? "higher" : "flat") +
                "; decode takes longer per request";
    h.why_not = "mean output tokens " + number(output_c.baseline) + " -> " + number(output_c.incident);
  }
}

}  // namespace inferscope::doctor::detail
