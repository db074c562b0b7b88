// File: request_timeline.h
// RequestTimeline records the moments of one request (arrival, preprocess done, dependency calls,
// scheduled, every output event, postprocess done, response sent, the end) so that
// summarize()/TimelineRecorder can turn them into stage, TTFT, TPOT and ITL metrics when it ends.
// Example: RequestTimeline t(Clock::now()); t.add_output(now, 1); t.finish(FinishReason::kStop, now);
// Thread-compatible: one writer at a time (post engine-thread events to the request's executor).
// It never reads the clock itself and never touches metrics: callers pass every time point.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::timeline {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

// Role selects which stage set a timeline produces: a server's (preprocess, queue, prefill,
// decode, ...) or a gateway's (gateway_queue, upstream_connect, upstream_ttft, stream, send).
enum class Role : std::uint8_t { kServer, kGateway };

// Moment is a named instant of a request. First and last output are not moments: they follow
// from add_output().
enum class Moment : std::uint8_t {
  kArrival,               // request received (set by the constructor)
  kAdmitted,              // left the admission (gateway) queue
  kPreprocessed,          // parse, validate, template and tokenize done
  kEnqueued,              // handed to the engine queue (defaults to kPreprocessed when unset)
  kScheduled,             // left the engine queue for the first time
  kUpstreamConnectStart,  // gateway: began connecting upstream (defaults to kAdmitted/kArrival)
  kUpstreamConnected,     // gateway: upstream connection ready
  kUpstreamRequestSent,   // gateway: request fully written upstream
  kPostprocessed,         // response body or final chunk built
  kSent,                  // response fully written to the client
  // A disaggregated fleet (serve --prefill-workers/--decode-workers; docs/disaggregation.md):
  // kEnqueued is handed to the router, kScheduled left the prefill pool's queue.
  kRouted,                // the router chose the prefill and decode workers
  kPrefilled,             // the prefill worker computed the prompt (its first token)
  kKvTransferred,         // the prompt's KV cache reached the decode worker
  kDecodeScheduled,       // left the decode pool's queue (admitted with its KV present)
};

// kMomentCount is the number of Moment values.
inline constexpr std::size_t kMomentCount = 14;

// FinishReason says how a request ended. Client disconnects and cancellations are kAbort.
enum class FinishReason : std::uint8_t { kStop, kLength, kAbort, kError };

// kAllFinishReasons lists every reason (for pre-creating series).
inline constexpr std::array<FinishReason, 4> kAllFinishReasons = {
    FinishReason::kStop, FinishReason::kLength, FinishReason::kAbort, FinishReason::kError};

// to_string returns "stop", "length", "abort" or "error".
std::string_view to_string(FinishReason reason) noexcept;

// OutputEvent is one streamed output event carrying `tokens` content tokens (>= 1).
struct OutputEvent {
  TimePoint when;
  std::uint32_t tokens = 1;
};

// DependencyCall is one outbound call made while serving the request.
struct DependencyCall {
  std::string name;  // a bounded name ("embedding", "rerank"); the recorder maps unknown names to "other"
  TimePoint start;
  TimePoint end;
};

// RequestTimeline holds the moments of one request. Cheap to create (no allocation until the
// first output event or dependency call); about 16 bytes per output event.
class RequestTimeline {
 public:
  // RequestTimeline starts a timeline whose kArrival is `arrival`.
  explicit RequestTimeline(TimePoint arrival, Role role = Role::kServer) noexcept;

  // role returns the stage set this timeline produces.
  Role role() const noexcept { return role_; }

  // mark records `moment` at `when`. The first mark of a moment wins; later ones are ignored, so
  // a re-schedule after preemption keeps the first kScheduled. kArrival cannot be re-marked.
  void mark(Moment moment, TimePoint when) noexcept;

  // moment returns the recorded time of `moment`, or std::nullopt when it was never marked.
  // Inline: a request's summary and spans read moments a few dozen times.
  std::optional<TimePoint> moment(Moment moment) const noexcept {
    const auto index = static_cast<unsigned>(moment);
    if (index >= kMomentCount || (marked_ & (1U << index)) == 0) return std::nullopt;
    return moments_[index];
  }

  // add_dependency records one outbound call (allocates: a name copy and a vector slot). A call
  // cut short by the request's end should be added with end = the end time, or not at all.
  void add_dependency(std::string_view name, TimePoint start, TimePoint end);

  // add_output records an output event at `when` carrying `tokens` content tokens. An event with 0
  // tokens (a role-only chunk, an empty delta, a keep-alive) is counted in empty_events() and
  // otherwise ignored: it never counts as the first token. Events must come in time order; an
  // earlier one is kept and its gap is taken as 0. Amortized O(1); may allocate.
  void add_output(TimePoint when, std::uint32_t tokens);

  // reserve_outputs pre-allocates room for `events` output events (e.g. max_tokens).
  void reserve_outputs(std::size_t events);

  // set_prompt_tokens records the prompt length in tokens (0 = unknown).
  void set_prompt_tokens(std::uint32_t tokens) noexcept { prompt_tokens_ = tokens; }

  // set_output_tokens overrides the output token count summed from events (e.g. a gateway that
  // counts chunks but learns the real count from the final `usage`). TPOT uses the override;
  // 0 clears it (back to the sum of the events).
  void set_output_tokens(std::uint32_t tokens) noexcept { output_tokens_override_ = tokens; }

  // finish ends the timeline at `when` for `reason`. The first call wins.
  void finish(FinishReason reason, TimePoint when) noexcept;

  // finished reports whether finish() was called.
  bool finished() const noexcept { return finished_; }
  // finish_reason returns the reason given to finish() (kError when unfinished).
  FinishReason finish_reason() const noexcept { return reason_; }
  // end returns the time given to finish(), or the latest recorded time when unfinished.
  TimePoint end() const noexcept;

  // first_output/last_output return the first/last content event's time, if any.
  std::optional<TimePoint> first_output() const noexcept;
  std::optional<TimePoint> last_output() const noexcept;
  // outputs returns the content events in the order added (0-token events are not stored).
  std::span<const OutputEvent> outputs() const noexcept { return outputs_; }
  // dependencies returns the recorded dependency calls.
  std::span<const DependencyCall> dependencies() const noexcept { return dependencies_; }

  // prompt_tokens returns the prompt length given to set_prompt_tokens (0 = unknown).
  std::uint32_t prompt_tokens() const noexcept { return prompt_tokens_; }
  // output_tokens returns the override when set, else the sum of the events' tokens.
  std::uint32_t output_tokens() const noexcept;
  // empty_events counts 0-token output events (role-only or empty chunks).
  std::uint32_t empty_events() const noexcept { return empty_events_; }

  // in_flight_counted is set by TimelineRecorder::begin so record() knows to decrement the gauge.
  bool in_flight_counted() const noexcept { return in_flight_counted_; }
  void set_in_flight_counted(bool counted) noexcept { in_flight_counted_ = counted; }

 private:
  std::array<TimePoint, kMomentCount> moments_{};
  std::uint16_t marked_ = 0;  // bit i set when Moment i was marked
  Role role_;
  bool finished_ = false;
  bool in_flight_counted_ = false;
  FinishReason reason_ = FinishReason::kError;
  TimePoint end_{};
  std::uint32_t prompt_tokens_ = 0;
  std::uint32_t output_tokens_sum_ = 0;
  std::uint32_t output_tokens_override_ = 0;
  std::uint32_t empty_events_ = 0;
  std::vector<OutputEvent> outputs_;
  std::vector<DependencyCall> dependencies_;
};

}  // namespace inferscope::timeline
