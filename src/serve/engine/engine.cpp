// The engine thread. Steps chain on a virtual timeline (each step starts where the previous one
// ended) so reported times follow the model clock exactly while the thread keeps up; the chain
// is pulled forward to the latest arrival (no negative queue time) and fault change, to the
// wall clock after idling, for zero-cost steps, and when it falls more than kMaxLag behind.
#include "serve/engine/engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "serve/engine/engine_core.h"
#include "serve/engine/gpu_model.h"
#include "serve/engine/pause_schedule.h"
#include "serve/engine/solo_scheduler.h"

namespace inferscope::serve {
namespace {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;  // its duration type; time itself comes from Impl::clock
constexpr auto kMaxLag = std::chrono::milliseconds(100);
constexpr std::uint32_t kDefaultMaxNumSeqs = 256;  // vLLM's default when neither flag nor profile sets it

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}
}  // namespace

struct Engine::Impl {
  Impl(EngineOptions opts, CostProfile prof, FaultSet initial)
      : options(std::move(opts)),
        profile(std::move(prof)),
        clock(options.clock ? *options.clock : metrics::SteadyClock::instance()),
        manual_clock(options.clock != nullptr),
        core(CoreConfig{options.max_num_seqs, options.max_num_batched_tokens, options.max_model_len,
                        options.kv_capacity_tokens, options.block_size, options.enable_prefix_caching,
                        options.speculative_tokens, options.speculative_acceptance, options.max_loras},
             profile),
        epoch(clock.now()),
        gpu(profile, options.busy_window_s, epoch),
        faults(std::move(initial)) {
    if (profile.independent_requests) solo.emplace(profile, options.max_num_seqs, options.max_model_len);
    core.set_faults(faults);
    stall.set(faults.stall, 0);
    worker_stall.set(faults.worker_stall, 0);
    fill_stats();
  }

  struct Live {
    std::shared_ptr<SequenceObserver> observer;
    bool queued = true;  // counted in `queued` until first scheduled
  };

  // --- engine thread ---
  SteadyTime now() const { return clock.now(); }
  double model_at(SteadyTime t) const { return std::chrono::duration<double>(t - epoch).count() * options.time_scale; }
  SteadyTime real_at(double model_s) const { return epoch + seconds(model_s / options.time_scale); }

  void on_submit(SequenceId id, GenerationRequest request, std::shared_ptr<SequenceObserver> observer,
                 SteadyTime arrival) {
    if (stopped.load()) {  // raced with stop(): still owed exactly one on_finished
      queued.fetch_sub(1);
      pending.fetch_sub(1);
      observer->on_finished(FinishReason::kAbort, now());
      return;
    }
    if (auto ok = solo ? solo->submit(id, request, model_at(arrival)) : core.submit(id, std::move(request)); !ok) {
      queued.fetch_sub(1);
      pending.fetch_sub(1);
      observer->on_finished(FinishReason::kError, now());
      return;
    }
    live.emplace(id, Live{std::move(observer)});
    publish();
    pending.fetch_sub(1);  // after publish: stats().waiting never misses it
    kick();
  }

  void on_abort(SequenceId id) {
    if (stopped.load() || !(solo ? solo->abort(id, model_at(now())) : core.abort(id))) return;
    finish_live(id, FinishReason::kAbort, now());
    publish();
    kick();
  }

  void on_faults(const FaultSet& f) {
    if (stopped.load()) return;
    faults_set_at = now();
    double now_m = model_at(faults_set_at);
    core.set_faults(f);
    stall.set(f.stall, now_m);
    worker_stall.set(f.worker_stall, now_m);
    if (waiting_release) cancel_timer();  // re-evaluate the worker stall in kick()
    publish();
    kick();
  }

  // finish_live ends a live sequence; `last_tokens`, when given, are delivered with the finish.
  void finish_live(SequenceId id, FinishReason reason, SteadyTime when,
                   std::span<const std::uint32_t> last_tokens = {}) {
    auto it = live.find(id);
    if (it == live.end()) return;
    auto observer = std::move(it->second.observer);
    if (it->second.queued) queued.fetch_sub(1);
    live.erase(it);
    if (last_tokens.empty()) observer->on_finished(reason, when);
    else observer->on_last_tokens(last_tokens, reason, when);
  }

