// File: engine.h
// Engine runs an EngineCore on its own thread and io_context, turning each step's model seconds
// into real waits (/ time_scale) and applying stall and worker_stall (docs/serve-engine.md).
// Example: auto e = Engine::start(EngineOptions{}, FaultSet{}); auto id = (*e)->submit(req, obs);
// Thread safety: every public method is thread-safe (work is posted to the engine thread);
// observers and the step listener run on the engine thread and must never block or call back.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "inferscope/common/result.h"
#include "serve/engine/cost_profile.h"
#include "serve/engine/engine_types.h"
#include "serve/engine/faults.h"

namespace inferscope::serve {

// Engine is the running simulated engine. Not copyable; stop() (or destruction) ends it.
class Engine {
 public:
  using SequenceId = serve::SequenceId;

  // start validates `options` (time_scale > 0, sizes > 0, profile known; profiles come from the
  // built-in set plus options.profiles_path) and starts the engine thread with
  // `initial_faults`. Fails with "cannot start engine from options: <cause>".
  static Result<std::unique_ptr<Engine>> start(EngineOptions options, FaultSet initial_faults);
  ~Engine();  // calls stop()
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // submit queues a sequence and returns its id; `observer` is kept until on_finished. Fails
  // (no observer call) when stopped, when max_waiting requests are already waiting, or when the
  // request can never run (empty prompt, max_tokens 0, prompt >= max_model_len or KV capacity).
  Result<SequenceId> submit(GenerationRequest request, std::shared_ptr<SequenceObserver> observer);
  // abort ends the sequence: its KV blocks are freed at once and its observer gets
  // on_finished(kAbort). Unknown or finished ids are ignored.
  void abort(SequenceId id);
  // stats returns a consistent copy of the engine state (a mutex and a struct copy).
  EngineStats stats() const;
  // load returns {waiting, running} as of the last publish, waiting counting submits the engine
  // thread has not taken yet (so a request just sent counts at once): the data-parallel
  // dispatcher's input. One mutex, no GPU model update.
  std::pair<std::uint32_t, std::uint32_t> load() const;
  // wait_stats blocks until `condition` holds for a published state (checked now and after every
  // publish; observers run before the publish that follows their step) or `limit` of real time
  // passes; returns the last state seen and whether the condition held. Never call it on the
  // engine thread.
  std::pair<EngineStats, bool> wait_stats(const std::function<bool(const EngineStats&)>& condition,
                                          std::chrono::milliseconds limit = std::chrono::seconds(20)) const;
  // catch_up returns once the engine thread has taken everything posted before the call and run
  // every step, hold release and zero-cost step that is due at the clock's current time. With a
  // manual clock (EngineOptions::clock) this is how time moves: clock.advance(d); catch_up().
  // Never call it on the engine thread; returns at once after stop().
  void catch_up();
  // set_step_listener installs `listener`, called on the engine thread after every step.
  void set_step_listener(std::function<void(const StepInfo&)> listener);
  // set_faults replaces the active faults (effective from the next step; a changed stall or
  // worker_stall starts its first window now).
  void set_faults(FaultSet faults);
  // faults returns the active faults.
  FaultSet faults() const;
  const EngineOptions& options() const;
  const CostProfile& profile() const;
  // stop finishes every live sequence with kAbort and joins the engine thread; idempotent.
  // Must not be called from an observer or the step listener (the engine thread).
  void stop();

 private:
  struct Impl;
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferscope::serve
