// File: clock.h
// Clock is the injectable source of steady time for anything that ages data (sliding windows,
// rate estimators, timeouts), so tests can move time by hand instead of sleeping. Example:
//   ManualClock clock; SlidingWindow w({.max_samples = 100, .max_age = 10s}, clock);
//   clock.advance(11s);  // every sample in w is now expired
// Thread-safe: all three classes may be read and advanced from any thread. Never a wall clock:
// steady time only, so NTP steps cannot expire or resurrect data.
#pragma once

#include <atomic>
#include <chrono>

namespace inferscope::metrics {

// Clock returns monotonic time. Implementations must be thread-safe and must never go backwards.
class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using Duration = std::chrono::steady_clock::duration;

  virtual ~Clock() = default;
  // now returns the current steady time. Never throws; cheap (one vDSO call or one atomic load).
  virtual TimePoint now() const noexcept = 0;
};

// SteadyClock reads std::chrono::steady_clock. Stateless; use the shared instance().
class SteadyClock final : public Clock {
 public:
  // instance returns a process-wide SteadyClock that lives for the program's life.
  static SteadyClock& instance() noexcept {
    static SteadyClock clock;
    return clock;
  }
  TimePoint now() const noexcept override { return std::chrono::steady_clock::now(); }
};

// ManualClock is a Clock for tests: time moves only when advance() or set() is called. It starts at
// an arbitrary fixed point (not the epoch) so code that subtracts durations from now() stays valid.
class ManualClock final : public Clock {
 public:
  ManualClock() = default;
  // ManualClock(start) starts at `start`.
  explicit ManualClock(TimePoint start) noexcept : ticks_(start.time_since_epoch().count()) {}

  TimePoint now() const noexcept override {
    return TimePoint(Duration(ticks_.load(std::memory_order_acquire)));
  }
  // advance moves time forward by `by`; a negative `by` is ignored (a steady clock never goes back).
  void advance(Duration by) noexcept {
    if (by.count() > 0) ticks_.fetch_add(by.count(), std::memory_order_acq_rel);
  }
  // set jumps to `to` if it is later than now(); earlier times are ignored for the same reason.
  void set(TimePoint to) noexcept {
    Duration::rep want = to.time_since_epoch().count();
    Duration::rep have = ticks_.load(std::memory_order_acquire);
    while (want > have && !ticks_.compare_exchange_weak(have, want, std::memory_order_acq_rel)) {
    }
  }

 private:
  // One hour past the epoch: far enough that `now() - max_age` never underflows in tests.
  std::atomic<Duration::rep> ticks_{std::chrono::duration_cast<Duration>(std::chrono::hours(1)).count()};
};

}  // namespace inferscope::metrics