  // kick starts the next step unless one is running, a worker stall holds it, or there is no work.
  // Kept whole (~45 lines): choosing the start, the hold, the plan and the wait are one decision.
  void kick() {
    if (solo) return solo_kick();
    if (stopped.load() || core.step_in_flight() || waiting_release) return;
    if (!core.has_work()) {
      idle = true;
      return;
    }
    const SteadyTime now = this->now();
    // Nothing planned from here on may start before a fault change it must obey.
    SteadyTime start = idle ? now : std::max({next_start, last_arrival.load(), faults_set_at, now - kMaxLag});
    start = std::min(start, now);
    idle = false;
    double start_m = model_at(start);
    if (double release_m = worker_stall.release_time(start_m); release_m > start_m) {
      hold_until(start, real_at(release_m));
      return;
    }
    StepPlan plan = core.plan_step();
    if (plan.model_seconds <= 0) start = now;
    deliver_plan_events(plan, start);
    if (plan.empty()) {
      publish();
      idle = true;
      return;
    }
    double duration_m = stall.stretched_end(model_at(start), plan.model_seconds) - model_at(start);
    step_model_seconds = duration_m;
    step_start = start;
    step_end = start + seconds(duration_m / options.time_scale);
    {
      std::lock_guard lock(stats_mu);
      gpu.advance(start, false);
      busy_now = true;
    }
    if (step_end <= now) {
      step_end_posted = true;
      asio::post(io, [this] { on_step_end(); });
    } else {
      arm_timer(step_end, [this] { on_step_end(); });
    }
  }

  // hold_until keeps the engine from scheduling (worker stall): the GPU idles meanwhile.
  // The hold counts as held time from `from` until it ends: at `until`, or earlier when a fault
  // change cancels it.
  void hold_until(SteadyTime from, SteadyTime until) {
    waiting_release = true;
    {
      std::lock_guard lock(stats_mu);
      gpu.advance(from, false);
      holding_since = from;
    }
    next_start = until;
    arm_timer(until, [this, from, until] {
      {
        std::lock_guard lock(stats_mu);
        held_seconds += std::max(0.0, std::chrono::duration<double>(std::min(now(), until) - from).count());
        holding_since.reset();
      }
      waiting_release = false;
      kick();
    });
  }

  // solo_kick (independent-requests profiles) delivers every event due by now, each at its own
  // time, then waits for the next one. Faults that act on steps (stall, slowdowns) do not apply.
  void solo_kick() {
    if (stopped.load()) return;
    const SteadyTime now = this->now();
    {
      std::lock_guard lock(stats_mu);
      gpu.advance(now, busy_now);
    }
    // Due means "its real time has come" (real_at, as the timer is armed), not model_at(now) >= at,
    // which rounding can keep false for an event whose timer already fired.
    std::vector<SoloEvent> events;
    for (auto next = solo->next_event_at(); next && real_at(*next) <= now; next = solo->next_event_at()) {
      auto due = solo->advance(*next);
      events.insert(events.end(), due.begin(), due.end());
    }
    for (std::size_t i = 0; i < events.size(); ++i) {
      const SoloEvent& ev = events[i];
      auto it = live.find(ev.id);
      if (it == live.end()) continue;
      const SteadyTime when = std::min(now, real_at(ev.at));
      SequenceObserver& observer = *it->second.observer;
      switch (ev.kind) {
        case SoloEvent::Kind::kScheduled:
          if (it->second.queued) queued.fetch_sub(1);
          it->second.queued = false;
          observer.on_scheduled(when);
          break;
        case SoloEvent::Kind::kPrefillDone: observer.on_prefill_done(when); break;
        case SoloEvent::Kind::kToken:
          // SoloScheduler emits a sequence's kFinished right after its last kToken.
          if (i + 1 < events.size() && events[i + 1].kind == SoloEvent::Kind::kFinished && events[i + 1].id == ev.id) {
            finish_live(ev.id, events[i + 1].reason, when, std::span<const std::uint32_t>(&ev.token, 1));
            ++i;
            break;
          }
          observer.on_tokens(std::span<const std::uint32_t>(&ev.token, 1), when);
          break;
        case SoloEvent::Kind::kFinished: finish_live(ev.id, ev.reason, when); break;
      }
    }
    {
      std::lock_guard lock(stats_mu);
      busy_now = !live.empty();
    }
    publish();
    if (auto next = solo->next_event_at()) arm_timer(real_at(*next), [this] { solo_kick(); }, /*run_on_cancel=*/false);
  }

