// File: timeline_summary.h
// summarize() turns a RequestTimeline into durations: one per stage, e2e, TTFT, TPOT, plus the
// gaps between output events (ITL). The rules (which moments bound each stage, what a missing
// moment means) are in docs/request-timeline.md. Example:
//   TimelineSummary s = summarize(t); if (s.ttft_seconds) hist.observe(*s.ttft_seconds);
// Pure functions: thread-safe for distinct or unchanging timelines. Never reads a clock.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>

#include <inferscope/timeline/request_timeline.h>
#include <inferscope/timeline/stage.h>

namespace inferscope::timeline {

// TimelineSummary holds what one finished request contributes to latency metrics (seconds).
struct TimelineSummary {
  // stage_seconds[i] is the duration of Stage i, or nullopt when it was not reached or does not
  // apply to the timeline's role. kDependency is the sum of all dependency call durations.
  std::array<std::optional<double>, kStageCount> stage_seconds{};
  // truncated_stage is the stage that was in progress when the request ended (abort, error):
  // its duration runs from its start to the end. Nullopt when no stage was cut short.
  std::optional<Stage> truncated_stage;
  double e2e_seconds = 0;                    // arrival -> end (response sent, abort or error)
  std::optional<double> generation_seconds;  // arrival -> last content token (vLLM's e2e)
  std::optional<double> ttft_seconds;        // arrival -> first content token
  std::optional<double> tpot_seconds;        // (last - first token) / (output tokens - 1)
  std::optional<double> inference_seconds;   // scheduled -> last content token (prefill + decode)
  std::uint32_t prompt_tokens = 0;
  std::uint32_t output_tokens = 0;
  std::uint32_t output_events = 0;
  FinishReason reason = FinishReason::kError;
};

// StageInterval is the pair of time points that bound one stage of one request.
struct StageInterval {
  TimePoint start;
  TimePoint end;  // never before start (out-of-order marks are clamped)
};

// StageIntervals holds, per Stage, the interval a request spent in it; nullopt when not reached.
// kDependency is never set: it is the sum of the dependency calls (timeline.dependencies()).
struct StageIntervals {
  std::array<std::optional<StageInterval>, kStageCount> stages{};
  // decode_queue: a disaggregated request's wait in the decode pool (kKvTransferred ->
  // kDecodeScheduled), the second part of kQueue (stages[kQueue] is the prefill pool's wait);
  // summarize() adds it to the queue stage's seconds.
  std::optional<StageInterval> decode_queue;
  std::optional<Stage> truncated_stage;  // the stage cut short by the request's end (it ends there)
};

// stage_intervals computes the intervals summarize() turns into stage_seconds, so a request's
// stage spans (src/trace) and its stage histograms come from the same two moments.
// Allocates nothing; never reads a clock.
StageIntervals stage_intervals(const RequestTimeline& timeline) noexcept;

// summarize computes the summary of `timeline`. An unfinished timeline is summarized as ended
// with kError at its latest recorded time. Negative intervals (out-of-order marks) become 0.
// O(number of dependency calls); allocates nothing.
TimelineSummary summarize(const RequestTimeline& timeline) noexcept;
// summarize with the timeline's stage_intervals() already computed (a request's spans need both).
TimelineSummary summarize(const RequestTimeline& timeline, const StageIntervals& intervals) noexcept;

// seconds_between returns (to - from) in seconds, clamped at 0.
inline double seconds_between(TimePoint from, TimePoint to) noexcept {
  return std::max(0.0, std::chrono::duration<double>(to - from).count());
}

// for_each_output_gap calls fn(gap_seconds, tokens) for every pair of consecutive content events,
// where `tokens` is the count carried by the later event: vLLM-style ITL observes gap_seconds once
// per event; per-token ITL observes gap_seconds / tokens, `tokens` times. O(events).
template <class Fn>
void for_each_output_gap(const RequestTimeline& timeline, Fn&& fn) {
  const auto events = timeline.outputs();
  for (std::size_t i = 1; i < events.size(); ++i) {
    fn(seconds_between(events[i - 1].when, events[i].when), events[i].tokens);
  }
}

}  // namespace inferscope::timeline
