// Closed forms over the sawtooth of paused time, so a long step over many short windows costs
// the same as a short one.
#include "serve/engine/pause_schedule.h"

#include <algorithm>
#include <cmath>

namespace inferscope::serve {

void PauseSchedule::set(const PeriodicPause& pause, double now_s) {
  if (pause == pause_) return;
  pause_ = pause;
  origin_ = now_s;
}

double PauseSchedule::active_time(double t_s) const {
  const double every = pause_.every_s, len = pause_.for_ms / 1000.0;
  double x = t_s - origin_;
  double k = std::floor(x / every);
  double phase = x - k * every;
  return k * (every - len) + std::max(0.0, phase - len);
}

double PauseSchedule::stretched_end(double start_s, double duration_s) const {
  if (!active() || start_s < origin_) return start_s + duration_s;
  if (duration_s <= 0) return release_time(start_s);  // even a free step waits out a pause
  const double every = pause_.every_s, len = pause_.for_ms / 1000.0, work = every - len;
  double target = active_time(start_s) + duration_s;  // unpaused time at the end
  double k = std::floor(target / work);
  double rest = target - k * work;
  double end = origin_ + k * every + (rest > 0 ? len + rest : 0.0);
  return std::max(end, start_s + duration_s);
}

double PauseSchedule::release_time(double t_s) const {
  if (!active() || t_s < origin_) return t_s;
  const double every = pause_.every_s, len = pause_.for_ms / 1000.0;
  double x = t_s - origin_;
  double phase = x - std::floor(x / every) * every;
  return phase < len ? t_s + (len - phase) : t_s;
}

}  // namespace inferscope::serve