  // arm_timer runs `fn` on the engine thread at `when`: a real timer on the steady clock; with a
  // manual clock, the first catch_up() that finds the clock at or past `when`. One at a time: a
  // new arm replaces the old one, whose `fn` still runs at once if `run_on_cancel` was set.
  void arm_timer(SteadyTime when, std::function<void()> fn, bool run_on_cancel = true) {
    if (!manual_clock) {
      timer.expires_at(when);
      timer.async_wait([fn = std::move(fn), run_on_cancel](const boost::system::error_code& ec) {
        if (run_on_cancel || ec != boost::asio::error::operation_aborted) fn();
      });
      return;
    }
    manual_due = when;
    manual_fn = std::move(fn);
  }

  // cancel_timer fires the armed callback early (asio's operation_aborted; callers re-check).
  void cancel_timer() {
    if (!manual_clock) {
      timer.cancel();
      return;
    }
    if (!manual_fn) return;
    manual_due = SteadyTime::min();
    asio::post(io, [this] { fire_manual_timer_if_due(); });
  }

  // fire_manual_timer_if_due runs the manual-clock timer when its time has come; true if it ran.
  bool fire_manual_timer_if_due() {
    if (!manual_fn || manual_due > now()) return false;
    auto fn = std::move(manual_fn);
    manual_fn = nullptr;
    fn();
    return true;
  }

  // on_catch_up runs what is due and re-posts itself (behind any step it posted) until nothing is.
  void on_catch_up(std::shared_ptr<std::promise<void>> done) {
    bool ran = !stopped.load() && manual_clock && fire_manual_timer_if_due();
    if (!stopped.load() && (ran || step_end_posted)) {
      asio::post(io, [this, done] { on_catch_up(done); });
      return;
    }
    done->set_value();
  }

  void deliver_plan_events(const StepPlan& plan, SteadyTime when) {
    for (SequenceId id : plan.first_scheduled) {
      auto it = live.find(id);
      if (it == live.end()) continue;
      if (it->second.queued) queued.fetch_sub(1);
      it->second.queued = false;
      it->second.observer->on_scheduled(when);
    }
    for (SequenceId id : plan.preempted)
      if (auto it = live.find(id); it != live.end()) it->second.observer->on_preempted(when);
    for (SequenceId id : plan.rejected) finish_live(id, FinishReason::kError, when);
  }

  void on_step_end() {
    step_end_posted = false;
    if (stopped.load()) return;
    StepResult result = core.finish_step();
    const SteadyTime end = step_end;
    for (const SequenceEvent& ev : result.events) {
      auto it = live.find(ev.id);
      if (it == live.end()) continue;
      SequenceObserver& observer = *it->second.observer;
      if (ev.prefill_done) observer.on_prefill_done(end);
      const std::span<const std::uint32_t> tokens(ev.tokens.data(), ev.token_count);
      if (!tokens.empty() && ev.finished) {
        finish_live(ev.id, ev.reason, end, tokens);
        continue;
      }
      if (!tokens.empty()) observer.on_tokens(tokens, end);
      if (ev.finished) finish_live(ev.id, ev.reason, end);
    }
    if (listener) listener(StepInfo{result.prefill_tokens, result.decode_seqs, step_model_seconds, end, result.draft_tokens});
    next_start = end;
    {
      std::lock_guard lock(stats_mu);
      gpu.advance(end, true);
      busy_now = false;
      ++steps_total;
      busy_model_seconds += step_model_seconds;
    }
    publish();
    kick();
  }

  void on_stop() {
    timer.cancel();
    manual_fn = nullptr;
    const SteadyTime now = this->now();
    for (SequenceId id : solo ? solo->abort_all() : core.abort_all()) finish_live(id, FinishReason::kAbort, now);
    publish();
    work.reset();
  }

  // fill_stats copies the scheduler's counters into the snapshot; stats_mu held (or not yet shared).
  void fill_stats() {
    if (solo) solo->fill_stats(snapshot);
    else core.fill_stats(snapshot);
  }

  // publish copies the core's counters into the snapshot stats() reads.
  void publish() {
    {
      std::lock_guard lock(stats_mu);
      fill_stats();
      snapshot.steps_total = steps_total;
      snapshot.busy_model_seconds = busy_model_seconds;
      snapshot.held_seconds = held_seconds;
      ++snapshot.publish_seq;
    }
    stats_cv.notify_all();
  }

  // --- immutable after start ---
  const EngineOptions options;
  const CostProfile profile;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  asio::steady_timer timer{io};
  std::thread thread;
  const metrics::Clock& clock;
  const bool manual_clock;  // options.clock was given: timers wait for catch_up(), not real time

