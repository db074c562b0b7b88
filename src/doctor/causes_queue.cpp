// The job queue in front of the server (up's Redis queue collector): workers take jobs off it and
// call the server, so a job's time is its wait in the queue plus its run. The queue grows when
// jobs arrive faster than the workers finish them. That has three reasons, told apart by what
// the workers and the server do meanwhile:
// - nothing consumes (workers dead, stuck or listening elsewhere): jobs wait, none starts or
//   ends, the oldest job ages about a second per second, and the server behind idles;
// - the workers are busy and arrivals outpace them (a burst, too few workers): jobs still end
//   at the workers' pace, run time unchanged, the gap is arrivals minus completions;
// - the server behind got slower: each job runs longer, so the same workers finish fewer and the
//   queue backs up too. Then the server's cause is the cause and the backlog its consequence.
#include <algorithm>
#include <cmath>

#include "doctor/cause_family.h"

namespace inferscope::doctor::detail {
namespace {

constexpr Stage kWaitStage = Stage::kQueueWait;

// Tail compares the last quarter of the incident window with the whole baseline: an incident
// that began inside the window shows there first (workers killed a minute ago).
struct Tail {
  double first = kNaN, last = kNaN;  // gauge: values at the quarter's start and the window's end
  double mean = kNaN;                // counter: rate over the quarter
};

Tail tail_of(const WindowStat& w, double window_seconds) {
  Tail t;
  const auto& v = w.intervals;
  if (v.empty() || !(window_seconds > 0)) return t;
  std::size_t n = v.size(), k = std::max<std::size_t>(2, n / 4);
  k = std::min(k, n);
  std::size_t from = n - k;
  double sum = 0;
  int with = 0;
  for (std::size_t i = from; i < n; ++i)
    if (!std::isnan(v[i])) {
      if (std::isnan(t.first)) t.first = v[i];
      t.last = v[i];
      sum += v[i];
      ++with;
    }
  if (with > 0) t.mean = sum / with;
  return t;
}

// ageing_rate: how fast the oldest waiting job aged in the window's last quarter, in seconds per
// second, since the queue last held no job there (age 0, or no sample): from the first sample
// after that to the window's end (from earlier in the window when nothing was taken in the
// quarter and the age rose before it too). Each sample of that stretch reads now minus an
// enqueue time, so jobs taken meanwhile lower the rate (each take drops the age) and a queue
// nothing consumes ages a second per second. Counting from earlier, while the workers still
// emptied the queue, spreads the same rise over seconds in which nothing waited. A stretch of one
// sample is read from the empty sample before it (a lower bound: its job came at that time or
// later). The seconds are the samples' own times where the snapshot has them, else the window
// spread evenly over its intervals. NaN: no job waits at the end, or no two samples to read.
double ageing_rate(const WindowStat& w, double window_seconds) {
  const auto& v = w.intervals;
  const std::size_t n = v.size();
  if (n < 2 || !(window_seconds > 0)) return kNaN;
  const std::size_t from = n - std::min(n, std::max<std::size_t>(2, n / 4));
  std::size_t last = n;
  for (std::size_t i = n; i-- > from;)
    if (!std::isnan(v[i])) {
      last = i;
      break;
    }
  if (last == n || !(v[last] > 0)) return kNaN;
  std::size_t first = last;
  while (first > from && v[first - 1] > 0) --first;  // NaN and 0 end the stretch
  // Nothing taken in the whole quarter (the age never fell there): the same job waited before it
  // as long as the age rose (a flat age is jobs taken as fast as they come), so read the rise
  // from there: a collector and a scrape on clocks of their own can repeat or skip a collection,
  // which moves a rate read over a few samples, and more seconds dilute that.
  bool rising = true;
  for (std::size_t i = first; i < last; ++i) rising = rising && v[i] <= v[i + 1];
  if (first == from && rising)
    while (first > 0 && v[first - 1] > 0 && v[first - 1] < v[first]) --first;
  if (first == last && first > 0 && v[first - 1] == 0) --first;
  if (first == last) return kNaN;
  const bool timed = w.interval_times.size() == n;
  const double seconds = timed ? w.interval_times[last] - w.interval_times[first]
                               : window_seconds * static_cast<double>(last - first) / static_cast<double>(n - 1);
  return seconds > 0 ? (v[last] - v[first]) / seconds : kNaN;
}

double or_zero(double v) { return std::isnan(v) ? 0 : v; }

}  // namespace

bool queue_age_known(const Snapshot& s, bool incident) {
  const Quantity* age = s.find(SignalId::kQueueOldestAge);
  if (!age) return false;
  const WindowStat& a = incident ? age->incident : age->baseline;
  if (!a.has_data()) return false;
  const Quantity* depth = s.find(SignalId::kQueueDepth);
  if (!depth) return true;
  const auto& d = (incident ? depth->incident : depth->baseline).intervals;
  bool waited = false;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (std::isnan(d[i]) || d[i] < 1) continue;
    waited = true;
    if (i < a.intervals.size() && !std::isnan(a.intervals[i])) return true;
  }
  return !waited;
}

