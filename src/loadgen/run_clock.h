// File: run_clock.h
// RunClock is the run's monotonic time base: every RequestRecord time is nanoseconds since start.
// Example: RunClock clock; std::int64_t t = clock.now_ns();
// Immutable after construction; thread-safe. Never a wall clock (NTP steps would corrupt latencies).
#pragma once

#include <chrono>
#include <cstdint>

namespace inferscope::loadgen {

struct RunClock {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  // now_ns returns nanoseconds since start. Cost: one steady_clock read (vDSO).
  std::int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  }
  // at converts a run offset back to a steady time point (for timers).
  std::chrono::steady_clock::time_point at(std::int64_t ns) const { return start + std::chrono::nanoseconds(ns); }
};

}  // namespace inferscope::loadgen