  // --- engine thread only ---
  EngineCore core;
  std::optional<SoloScheduler> solo;  // set for independent-requests profiles (seed-mock): no steps
  std::unordered_map<SequenceId, Live> live;
  PauseSchedule stall, worker_stall;
  std::function<void(const StepInfo&)> listener;
  bool idle = true, waiting_release = false;
  SteadyTime next_start{}, step_start{}, step_end{}, faults_set_at{};
  double step_model_seconds = 0;
  bool step_end_posted = false;  // an on_step_end is queued on io (a step already due)
  SteadyTime manual_due{};
  std::function<void()> manual_fn;  // the armed timer's callback, manual clock only

  // --- shared ---
  const SteadyTime epoch;
  std::atomic<bool> stopped{false};
  std::atomic<SequenceId> next_id{1};
  std::atomic<std::uint32_t> queued{0};   // submitted, not yet scheduled once (max_waiting)
  std::atomic<std::uint32_t> pending{0};  // posted submits the engine thread has not taken yet
  std::atomic<SteadyTime> last_arrival{SteadyTime{}};
  std::mutex post_mu;  // orders submit posts against the stop post
  mutable std::mutex stats_mu;
  mutable std::condition_variable stats_cv;  // notified after every publish
  EngineStats snapshot;
  GpuModel gpu;
  bool busy_now = false;
  std::uint64_t steps_total = 0;
  double busy_model_seconds = 0;
  double held_seconds = 0;                   // holds ended so far (stats_mu)
  std::optional<SteadyTime> holding_since;  // the hold in progress (stats_mu)
  mutable std::mutex faults_mu;
  FaultSet faults;
};