namespace {

// What the doctor reads of the queue, both windows.
struct QueueView {
  const Quantity* depth = nullptr;
  const Quantity* age = nullptr;
  const Quantity* wait = nullptr;
  const Quantity* run = nullptr;
  const Quantity* in_progress = nullptr;
  const Quantity* finished = nullptr;
  const Quantity* failed = nullptr;
  const Quantity* busy = nullptr;
  const Quantity* idle = nullptr;
  const Quantity* stale = nullptr;
  // The server behind: each job's worker makes one request to it, so its finished requests stand
  // for the jobs that ended where the queue counts none (Celery, plain lists).
  const Quantity* server_requests = nullptr;
  // Whether the oldest age tells the wait in each window (queue_age_known).
  bool age_known_baseline = false, age_known_incident = false;
  double window_s = 0, baseline_s = 0;

  explicit QueueView(const Evaluation& e) {
    // A series the collector never exported (Celery: no job counters, no oldest age while jobs
    // wait) still stands in a scraped snapshot, without a sample in either window: it is absent,
    // not zero (read as zero, the missing job counters said that no job ended).
    auto seen = [](const Quantity* q) { return q && q->sampled() ? q : nullptr; };
    depth = seen(e.find(SignalId::kQueueDepth));
    age = seen(e.find(SignalId::kQueueOldestAge));
    wait = seen(e.find(kWaitStage));
    run = seen(e.find(SignalId::kQueueRun));
    in_progress = seen(e.find(SignalId::kQueueInProgress));
    finished = seen(e.find(SignalId::kQueueJobsFinished));
    failed = seen(e.find(SignalId::kQueueJobsFailed));
    busy = seen(e.find(SignalId::kQueueWorkersBusy));
    idle = seen(e.find(SignalId::kQueueWorkersIdle));
    stale = seen(e.find(SignalId::kQueueWorkersStale));
    server_requests = seen(e.find(SignalId::kRequestRate));
    age_known_baseline = queue_age_known(e.snapshot, false);
    age_known_incident = queue_age_known(e.snapshot, true);
    if (!age_known_baseline && !age_known_incident) age = nullptr;
    window_s = e.snapshot.incident_end - e.snapshot.incident_start;
    baseline_s = e.snapshot.baseline_end - e.snapshot.baseline_start;
  }
  bool present() const { return depth != nullptr; }
  bool workers_known() const { return busy || idle; }
  // Jobs ended per second (finished + failed), else jobs started (wait observations), else the
  // server's finished requests (one per job; completions_from_server()).
  double completions(bool incident) const {
    if (finished || failed) return or_zero(mean_of(finished, incident)) + or_zero(mean_of(failed, incident));
    if (wait) {
      const WindowStat& w = incident ? wait->incident : wait->baseline;
      double s = incident ? window_s : baseline_s;
      return s > 0 ? w.count / s : kNaN;
    }
    return mean_of(server_requests, incident);
  }
  bool completions_from_server() const { return !finished && !failed && !wait && server_requests; }
  // Little's law: the mean wait is the mean number waiting over the rate they leave at. For a
  // queue whose jobs carry no enqueue time (Celery) it is the only wait there is.
  double estimated_wait(bool incident) const {
    const double leaving = completions(incident), waiting = mean_of(depth, incident);
    return leaving > 0 && waiting >= 0 ? waiting / leaving : kNaN;
  }
  // Completions in the window's last quarter (counters only; NaN when unknown).
  double tail_completions() const {
    if (!finished && !failed) return kNaN;
    double sum = 0;
    for (const Quantity* q : {finished, failed})
      if (q) sum += or_zero(tail_of(q->incident, window_s).mean);
    return sum;
  }
  // growth of a gauge over a window (last - first sample).
  static double growth(const Quantity* q, bool incident) {
    if (!q) return 0;
    const auto& v = (incident ? q->incident : q->baseline).intervals;
    double first = kNaN, last = kNaN;
    for (double x : v)
      if (!std::isnan(x)) {
        if (std::isnan(first)) first = x;
        last = x;
      }
    return std::isnan(first) ? 0 : last - first;
  }
  // Arrivals: what ended plus what the queue and the workers gained.
  double arrivals(bool incident) const {
    double done = completions(incident);
    double s = incident ? window_s : baseline_s;
    if (std::isnan(done) || !(s > 0)) return kNaN;
    return std::max(0.0, done + (growth(depth, incident) + growth(in_progress, incident)) / s);
  }
  double live_workers(bool incident) const {
    return or_zero(mean_of(busy, incident)) + or_zero(mean_of(idle, incident));
  }
  double last_live_workers() const {
    double sum = 0;
    for (const Quantity* q : {busy, idle})
      if (q) sum += or_zero(tail_of(q->incident, window_s).last);
    return sum;
  }
};

void add_queue_evidence(const Evaluation& e, const QueueView& q, Hypothesis& h) {
  // The peak, as the headline's "peak depth" says it: one figure, one statistic.
  h.evidence.push_back(e.ev(q.depth, "queue depth", /*use_max=*/true));
  h.evidence.back().metric += " (jobs waiting, peak)";
  if (q.age) {
    h.evidence.push_back(e.ev(q.age, "oldest job age", /*use_max=*/true));
    h.evidence.back().metric += " (oldest waiting job, max)";
  }
  if (q.wait) h.evidence.push_back(e.ev(q.wait, "queue wait"));
}

// workers_down: jobs wait and nothing takes them. Consumption stopped (jobs ended in the
// window's last quarter fell far below the baseline's pace) and the oldest job ages at about the
// clock's pace. The workers' own state only adds to it: none live is decisive; idle ones beside
// waiting jobs are as good as none (dead, not expired yet, or listening elsewhere); busy ones that
// finish nothing for many times a job's usual run are dead mid-job (RQ keeps a SIGKILLed busy
// worker's hash up to 90 s) or stuck. Unless the server itself holds their requests: a server
// with requests pending and none finishing is stalled, and the workers only wait for it.
Hypothesis& weigh_workers_down(Evaluation& e, const QueueView& q) {
  Hypothesis& h = e.add(CauseId::kWorkersDown);
  Tail depth_tail = tail_of(q.depth->incident, q.window_s);
  double waiting = or_zero(depth_tail.last);
  double base_done = q.completions(false);
  double tail_done = q.tail_completions();
  double done = q.completions(true);
  // Without counters the window's starts stand for consumption.
  double consumption = std::isnan(tail_done) ? done : tail_done;
  double stopped = base_done > 0 ? ramp(1 - consumption / base_done, 0.5, 0.95) : (consumption > 0 ? 0.0 : 1.0);
  double age_slope = kNaN;
  if (q.age && q.age_known_incident) age_slope = ageing_rate(q.age->incident, q.window_s);
  double aging = std::isnan(age_slope) ? stopped : ramp(age_slope, 0.3, 0.8);
  double in_progress = q.in_progress ? or_zero(tail_of(q.in_progress->incident, q.window_s).last) : 0;
  double busy_end = q.busy ? or_zero(tail_of(q.busy->incident, q.window_s).last) : 0;
  bool none_live = q.workers_known() && q.last_live_workers() < 0.5;
  bool claims_work = in_progress >= 0.5 || busy_end >= 0.5;
  // A job usually ends within its baseline run time; a quarter of the window without any end is
  // many runs long only if runs are short.
  double usual_run = q.run && q.run->baseline.has_data() ? q.run->baseline.mean : kNaN;
  double quarter = q.window_s / 4;
  bool silent_long = !std::isnan(usual_run) && quarter >= 3 * usual_run;
  // What the server holds at the window's end (its requests from the workers, if any work).
  double server_pending = 0;
  for (SignalId id : {SignalId::kInFlight, SignalId::kRunning, SignalId::kWaiting})
    if (const Quantity* p = e.find(id))
      server_pending = std::max(server_pending, or_zero(tail_of(p->incident, q.window_s).last));
  // Workers that claim work must have ended nothing at all: a much slower job still ends.
  if (claims_work && base_done > 0) stopped = ramp(1 - consumption / base_done, 0.9, 0.99);
  double strength = 0;
  if (waiting >= 1 && (!claims_work || silent_long)) {
    strength = none_live ? std::max(0.6, std::min(stopped, aging)) : std::min(stopped, aging);
    if (server_pending >= 0.5) strength *= 0.2;
  }
  h.strength = strength;
  add_queue_evidence(e, q, h);
  if (q.finished || q.failed) {
    h.evidence.push_back({"inferscope_queue_jobs_total (ended per second)", base_done, done, "jobs/s"});
  }
  if (q.workers_known()) {
    h.evidence.push_back({"inferscope_queue_workers{state=~\"busy|idle\"} (live workers)", q.live_workers(false),
                          q.live_workers(true), "workers"});
  }
  if (q.stale) {
    h.evidence.push_back(e.ev(q.stale, "stale workers"));
    h.evidence.back().metric += "{state=\"stale\"}";
  }
  // The server behind idles: its request rate and GPU are evidence that the workers, not the
  // server, stopped.
  if (const Quantity* rate = e.find(SignalId::kRequestRate)) h.evidence.push_back(e.ev(rate, "server requests"));
  if (const Quantity* gpu = e.find(SignalId::kGpuUtil)) h.evidence.push_back(e.ev(gpu, "GPU utilization"));
  std::string who = none_live     ? "no live worker"
                    : claims_work ? number(std::max(busy_end, in_progress)) + " still registered busy but no job ended "
                                    "for many times a job's usual " + seconds(usual_run)
                    : q.workers_known() ? "workers registered but none busy"
                                        : "no job started";
  h.summary = number(waiting) + " jobs wait and nothing consumes them (" + who + "; " +
              (std::isnan(age_slope) ? std::string("no job ended in the window's last quarter")
                                     : "the oldest job ages " + common::format_printf("%.2f", age_slope) + " s per s") +
              "): the workers are down, stuck or not listening to this queue";
  h.why_not = waiting < 1 ? "no job waits at the window's end"
              : claims_work && !silent_long
                  ? "workers are busy (" + number(in_progress) + " jobs in progress)"
              : server_pending >= 0.5 && strength > 0
                  ? "the server holds " + number(server_pending) + " requests: the workers wait for it"
                  : "jobs are still consumed (" + number(consumption) + " /s at the end vs " + number(base_done) +
                        " /s in the baseline)";
  return h;
}

// strongest_of: the hypothesis of `group` that carries most strength; nullptr when none.
Hypothesis* strongest_of(Evaluation& e, CauseGroup group) {
  Hypothesis* best = nullptr;
  for (Hypothesis& h : e.hypotheses)
    if (spec(h.cause).group == group && (!best || h.strength > best->strength)) best = &h;
  return best;
}

// The server cause that carries most strength (the queue's backlog is then its consequence).
Hypothesis* strongest_server_cause(Evaluation& e) {
  Hypothesis* best = strongest_of(e, CauseGroup::kSlowdown);
  return best && best->strength >= 0.3 ? best : nullptr;
}

// queue_backlog: the queue grows while the workers work. The capacity gap is arrivals minus
// completions; what part of it the server's own slowdown made (each job runs longer, so the
// same workers finish fewer) is the server's cause, not the queue's.
void weigh_backlog(Evaluation& e, const QueueView& q, double workers_down) {
  Hypothesis& h = e.add(CauseId::kQueueBacklog);
  add_queue_evidence(e, q, h);
  double db = or_zero(mean_of(q.depth, false)), di = or_zero(mean_of(q.depth, true));
  double depth_grow = q.window_s > 0 ? QueueView::growth(q.depth, true) / q.window_s : 0;
  // +1 job keeps an empty baseline from making any queue infinitely deeper.
  double s_depth = std::max(log_ramp((di + 1) / (db + 1), 1.5, 4), ramp(depth_grow, 0.05, 0.5));
  double s_wait = 0;
  if (q.age && q.age_known_incident)
    s_wait = log_ramp((or_zero(q.age->incident.max) + 1) /
                          ((q.age_known_baseline ? or_zero(q.age->baseline.max) : 0) + 1), 1.5, 4);
  if (q.wait && q.wait->baseline.has_data() && q.wait->incident.has_data())
    s_wait = std::max(s_wait, log_ramp((q.wait->incident.mean + 0.1) / (q.wait->baseline.mean + 0.1), 1.5, 4));
  // Neither an oldest age nor a measured wait in the window (Celery records no enqueue time; its
  // collector gives an age of 0 only while the queue is empty: queue_age_known): Little's law.
  const double est_b = q.estimated_wait(false), est_i = q.estimated_wait(true);
  const bool estimated = !q.age_known_incident && !(q.wait && q.wait->incident.has_data()) && !std::isnan(est_i);
  if (estimated) s_wait = log_ramp((est_i + 0.1) / (or_zero(est_b) + 0.1), 1.5, 4);
  double done = q.completions(true), base_done = q.completions(false);
  double arrive = q.arrivals(true), base_arrive = q.arrivals(false);
  // Busy workers: the share of live ones running a job (else jobs in progress at all).
  double busy_share = kNaN;
  if (q.busy) {
    double live = q.live_workers(true);
    busy_share = live > 0 ? mean_of(q.busy, true) / live : 0;
  }
  const double busy_working = !std::isnan(busy_share) ? ramp(busy_share, 0.5, 0.9)
                             : q.in_progress         ? (mean_of(q.in_progress, true) >= 0.5 ? 1.0 : 0.0)
                                                     : (done > 0 ? 0.7 : 0.0);
  // The busy share is a sample of the workers' state, and it can miss workers that are the
  // bottleneck: a Celery worker (prefetch 1, late acks, Redis) takes one message per transport
  // poll, about one a second, so with jobs shorter than that its heartbeats (every 2 s: tasks in
  // hand at that moment) read idle most of the time while hundreds of jobs wait. Jobs that still
  // end at the baseline's pace while the queue grows are workers consuming at theirs: working.
  const double keeping_pace = base_done > 0 && done > 0 ? ramp(done / base_done, 0.5, 0.9) : 0;
  const double working = std::max(busy_working, keeping_pace);
  double strength = std::min(s_depth, std::max(s_wait, s_depth * 0.8)) * working;
  // Consumption must go on to the window's end: with none, the workers stopped (workers_down's
  // case, or a server that holds their requests).
  if (!(done > 0)) strength = 0;
  double tail_done = q.tail_completions();
  if (base_done > 0 && !std::isnan(tail_done)) strength *= 1 - ramp(1 - tail_done / base_done, 0.9, 0.99);
  strength = std::max(0.0, strength - 0.5 * workers_down);
  // No live worker at the window's end: nothing is busy, whatever the window's average says (a
  // queue that was short of workers and then lost them is workers_down's case first).
  const bool none_live = q.workers_known() && q.last_live_workers() < 0.5;
  if (none_live) strength = 0;

  double gap = or_zero(arrive) - or_zero(done);
  // Jobs per worker: per busy worker, or per live one where the busy share missed the work.
  double per_worker = kNaN;
  if (q.busy && keeping_pace > busy_working) {
    if (q.live_workers(true) > 0) per_worker = done / q.live_workers(true);
  } else if (q.busy && mean_of(q.busy, true) > 0) {
    per_worker = done / mean_of(q.busy, true);
  }
  std::string gap_text = "jobs arrive at " + number(or_zero(arrive)) + "/s (baseline " + number(or_zero(base_arrive)) +
                         "/s) and end at " + number(or_zero(done)) + "/s: " + number(std::max(0.0, gap)) + "/s short";
  if (per_worker > 0 && gap > 0)
    gap_text += ", about " + number(std::ceil(gap / per_worker)) + " more workers at " + number(per_worker) +
                " jobs/s each";

  // The server's part: run time up together with the server's own latency.
  const Quantity* run = q.run;
  double run_ratio = run ? ratio(run->baseline.mean, run->incident.mean) : kNaN;
  const Change& server = e.e2e_change;
  double server_part = 0;
  if (server.up && run_ratio > 1) {
    double run_rise = run->incident.mean - run->baseline.mean;
    double explained = run_rise > 0 ? std::clamp(server.delta / run_rise, 0.0, 1.0) : 0;
    double slower = std::log(run_ratio) * explained;
    double more = std::log(std::max(1.0, or_zero(arrive) / std::max(base_arrive, 1e-9)));
    if (!(base_arrive > 0)) more = 0;
    server_part = slower > 0 ? slower / (slower + more) : 0;
  } else if (server.up && !run) {
    // Without run times: a server that got slower by its own cause explains the backlog when the
    // arrivals did not rise.
    double arrival_ratio = base_arrive > 0 ? or_zero(arrive) / base_arrive : kNaN;
    if (arrival_ratio < 1.15) server_part = 1;
  }
  Hypothesis* server_cause = server_part > 0 ? strongest_server_cause(e) : nullptr;
  if (!server_cause) server_part = 0;
  double raw = strength;
  h.strength = strength * (1 - server_part);
  if (run) h.evidence.push_back(e.ev(run, "job run time"));
  h.evidence.push_back({"job arrivals (ended + growth of depth and in progress)", base_arrive, arrive, "jobs/s"});
  if (q.busy) h.evidence.push_back(e.ev(q.busy, "busy workers"));
  if (estimated) {
    h.evidence.push_back({"estimated wait (Little's law: mean " + q.depth->metric + " / " +
                              (q.completions_from_server() ? "finished server requests/s, one per job"
                                                           : std::string("jobs ended/s")) + ")",
                          est_b, est_i, "s"});
    gap_text += "; estimated wait " + seconds(est_b) + " -> " + seconds(est_i) +
                " (Little's law: mean depth / completions; the queue records no enqueue time)";
  }
  h.summary = keeping_pace > busy_working
                  ? "the queue backs up while jobs still end at the baseline's pace or faster (the workers' sampled "
                    "busy share " + percent(or_zero(busy_share)) + " misses their work): " + gap_text
                  : "the queue backs up while the workers are busy: " + gap_text;
  h.why_not = none_live       ? "no live worker at the window's end: the queue grows because nothing consumes it"
              : raw > 0       ? ""
              : !(done > 0)   ? "no job is known to end in the window (depth " + number(db) + " -> " + number(di) + ")"
              : working <= 0  ? "the workers are not busy (depth " + number(db) + " -> " + number(di) + ")"
                              : "the queue did not grow (depth " + number(db) + " -> " + number(di) + ")";
  if (server_cause && server_part >= 0.5 && raw > 0) {
    // Say so on the server's cause: the queue wait is what users feel of it first.
    const std::string cause(to_string(server_cause->cause));
    h.why_not = "a consequence of " + cause + ": jobs run " + common::format_printf("x%.1f", run_ratio) +
                " longer with the server's own latency, so the same workers finish fewer (" + gap_text + ")";
    std::string wait_text = q.wait && q.wait->incident.has_data()
                                ? ", queue wait " + seconds(or_zero(q.wait->baseline.mean)) + " -> " +
                                      seconds(q.wait->incident.mean)
                                : std::string();
    server_cause->summary += "; behind the job queue the backlog is its consequence (depth " + number(db) + " -> " +
                             number(di) + wait_text + "): slower jobs, same workers";
    add_queue_evidence(e, q, *server_cause);
    if (run) server_cause->evidence.push_back(e.ev(run, "job run time"));
    // What is left (arrivals that rose too) may still be reported, under the server's cause.
    h.summary += "; mostly a consequence of " + cause + " (jobs run " + common::format_printf("x%.1f", run_ratio) + " longer)";
  } else if (server_cause && raw > 0) {
    h.summary += "; partly the server's " + std::string(to_string(server_cause->cause)) + " (jobs run " +
                 common::format_printf("x%.1f", run_ratio) + " longer)";
  }
}

// worker_failures: a larger share of jobs ends failed. When the server's own errors rose, jobs
// fail because their calls fail: the server's error cause (error_spike) is the cause then.
void weigh_failures(Evaluation& e, const QueueView& q) {
  if (!q.failed) return;
  Hypothesis& h = e.add(CauseId::kWorkerFailures);
  auto share = [&](bool incident) {
    double f = or_zero(mean_of(q.failed, incident)), ok = or_zero(mean_of(q.finished, incident));
    return f + ok > 0 ? f / (f + ok) : kNaN;
  };
  double fb = or_zero(share(false)), fi = share(true);
  double failed_jobs = q.failed->incident.count;
  if (!std::isnan(fi) && fi >= 2 * fb && failed_jobs >= 3) h.strength = ramp(fi - fb, 0.02, 0.2);
  const Hypothesis* server_errors = strongest_of(e, CauseGroup::kErrors);
  if (server_errors && server_errors->strength >= 0.5) {
    h.strength *= 0.5;
    h.summary = "; the server's own errors rose too (" + std::string(to_string(server_errors->cause)) +
                "): jobs fail because their calls fail";
  }
  h.evidence.push_back({"inferscope_queue_jobs_total{outcome=\"failed\"} / all ended (failed share)", fb,
                        or_zero(fi), "ratio"});
  h.evidence.push_back(e.ev(q.failed, "failed jobs"));
  h.summary = "the failed share of jobs rose from " + percent(fb) + " to " + percent(or_zero(fi)) + " (" +
              number(failed_jobs) + " failed in the window)" + h.summary;
  h.why_not = "failed share " + percent(fb) + " -> " + percent(or_zero(fi)) + ", " + number(failed_jobs) + " failed";
}

}  // namespace

