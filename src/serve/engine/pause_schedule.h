// File: pause_schedule.h
// PauseSchedule: the windows of a periodic {for_ms, every_s} fault (stall, worker_stall) on the
// model clock - the first window opens when the fault is set, then one every every_s seconds.
// Example: PauseSchedule s; s.set({500, 10}, now_s); double end = s.stretched_end(now_s, 0.006);
// Thread safety: none (value type owned by the Engine thread). Pure arithmetic, never loops.
#pragma once

#include "serve/engine/faults.h"

namespace inferscope::serve {

// PauseSchedule answers "when does work that needs N seconds of unpaused time end" and
// "when may work start" for one periodic pause.
class PauseSchedule {
 public:
  // set installs `pause` with its first window at `now_s`; setting an equal pause again keeps
  // the running phase; an inactive pause clears the schedule.
  void set(const PeriodicPause& pause, double now_s);
  bool active() const { return pause_.active(); }

  // stretched_end returns when work starting at `start_s` and needing `duration_s` unpaused
  // seconds ends, skipping every window it meets (stall: the step is stretched).
  double stretched_end(double start_s, double duration_s) const;
  // release_time returns the end of the window containing `t_s`, or `t_s` when none does
  // (worker_stall: nothing starts inside a window).
  double release_time(double t_s) const;

 private:
  // active_time returns unpaused seconds from origin_ to t (t >= origin_).
  double active_time(double t_s) const;
  PeriodicPause pause_;
  double origin_ = 0;
};

}  // namespace inferscope::serve
