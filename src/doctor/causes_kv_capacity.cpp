// KV and capacity: fewer sequences fit (KV full, preemptions, admission bound by KV), or fewer
// are served at once at unchanged demand (a lowered batch cap, a smaller cache, a replica gone).
// Either way requests wait in the engine queue.
#include <algorithm>
#include <cmath>

#include "doctor/cause_family.h"

namespace inferscope::doctor::detail {

namespace {

// waiting_rise: how clearly more requests wait than the baseline's usual few.
double waiting_rise(const Quantity& waiting) {
  return ramp(waiting.incident.mean - std::max(1.0, 2 * waiting.baseline.mean), 0, 3);
}

}  // namespace

constexpr CauseSpec kKvCapacityCauses[] = {
    {.id = CauseId::kKvCachePressure, .name = "kv_cache_pressure", .stage = Stage::kQueue,
     .weights = {{Stage::kQueue, 1}, {Stage::kPrefill, 0.5}, {Stage::kDecode, 0.5}, {Stage::kInference, 0.5}},
     .queues_behind_batch = true,
     .next_steps = {"Raise --gpu-memory-utilization if the GPU has free memory (more KV blocks).",
                    "Lower --max-num-seqs or --max-num-batched-tokens so fewer sequences compete for KV blocks; "
                    "lower --max-model-len only if a few very long sequences hold most blocks (paged KV is "
                    "allocated on demand, so it does not help ordinary requests).",
                    "Use an FP8 KV cache (--kv-cache-dtype fp8) or more tensor parallelism; or scale out."}},
    {.id = CauseId::kCapacityDrop, .name = "capacity_drop", .stage = Stage::kQueue,
     .weights = {{Stage::kQueue, 1}, {Stage::kPrefill, 0.3}, {Stage::kDecode, 0.3}, {Stage::kInference, 0.3}},
     .next_steps = {"Compare the serving config with the last known good one: a lowered --max-num-seqs or "
                    "--max-num-batched-tokens caps the running batch, a lowered --gpu-memory-utilization or "
                    "--max-model-len change shrinks the KV cache (vllm:cache_config_info shows num_gpu_blocks).",
                    "Check that every replica is in rotation (load balancer targets, readiness, a replica "
                    "restarting or drained): the survivors take its share with their own caps.",
                    "Look for a rollout or config push at the onset; roll it back, or raise the cap again if the "
                    "KV cache leaves room (costs some ITL)."}},
};
INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(kKvCapacityCauses, INFERSCOPE_DOCTOR_KV_CAPACITY_CAUSES);

std::span<const CauseSpec> kv_capacity_causes() { return kKvCapacityCauses; }

void evaluate_kv_capacity(Evaluation& e) {
  const Quantity* kv = e.find(SignalId::kKvUsage);
  const Quantity* preempt = e.find(SignalId::kPreemptionRate);
  const Quantity* waiting = e.find(SignalId::kWaiting);
  const Quantity* running = e.find(SignalId::kRunning);
  // Full means no block left for the next sequence: usage near 1 at the peaks (vLLM's own
  // warning level is 0.9; llm-d alerts there too).
  double kv_max = kv ? kv->incident.max : kNaN, kv_base = kv ? kv->baseline.max : kNaN;
  double s_full = ramp(kv_max, 0.8, 0.95) * (kv_base >= 0.85 ? 0.4 : 1.0);
  // Admission bound by KV: requests wait while the free KV share is smaller than what one more
  // running sequence takes (usage need not be near 1: whole prompts must fit).
  double s_bound = 0;
  if (kv && running && waiting && kv->incident.has_data() && running->incident.mean > 0.2) {
    double per_sequence = kv->incident.mean / running->incident.mean;
    double headroom = 1 - kv->incident.mean;
    s_bound = waiting_rise(*waiting) * ramp(per_sequence / std::max(headroom, 0.01), 0.7, 1.0) *
              ramp(kv->incident.mean, 0.3, 0.6);
  }
  // Sequences preempted (recomputed) more often per request. Preemption only happens when KV
  // blocks run out, so any rise from (near) zero counts.
  double pre_b = preempt ? preempt->baseline.mean : kNaN, pre_i = preempt ? preempt->incident.mean : kNaN;
  double req_i = mean_of(e.found.rate, true), req_b = mean_of(e.found.rate, false);
  double per_req_i = req_i > 0 ? pre_i / req_i : kNaN, per_req_b = req_b > 0 ? pre_b / req_b : kNaN;
  double s_preempt = ramp((std::isnan(per_req_i) ? 0 : per_req_i) - (std::isnan(per_req_b) ? 0 : per_req_b), 0.005, 0.05);
  e.found.kv = std::max({s_full, s_preempt, s_bound});
  if (!kv && !preempt) return;

  // KV pressure that comes with longer requests or more of them is the mechanism, not the
  // change: the change ranks first and both are reported.
  const double root = std::max({e.found.load, e.found.prompt, e.found.output});
  Hypothesis& h = e.add(CauseId::kKvCachePressure);
  h.strength = e.found.kv * (1 - 0.4 * root);
  if (kv) h.evidence.push_back(e.ev(kv, "kv usage", /*use_max=*/true));
  if (preempt) h.evidence.push_back(e.ev(preempt, "preemptions"));
  if (waiting) h.evidence.push_back(e.ev(waiting, "waiting"));
  if (running) h.evidence.push_back(e.ev(running, "running"));
  h.summary = "KV cache is full (peak usage " + percent(kv_max) + ", baseline " + percent(kv_base) +
              "), preemptions " + number(pre_b) + " -> " + number(pre_i) +
              "/s: fewer sequences fit, the rest wait or are recomputed";
  h.why_not = "KV peak " + percent(kv_max) + ", preemptions " + number(pre_i) + "/s";
}

void evaluate_capacity_drop(Evaluation& e) {
  const Quantity* waiting = e.find(SignalId::kWaiting);
  const Quantity* running = e.find(SignalId::kRunning);
  if (!waiting || !running || !running->baseline.has_data() || !running->incident.has_data()) return;
  const Found& found = e.found;
  const Change& rate_c = found.rate_change;
  // Fewer requests served at once: the running batch fell, on average or at its peak (a batch
  // that ran below its old cap loses its peaks first). A queue behind a batch still reaching its
  // old peak is not a smaller server: bursts of arrivals, or more of them (load_increase, whose
  // rise leaves only what a fallen batch says on top of it).
  double run_b = running->baseline.mean, run_i = running->incident.mean;
  double fell = std::max(ramp((run_b - run_i) / std::max(run_b, 0.5), 0.15, 0.4),
                         ramp((running->baseline.max - running->incident.max) / std::max(running->baseline.max, 1.0),
                              0.15, 0.4));
  // A peak above the old one says the slots are still there (bursts filling them).
  double peak_rose = ramp(running->incident.max - running->baseline.max, 0, 1);
  double s_batch = fell * (1 - found.load) * (1 - peak_rose);
  double queue_share = e.e2e_change.delta > 0 ? e.stage_delta(Stage::kQueue) / e.e2e_change.delta : 0;
  // The batch may have run below its old cap (its mean barely falls): a queue that was empty and
  // now holds a request or two on average is the sign, judged on its own scale.
  double queue_grew = ramp(waiting->incident.mean - waiting->baseline.mean, 0.25, 1.0);
  double s_capacity = ramp(queue_share, 0.2, 0.5) * queue_grew * s_batch;
  // A slower engine, stalls, KV pressure or longer requests also leave requests waiting behind a
  // batch that does not grow (CauseSpec::queues_behind_batch): capacity_drop is what remains when
  // none of them fits.
  double others = 0;
  for (const Hypothesis& other : e.hypotheses)
    if (spec(other.cause).queues_behind_batch) others = std::max(others, other.strength);
  const Quantity* kv = e.find(SignalId::kKvUsage);
  Hypothesis& h = e.add(CauseId::kCapacityDrop);
  h.strength = std::max(0.0, s_capacity) * (1 - std::min(1.0, 2 * others));
  h.evidence.push_back(e.ev(running, "running"));
  h.evidence.push_back({running->metric + " (max)", running->baseline.max, running->incident.max, running->unit});
  h.evidence.push_back(e.ev(waiting, "waiting"));
  if (found.rate) h.evidence.push_back(e.ev(found.rate, "request rate"));
  if (kv) h.evidence.push_back(e.ev(kv, "kv usage", /*use_max=*/true));
  if (const Quantity* queue = e.find(Stage::kQueue)) h.evidence.push_back(e.ev(queue, "queue"));
  h.summary = "fewer requests are served at once: running " + number(run_b) + " -> " + number(run_i) + " (peak " +
              number(running->baseline.max) + " -> " + number(running->incident.max) + ") while arrivals " +
              (found.load > 0 ? "rose " : "stayed at ") + number(rate_c.baseline) + " -> " + number(rate_c.incident) +
              " req/s and waiting grew " + number(waiting->baseline.mean) + " -> " + number(waiting->incident.mean) +
              ": the server's capacity dropped (batch cap, KV cache or replicas)";
  h.why_not = "running " + number(run_b) + " -> " + number(run_i) + ", waiting " + number(waiting->baseline.mean) +
              " -> " + number(waiting->incident.mean) +
              (others >= 0.5 ? " (explained by a slower engine, stalls, KV or longer requests)" : "");
}

}  // namespace inferscope::doctor::detail
