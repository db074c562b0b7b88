// File: sse_parser.h
// SseParser splits a text/event-stream body, fed in arbitrary pieces as they come off the socket,
// into events, and stamps each event with the time of the read that delivered its first byte (so
// several events arriving in one read share a timestamp, as they did on the wire).
// Example: SseParser p([&](std::string_view data, std::int64_t t) {...}); p.feed(bytes, now_ns);
// Not thread-safe; one per response. Never allocates per event once warmed up (buffers are reused)
// and never throws on any input: oversized events are reported through error().
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace inferscope::loadgen {

// SseParser implements the WHATWG event-stream line rules: LF, CR or CRLF line ends (a CRLF split
// across two feeds counts once), "data:" lines joined by '\n', ':' comments and other fields
// ignored, an event dispatched on a blank line only if it carried data. One non-standard field is
// noted: llama.cpp reports a failure after it sent 200 and its headers as an `error: {...}` line
// (then `data: [DONE]`), which WHATWG parsing would silently drop.
class SseParser {
 public:
  // EventHandler receives the event's data (valid only during the call) and the feed time of its
  // first byte.
  using EventHandler = std::function<void(std::string_view data, std::int64_t first_byte_time)>;

  // SseParser keeps `on_event` for its lifetime. `max_event_bytes` bounds one event's data.
  explicit SseParser(EventHandler on_event, std::size_t max_event_bytes = 16u << 20);

  // feed parses `bytes` read at `time` (any unit; passed through). Calls on_event per complete
  // event. After an error() further input is ignored.
  void feed(std::string_view bytes, std::int64_t time);

  // finish dispatches a trailing event that had data but no closing blank line (the stream was
  // cut) and reports whether there was one.
  bool finish();

  // error is true once an event exceeded max_event_bytes (a malformed or hostile stream).
  bool error() const { return error_; }

  // error_field_seen is true once an `error:` field line arrived (llama.cpp's mid-stream error).
  bool error_field_seen() const { return error_field_seen_; }

 private:
  void process_line(std::string_view line);

  EventHandler on_event_;
  std::size_t max_event_bytes_;
  std::string line_;        // the current, unterminated line
  std::string data_;        // data of the current event
  bool has_data_ = false;   // a data: field was seen (data may still be empty)
  bool event_started_ = false;
  bool last_was_cr_ = false;
  bool error_ = false;
  bool error_field_seen_ = false;
  std::int64_t event_time_ = 0;
  std::int64_t feed_time_ = 0;
};

}  // namespace inferscope::loadgen
