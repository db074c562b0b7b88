// File: sse_relay.h
// SseRelay sits between an upstream's text/event-stream body and the client: it passes every
// event's bytes through unchanged and in order as soon as the event is complete, drops the usage
// chunk the gateway itself asked for (stream_options.include_usage), and reads each event on the
// way: content events (TTFT, ITL), usage, finish reasons, [DONE], error events, malformed data.
// Example: SseRelay r(strip_usage); std::string scratch; client.write(r.feed(bytes, now, scratch)); ...
// Not thread-safe; one per response. Never throws on any input (fuzzed: fuzz/gateway_sse_fuzz.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/completion_scan.h"

namespace inferscope::gateway {

// SseRelay splits on blank lines (LF, CRLF or CR line ends) and scans each `data:` payload with
// scan_completion (no JSON document is built).
class SseRelay {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // strip_usage: drop a usage-only chunk (`"choices": []` with `usage`), which the client did not ask for.
  // max_event_bytes bounds one event (a longer one makes the stream malformed).
  explicit SseRelay(bool strip_usage, std::size_t max_event_bytes = 4u << 20);

  // feed consumes `bytes` read at `now` and returns the bytes to forward (whole events only; a
  // partial trailing event waits for its end). Usually that is a prefix of `bytes` itself: nothing
  // is copied unless an event is dropped or one was split across reads, and then the result
  // lives in `scratch` (overwritten; valid until the next feed). Content events are reported to
  // the content_times() list. Cost: one pass over the bytes plus scan_completion of each data
  // payload; no allocation once `scratch` and the event-time list have grown.
  std::string_view feed(std::string_view bytes, TimePoint now, std::string& scratch);

  // content_times returns the time of each content-bearing event (one per event).
  const std::vector<TimePoint>& content_times() const { return content_times_; }
  std::uint32_t content_events() const { return static_cast<std::uint32_t>(content_times_.size()); }
  // usage returns the upstream's token counts when a usage object arrived.
  std::optional<std::uint32_t> prompt_tokens() const { return prompt_tokens_; }
  std::optional<std::uint32_t> completion_tokens() const { return completion_tokens_; }
  // finish_reason returns the last finish_reason seen ("stop", "length", ...), or empty.
  const std::string& finish_reason() const { return finish_reason_; }
  bool done_seen() const { return done_seen_; }
  // error_event_seen: the upstream sent an error event itself (`error:` field or {"error":...}).
  bool error_event_seen() const { return error_event_seen_; }
  // malformed: an event's data was neither JSON nor [DONE], or an event was too large.
  bool malformed() const { return malformed_; }
  // pending_bytes: bytes of an unfinished event held back (non-zero at the end = truncated).
  std::size_t pending_bytes() const { return pending_.size(); }
  // stripped_usage: the gateway's own usage chunk was dropped.
  bool stripped_usage() const { return stripped_usage_; }
  // engine_timings: llama.cpp's "timings" of the last event that carried them (its final one),
  // and when that event was read.
  const std::optional<EngineTimings>& engine_timings() const { return engine_timings_; }
  TimePoint engine_timings_read() const { return engine_timings_read_; }

 private:
  // Room for this many content events before the time list grows (one allocation per response).
  static constexpr std::size_t kExpectedContentEvents = 256;

  // relay_events relays the complete events at the start of `bytes`; returns the bytes used.
  // With in_place set the kept events are left where they are (a prefix of `bytes`) until one is
  // dropped: then those before it are copied to `out`, in_place is cleared, and later ones follow.
  std::size_t relay_events(std::string_view bytes, TimePoint now, std::string& out, bool& in_place);
  // inspect reads one event's payload; returns false when the event must not be forwarded.
  bool inspect(std::string_view event, TimePoint now);
  bool inspect_json(std::string_view data, TimePoint now);

  bool strip_usage_;
  std::size_t max_event_bytes_;
  std::string pending_;     // an unfinished event carried to the next read
  std::string data_lines_;  // the joined data lines of an event that has several
  std::vector<TimePoint> content_times_;
  std::optional<std::uint32_t> prompt_tokens_;
  std::optional<std::uint32_t> completion_tokens_;
  std::string finish_reason_;
  std::optional<EngineTimings> engine_timings_;
  TimePoint engine_timings_read_{};
  bool done_seen_ = false;
  bool error_event_seen_ = false;
  bool malformed_ = false;
  bool stripped_usage_ = false;
};

// WholeResponse is what read_whole_response found in a non-streamed completion body.
struct WholeResponse {
  bool parsed = false;
  bool has_content = false;
  std::optional<std::uint32_t> prompt_tokens;
  std::optional<std::uint32_t> completion_tokens;
  std::string finish_reason;
  std::optional<EngineTimings> engine_timings;  // llama.cpp's "timings"
};

// read_whole_response reads usage and finish reasons from a whole JSON completion body.
// Cost: one scan_completion pass; allocates only for a finish reason longer than SSO.
WholeResponse read_whole_response(std::string_view body);

}  // namespace inferscope::gateway