constexpr CauseSpec kQueueCauses[] = {
    {.id = CauseId::kWorkersDown, .name = "workers_down", .group = CauseGroup::kJobQueue, .stage = kWaitStage,
     .weights = {{kWaitStage, 1}}, .needs_slowdown = false, .headline = {.lead_without_slowdown = "{queue}"},
     .next_steps = {"Check the workers: are their processes running (systemctl/kubectl), which queues they listen "
                    "to, and their logs for crashes, OOM kills or a stuck job.",
                    "Restart or scale the workers; jobs waiting in the queue are kept and run once a worker takes "
                    "them (mind the job timeout and result TTLs of old jobs).",
                    "Alert on it: InferscopeQueueNotConsumed fires when jobs wait and none starts."}},
    {.id = CauseId::kQueueBacklog, .name = "queue_backlog", .group = CauseGroup::kJobQueue, .stage = kWaitStage,
     .weights = {{kWaitStage, 1}}, .needs_slowdown = false, .headline = {.lead_without_slowdown = "{queue}"},
     .next_steps = {"Add workers (or worker concurrency) until completions match arrivals; if the model server is "
                    "saturated already, add server capacity (replicas, batch size) instead.",
                    "Find where the burst came from (producers, retries) and rate-limit or prioritise it.",
                    "Watch the oldest job's age: it is the earliest sign that the backlog outgrows the workers."}},
    // Failed jobs need not wait longer: their own sentence leads.
    {.id = CauseId::kWorkerFailures, .name = "worker_failures", .group = CauseGroup::kJobQueue, .needs_slowdown = false,
     .headline = {.lead_without_slowdown = "{summary}"},
     .next_steps = {"Read the failed jobs' exceptions (RQ: the failed registry, rq info; Celery: task results) and "
                    "the workers' logs.",
                    "Check what the jobs call: the model server's errors and timeouts, the job timeout against "
                    "the server's latency."}},
};
INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(kQueueCauses, INFERSCOPE_DOCTOR_QUEUE_CAUSES);

std::span<const CauseSpec> queue_causes() { return kQueueCauses; }

void evaluate_queue(Evaluation& e) {
  QueueView q(e);
  if (!q.present()) return;
  double down = weigh_workers_down(e, q).strength;
  weigh_backlog(e, q, down);
  weigh_failures(e, q);
}

}  // namespace inferscope::doctor::detail
