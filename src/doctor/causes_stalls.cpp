// Stalls: an engine stuck working (one step an order of magnitude longer than any before, GPU
// busy) or stuck scheduling (whole intervals without a step, GPU idle, waiting grows). Every
// running sequence sees the same gap, so a stall moves the mean and the tail, not the median.
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "doctor/cause_family.h"
#include "doctor/fleet_pools.h"

namespace inferscope::doctor::detail {

namespace {

// idle_fraction: the share of intervals with no engine step while work was pending. A scrape
// that comes late makes one interval read no increase and the next one read two intervals'
// worth; a stalled engine does not make up the steps it missed. So an empty interval next to one
// with about twice the usual step count is a late scrape, not a stall.
double idle_fraction(const WindowStat& st, const WindowStat* pending) {
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
}

// waiting_beside_free_slots: the share of samples in which requests waited while the running
// batch stood at least one sequence below the window's own repeated peak and the engine was less busy
// than usual (`usual_busy`, the baseline's mean; NaN: not known). A scheduler that admits work
// leaves nothing waiting beside a free slot for longer than one step, so a sample rarely catches
// it; a stopped one leaves arrivals waiting next to free slots, the engine idle, for the whole
// pause, whatever the scrape interval: a pause of a third of the time reads as about a third,
// less the moment the first arrival and the busy share's averaging take. A batch held at a
// lower cap is busy while its queue waits, and a burst fills every slot. NaN when the gauges are
// not sampled alike.
double waiting_beside_free_slots(const WindowStat& waiting, const WindowStat& running, const WindowStat* busy,
                                 double usual_busy) {
  if (waiting.intervals.empty() || waiting.intervals.size() != running.intervals.size() || !(running.max >= 1))
    return kNaN;
  bool use_busy = busy && busy->intervals.size() == waiting.intervals.size() && usual_busy > 0;
  // The peak the batch reaches more than once: the old batch draining after a lowered cap makes
  // one high sample, a stall's released backlog one per pause.
  std::vector<double> sorted;
  for (double r : running.intervals)
    if (!std::isnan(r)) sorted.push_back(r);
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  double peak = sorted.size() >= 2 ? sorted[1] : running.max;
  int n = 0, held = 0;
  for (std::size_t i = 0; i < waiting.intervals.size(); ++i) {
    double w = waiting.intervals[i], r = running.intervals[i];
    if (std::isnan(w) || std::isnan(r)) continue;
    ++n;
    bool idle = !use_busy || !(busy->intervals[i] > 0.85 * usual_busy);
    if (w >= 1 && r <= peak - 1 && idle) ++held;
  }
  return n ? static_cast<double>(held) / n : kNaN;
}

}  // namespace

// Both kinds hold up every running sequence and the queue behind it alike.
constexpr StageWeights kStallWeights = {
    {Stage::kQueue, 1}, {Stage::kPrefill, 0.7}, {Stage::kDecode, 1}, {Stage::kInference, 1}};
constexpr CauseSpec kStallCauses[] = {
    {.id = CauseId::kWorkerStall, .name = "worker_stall", .stage = Stage::kQueue, .weights = kStallWeights, .cpu_side = true,
     .queues_behind_batch = true,
     .next_steps = {"Look for a blocked scheduler/worker: py-spy dump of the engine process, GC pauses, a stuck "
                    "tokenizer or detokenizer thread, a hung collective (NCCL) between workers.",
                    "Check host CPU and memory pressure (node-exporter: CPU steal, swap) on the serving host.",
                    "If it repeats, restart the replica and capture its log around the gaps."}},
    {.id = CauseId::kEngineStall, .name = "engine_stall", .stage = Stage::kDecode, .weights = kStallWeights, .cpu_side = true,
     .queues_behind_batch = true,
     .next_steps = {"Look at the server log at the stall times for CUDA errors, hung kernels or NCCL timeouts; "
                    "check dmesg for GPU XID errors.",
                    "Check GPU health (nvidia-smi -q: ECC, retired pages, clocks) and host swap/IO stalls.",
                    "Restart the replica if stalls repeat; drain it from the load balancer meanwhile."},
     .next_steps_without_gpu = {"Look at the server log at the stall times for errors, hung threads or timeouts; "
                                "check dmesg for hardware or out-of-memory events.",
                                "Check host swap, IO stalls and other processes holding the server's cores (vmstat 1, "
                                "pidstat -t 1).",
                                "Restart the replica if stalls repeat; drain it from the load balancer meanwhile."}},
};
INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(kStallCauses, INFERSCOPE_DOCTOR_STALL_CAUSES);

std::span<const CauseSpec> stall_causes() { return kStallCauses; }

Hypothesis stall_hypothesis(const Evaluation& e, bool from_pending) {
  const Quantity* step = e.find(SignalId::kStep);
  const Quantity* steps = e.find(SignalId::kStepRate);
  const Quantity* busy = e.find(SignalId::kEngineBusy);
  if (!busy) busy = e.find(SignalId::kGpuUtil);
  const Quantity* itl = e.find(SignalId::kItl);
  const Quantity* waiting = e.find(SignalId::kWaiting);
  const Quantity* running = e.find(SignalId::kRunning);

  double long_step = 0;
  Evidence step_ev;
  // Longer steps that the work explains are no stall: a uniformly slower engine (the per-token
  // median moved) or longer prompts (bigger prefill steps) stretch the longest step too.
  double explained = 1;
  if (double r = e.median_ratio(itl); r > 0 && std::isfinite(r)) explained *= std::max(1.0, r);
  // The longest prefill step is set by the longest prompt (or chunk), not the mean one: a few
  // long prompts among short ones stretch the longest step by their length ratio.
  if (const Quantity* prompt = e.find(SignalId::kPromptTokens); prompt && prompt->baseline.mean > 0 &&
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
  // Requests waiting beside free batch slots: the scheduler stopped, at any scrape interval.
  // KV-bound admission also leaves slots free, so KV pressure found earlier excuses it.
  // A disaggregated fleet's waiting and running gauges add up pools with different batches (and
  // workers the router no longer sends to): requests waiting in one pool while another pool, or a
  // worker out of rotation, has free slots or idles is how a saturated pool looks, not a stopped
  // scheduler. There neither the free slots nor the fall in the fleet's mean busy share beside a
  // longer queue says a stall; whole intervals without a step anywhere (s_idle) and gaps between
  // tokens (s_gap) still do.
  const bool fleet = pool_waiting(e.snapshot, PoolKind::kPrefill) && pool_waiting(e.snapshot, PoolKind::kDecode);
  double held_b = kNaN, held_i = kNaN;
  if (waiting && running && !fleet) {
    double usual = busy ? busy->baseline.mean : kNaN;
    held_b = waiting_beside_free_slots(waiting->baseline, running->baseline, busy ? &busy->baseline : nullptr, usual);
    held_i = waiting_beside_free_slots(waiting->incident, running->incident, busy ? &busy->incident : nullptr, usual);
  }
  // Gaps between steps: a pause of the scheduler holds every running sequence's next token for
  // the whole pause, so the inter-token tail grows by an order of magnitude while its median and
  // the longest engine step stay as they were. Longer steps (a slower engine, longer prompts,
  // bigger batches) stretch the tail through the steps themselves, so this counts only where the
  // longest step did not grow; preemption under KV pressure also holds tokens back and excuses it.
  double s_gap = 0;
  if (step && step->baseline.has_data() && step->incident.has_data() && itl && itl->baseline.has_data() &&
      itl->incident.has_data()) {
    double step_b = std::max(step->baseline.max, step->baseline.p99);
    bool steps_as_before = step->incident.max <= 2 * step_b;
    double p50_r = detail::ratio(itl->baseline.p50, itl->incident.p50);
    double tail_r = detail::ratio(detail::ratio(itl->baseline.p50, itl->baseline.max),
                                  detail::ratio(itl->incident.p50, itl->incident.max));
    if (steps_as_before && p50_r < 1.3 && std::isfinite(tail_r))
      // A burst's prefills hold tokens back for a few steps at most, a pause for tens of steps. A
      // lowered batch cap also holds back the sequences it preempts, with fewer running after it;
      // a paused scheduler keeps its batch.
      s_gap = log_ramp(tail_r, 4, 20) * log_ramp(detail::ratio(step_b, itl->incident.max), 10, 24) *
              (1 - e.found.kv) * (running ? ramp(detail::ratio(running->baseline.mean, running->incident.mean), 0.7, 0.9) : 1);
  }
  bool held_known = !std::isnan(held_b) && !std::isnan(held_i);
  double s_held = held_known ? ramp(held_i - held_b, 0.05, 0.2) * (1 - e.found.kv) : 0;
  // A less busy engine beside a longer queue, on window means alone, is also what bursts of
  // arrivals give (idle between bursts, a queue inside them, bigger batches doing the same work
  // in less time): it counts only where some requests waited beside free slots.
  double means_gate = fleet ? 0 : held_known ? ramp(held_i - held_b, 0.02, 0.08) : 1;

  // Stuck scheduling: no steps, GPU idle, waiting grows; stuck working: one long step, GPU busy.
  double s_worker = std::max({s_idle * (1 - 0.7 * long_step), s_held * (1 - 0.7 * long_step),
                              busy_drop * waiting_up * (1 - long_step) * means_gate, s_gap * (1 - long_step)});
  // The engine's own count of the time it held work without a step (serve's
  // inferscope_engine_held_seconds_total) reads a stopped scheduler directly, whatever the scrape
  // interval and however loaded the host that samples the gauges. Where the server counts it, it
  // decides: a share of the time held that rose is the stall, and none held says the sampled signs
  // above come from something else (bursts between scrapes, a lowered batch cap, late samples).
  const Quantity* held_direct = e.find(SignalId::kEngineHeld);
  const bool direct = held_direct && held_direct->baseline.has_data() && held_direct->incident.has_data();
  double s_direct = 0;
  if (direct) {
    s_direct = ramp(held_direct->incident.mean - held_direct->baseline.mean, 0.02, 0.1);
    s_worker = std::max(s_direct, s_worker * (0.15 + 0.85 * s_direct));
  }
  double s_engine = long_step * (1 - 0.7 * busy_drop);
  if (from_pending && s_worker == 0 && s_engine == 0) {
    s_worker = busy_drop > 0 ? 0.6 : 0.3;
    s_engine = busy_drop > 0 ? 0.3 : 0.6;
  }
  bool worker = s_worker > s_engine;
  Hypothesis h(worker ? CauseId::kWorkerStall : CauseId::kEngineStall);
  if (!gpu_visible(e.snapshot)) h.next_steps = next_steps_of(h.cause, false);
  h.strength = std::max(s_worker, s_engine);
  const std::string engine_word = busy && busy->metric.find("DCGM") != std::string::npos ? "the GPU" : "the engine";
  if (!step_ev.metric.empty()) h.evidence.push_back(step_ev);
  if (steps)
    h.evidence.push_back({steps->metric + " (share of intervals without a step)", idle_b, idle_i, "ratio"});
  if (held_known)
    h.evidence.push_back({waiting->metric + " beside free slots of " + running->metric + " (share of samples)", held_b,
                          held_i, "ratio"});
  if (s_gap > 0) h.evidence.push_back({itl->metric + " (max bucket)", itl->baseline.max, itl->incident.max, "s"});
  if (direct) h.evidence.push_back(e.ev(held_direct, "share of time held without a step"));
  if (busy) h.evidence.push_back(e.ev(busy, "busy"));
  if (waiting) h.evidence.push_back(e.ev(waiting, "waiting"));
  if (running) h.evidence.push_back(e.ev(running, "running"));
  if (worker) {
    const std::string sampled_signs =
        "requests waited beside free batch slots in " + (held_known ? percent(held_i) : std::string("?")) +
        " of samples (baseline " + (held_known ? percent(held_b) : std::string("?")) + "), " + percent(idle_i) +
        " of intervals without a step (baseline " + percent(idle_b) + ")";
    const std::size_t samples = waiting ? waiting->incident.intervals.size() : 0;
    if (direct) {
      // The engine's own count leads; the samples are what a scrape happened to catch of it.
      h.summary = "the engine stopped scheduling: it held work without a step for " +
                  percent(held_direct->incident.mean) + " of the time (baseline " +
                  percent(held_direct->baseline.mean) + ") while " + engine_word + " idled; sampled: " + sampled_signs;
    } else {
      h.summary = "the engine stopped scheduling: " + sampled_signs + ", while " + engine_word + " idled";
      // Without a direct signal of a pause, say how much sampled evidence stands behind it and
      // what it may miss.
      if (samples > 0) {
        const double seen = std::round((held_known ? held_i : idle_i) * static_cast<double>(samples));
        h.summary += "; from sampled gauges only: " + common::format_printf("%.0f", seen) + " of " +
                     std::to_string(samples) + " samples showed it" +
                     (seen < 3 ? " (few: a pause shorter than the scrape interval shows only by chance, and a "
                                 "starved host also leaves work waiting)"
                               : "");
      }
    }
  } else {
    h.summary = "the engine stalled while busy: single steps took " + seconds(step_ev.incident) + " (baseline " +
                seconds(step_ev.baseline) + "); every running sequence saw the same gap";
  }
  if (worker && s_gap > 0 && s_gap >= std::max(s_idle, s_held) && !(s_direct > 0))
    h.summary = "the engine stopped between steps: the longest gap between tokens grew to " +
                seconds(itl->incident.max) + " (baseline " + seconds(itl->baseline.max) +
                ") while the median gap and the longest step stayed as they were";
  h.why_not = "longest step " + seconds(step_ev.incident) + " vs " + seconds(step_ev.baseline) +
              ", intervals without a step " + percent(idle_i) +
              (held_known ? ", waiting beside free slots " + percent(held_i) : std::string()) +
              (direct ? ", time held without a step " + percent(held_direct->incident.mean) + " (baseline " +
                            percent(held_direct->baseline.mean) + ")"
                      : std::string());
  return h;
}

void evaluate_stalls(Evaluation& e) {
  Hypothesis h = stall_hypothesis(e, /*from_pending=*/false);
  e.found.stall = h.strength;
  e.hypotheses.push_back(std::move(h));
}

}  // namespace inferscope::doctor::detail
