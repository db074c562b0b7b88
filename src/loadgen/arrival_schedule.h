// File: arrival_schedule.h
// LoadStage/LoadPlan describe the offered load (open loop at a rate, closed loop at a concurrency,
// or a rate with a concurrency cap, in timed steps), and ArrivalSchedule turns a plan into intended
// send offsets from a seeded RNG, so two runs with the same seed offer the same load.
// Example: ArrivalSchedule s(plan, 42); auto t = s.next(std::chrono::nanoseconds(0));
// Not thread-safe (one dispatcher owns it). Never reads a clock: the caller owns time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "inferscope/common/result.h"

namespace inferscope::loadgen {

using Nanos = std::chrono::nanoseconds;

// ArrivalKind is the gap distribution of an open-loop stage.
enum class ArrivalKind { kConstant, kPoisson, kGamma };

// LoadStage is one step of the load: for `duration` (0 = until the run's bounds end it), offer
// `rate` requests/s (0 = no rate: closed loop, or all at once without a cap) with at most
// `concurrency` in flight (0 = no cap).
struct LoadStage {
  Nanos duration{0};
  double rate = 0;
  std::uint32_t concurrency = 0;
};

// LoadPlan is the ordered list of stages plus the arrival process used by every rate stage.
struct LoadPlan {
  std::vector<LoadStage> stages;
  ArrivalKind kind = ArrivalKind::kPoisson;
  double burstiness = 1.0;  // gamma shape: coefficient of variation of the gaps is 1/sqrt(b)
};

// parse_stages reads "30s:rate=10,60s:rate=50:concurrency=64,30s:concurrency=8" into stages.
// Fails with a message naming --stages on an unknown key, a missing duration or a bad number.
Result<std::vector<LoadStage>> parse_stages(std::string_view text);

// ArrivalSchedule yields intended send offsets (from the run's start) for a LoadPlan.
class ArrivalSchedule {
 public:
  // ArrivalSchedule copies `plan`. An empty plan or a stage with a negative rate is setup misuse
  // and throws std::invalid_argument.
  ArrivalSchedule(LoadPlan plan, std::uint64_t seed);

  // next returns the intended offset of the arrival after one intended at `previous` (pass the
  // current elapsed time in closed-loop stages, where arrivals are paced by free slots), or
  // nullopt once the last timed stage has ended. Cost: one RNG draw.
  std::optional<Nanos> next(Nanos previous);

  // stage_index_at returns the index of the stage active at offset `t` (the last stage when the
  // plan has ended) and stage_end the offset at which stage i ends (Nanos::max() if open-ended).
  std::size_t stage_index_at(Nanos t) const;
  Nanos stage_end(std::size_t i) const;
  const LoadStage& stage(std::size_t i) const { return plan_.stages[i]; }
  std::size_t stage_count() const { return plan_.stages.size(); }
  // plan_end is the end of the last stage, or Nanos::max() when the last stage is open-ended.
  Nanos plan_end() const { return stage_end(plan_.stages.size() - 1); }

 private:
  Nanos draw_gap(double rate);

  LoadPlan plan_;
  std::vector<Nanos> ends_;
  std::mt19937_64 rng_;
};

}  // namespace inferscope::loadgen