Result<std::unique_ptr<Engine>> Engine::start(EngineOptions options, FaultSet initial_faults) {
  auto fail = [](const std::string& cause) { return make_error("cannot start engine from options: " + cause); };
  if (!(options.time_scale > 0) || !std::isfinite(options.time_scale)) return fail("time_scale must be > 0");
  if (options.max_num_batched_tokens == 0 || options.max_waiting == 0)
    return fail("max_num_batched_tokens and max_waiting must be > 0");
  if (options.block_size == 0 || options.block_size > 1024) return fail("block_size must be in 1..1024");
  if (options.max_model_len < 2) return fail("max_model_len must be >= 2");
  if (options.speculative_tokens > kMaxSpeculativeTokens)
    return fail("speculative_tokens must be at most " + std::to_string(kMaxSpeculativeTokens));
  if (!(options.speculative_acceptance >= 0 && options.speculative_acceptance <= 1))
    return fail("speculative_acceptance must be within [0, 1]");
  if (!(options.busy_window_s > 0)) return fail("busy_window_s must be > 0");
  if (options.lora_adapters > kMaxLoraAdapters)
    return fail("at most " + std::to_string(kMaxLoraAdapters) + " LoRA adapters");
  if (options.lora_adapters > 0 && options.max_loras == 0) return fail("max_loras must be >= 1 with LoRA adapters");
  auto catalog = ProfileCatalog::load(options.profiles_path);
  if (!catalog) return fail(catalog.error().message);
  const CostProfile* profile = catalog->find(options.profile);
  if (profile == nullptr) {
    std::string known;
    for (const auto& name : catalog->names()) known += (known.empty() ? "" : ", ") + name;
    return fail("unknown profile '" + options.profile + "' (known: " + known + ")");
  }
  if (profile->independent_requests && options.lora_adapters > 0)
    return fail("profile '" + options.profile + "' serves independent requests: no LoRA adapters");
  if (profile->independent_requests && options.speculative_tokens > 0)
    return fail("profile '" + options.profile + "' serves independent requests: no speculative decoding");
  std::uint64_t kv_tokens = options.kv_capacity_tokens ? options.kv_capacity_tokens : profile->kv_capacity_tokens;
  if (kv_tokens < options.block_size) return fail("kv_capacity_tokens must hold at least one block");
  if (options.max_num_seqs == 0) options.max_num_seqs = profile->max_num_seqs ? profile->max_num_seqs : kDefaultMaxNumSeqs;
  auto impl = std::make_unique<Impl>(std::move(options), *profile, std::move(initial_faults));
  Impl* raw = impl.get();
  raw->thread = std::thread([raw] { raw->io.run(); });
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Engine::~Engine() { stop(); }

Result<SequenceId> Engine::submit(GenerationRequest request, std::shared_ptr<SequenceObserver> observer) {
  Impl& d = *impl_;
  if (!observer) return make_error("cannot schedule request from client: no observer");
  if (auto ok = d.solo ? d.solo->check(request) : d.core.check(request); !ok) return ok.error();
  std::lock_guard lock(d.post_mu);
  if (d.stopped.load()) return make_error("cannot schedule request from client: the engine is stopped");
  if (d.queued.fetch_add(1) >= d.options.max_waiting) {
    d.queued.fetch_sub(1);
    return make_error("cannot schedule request from client: the waiting queue is full (" +
                      std::to_string(d.options.max_waiting) + " requests)");
  }
  const SequenceId id = d.next_id.fetch_add(1);
  d.pending.fetch_add(1);
  SteadyTime now = d.clock.now();
  SteadyTime prev = d.last_arrival.load();
  while (prev < now && !d.last_arrival.compare_exchange_weak(prev, now)) {
  }
  asio::post(d.io, [&d, id, request = std::move(request), observer = std::move(observer), now]() mutable {
    d.on_submit(id, std::move(request), std::move(observer), now);
  });
  return id;
}

void Engine::abort(SequenceId id) {
  asio::post(impl_->io, [d = impl_.get(), id] { d->on_abort(id); });
}

EngineStats Engine::stats() const {
  const Impl& d = *impl_;
  const SteadyTime now = d.clock.now();
  std::lock_guard lock(d.stats_mu);
  EngineStats out = d.snapshot;
  out.held_seconds = d.held_seconds;
  if (d.holding_since && now > *d.holding_since)
    out.held_seconds += std::chrono::duration<double>(now - *d.holding_since).count();
  out.waiting += d.pending.load();  // so a "queue full" submit always shows waiting >= max_waiting
  double kv_bytes = static_cast<double>(out.kv_blocks_used) * d.options.block_size * d.profile.kv_bytes_per_token;
  double other_bytes = 0;  // fault gpu_memory_other: another process holds this share of the GPU
  {
    std::lock_guard faults_lock(d.faults_mu);
    other_bytes = d.faults.gpu_memory_other * d.profile.gpu_memory_total_bytes;
  }
  d.gpu.fill(now, d.busy_now, kv_bytes + other_bytes, out);
  out.model_seconds = d.model_at(now);
  return out;
}

std::pair<std::uint32_t, std::uint32_t> Engine::load() const {
  const Impl& d = *impl_;
  std::lock_guard lock(d.stats_mu);
  return {d.snapshot.waiting + d.pending.load(), d.snapshot.running};
}

std::pair<EngineStats, bool> Engine::wait_stats(const std::function<bool(const EngineStats&)>& condition,
                                                std::chrono::milliseconds limit) const {
  const Impl& d = *impl_;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  EngineStats seen = stats();
  std::uint64_t seq = seen.publish_seq;
  while (!condition(seen)) {
    {
      std::unique_lock lock(d.stats_mu);
      // Real time on purpose: `limit` bounds how long a test may hang, whatever clock the engine runs on.
      if (!d.stats_cv.wait_until(lock, deadline, [&] { return d.snapshot.publish_seq != seq; }))
        return {seen, false};
    }
    seen = stats();
    seq = seen.publish_seq;
  }
  return {seen, true};
}

void Engine::catch_up() {
  Impl& d = *impl_;
  auto done = std::make_shared<std::promise<void>>();
  auto finished = done->get_future();
  {
    std::lock_guard lock(d.post_mu);
    if (d.stopped.load()) return;
    asio::post(d.io, [&d, done] { d.on_catch_up(done); });
  }
  finished.wait();
}

void Engine::set_step_listener(std::function<void(const StepInfo&)> listener) {
  asio::post(impl_->io, [d = impl_.get(), listener = std::move(listener)]() mutable { d->listener = std::move(listener); });
}

void Engine::set_faults(FaultSet faults) {
  {
    std::lock_guard lock(impl_->faults_mu);
    impl_->faults = faults;
  }
  asio::post(impl_->io, [d = impl_.get(), faults = std::move(faults)] { d->on_faults(faults); });
}

FaultSet Engine::faults() const {
  std::lock_guard lock(impl_->faults_mu);
  return impl_->faults;
}

const EngineOptions& Engine::options() const { return impl_->options; }
const CostProfile& Engine::profile() const { return impl_->profile; }

void Engine::stop() {
  Impl& d = *impl_;
  {
    std::lock_guard lock(d.post_mu);
    if (!d.stopped.exchange(true)) asio::post(d.io, [&d] { d.on_stop(); });
  }
  if (d.thread.joinable() && d.thread.get_id() != std::this_thread::get_id()) d.thread.join();
}

}  // namespace inferscope::serve
