// RequestTimeline: plain recording, no policy. The interpretation lives in timeline_summary.cpp.
#include <inferscope/timeline/request_timeline.h>

#include <algorithm>

namespace inferscope::timeline {

std::string_view to_string(FinishReason reason) noexcept {
  switch (reason) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kAbort: return "abort";
    case FinishReason::kError: return "error";
  }
  return "error";
}

RequestTimeline::RequestTimeline(TimePoint arrival, Role role) noexcept : role_(role) {
  moments_[static_cast<std::size_t>(Moment::kArrival)] = arrival;
  marked_ = 1U << static_cast<unsigned>(Moment::kArrival);
}

void RequestTimeline::mark(Moment moment, TimePoint when) noexcept {
  const auto index = static_cast<unsigned>(moment);
  if (index >= kMomentCount || (marked_ & (1U << index)) != 0) return;
  moments_[index] = when;
  marked_ = static_cast<std::uint16_t>(marked_ | (1U << index));
}

void RequestTimeline::add_dependency(std::string_view name, TimePoint start, TimePoint end) {
  dependencies_.push_back(DependencyCall{std::string(name), start, end});
}

void RequestTimeline::add_output(TimePoint when, std::uint32_t tokens) {
  if (tokens == 0) {
    ++empty_events_;
    return;
  }
  outputs_.push_back(OutputEvent{when, tokens});
  output_tokens_sum_ += tokens;
}

void RequestTimeline::reserve_outputs(std::size_t events) { outputs_.reserve(events); }

void RequestTimeline::finish(FinishReason reason, TimePoint when) noexcept {
  if (finished_) return;
  finished_ = true;
  reason_ = reason;
  end_ = when;
}

TimePoint RequestTimeline::end() const noexcept {
  if (finished_) return end_;
  // Unfinished: the latest thing we know happened.
  TimePoint latest = moments_[static_cast<std::size_t>(Moment::kArrival)];
  for (unsigned i = 0; i < kMomentCount; ++i) {
    if ((marked_ & (1U << i)) != 0) latest = std::max(latest, moments_[i]);
  }
  if (!outputs_.empty()) latest = std::max(latest, outputs_.back().when);
  for (const auto& call : dependencies_) latest = std::max(latest, call.end);
  return latest;
}

std::optional<TimePoint> RequestTimeline::first_output() const noexcept {
  if (outputs_.empty()) return std::nullopt;
  return outputs_.front().when;
}

std::optional<TimePoint> RequestTimeline::last_output() const noexcept {
  if (outputs_.empty()) return std::nullopt;
  return outputs_.back().when;
}

std::uint32_t RequestTimeline::output_tokens() const noexcept {
  return output_tokens_override_ != 0 ? output_tokens_override_ : output_tokens_sum_;
}

}  // namespace inferscope::timeline
