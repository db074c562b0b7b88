// File: sse_relay.cpp
// Event boundaries are found on the raw bytes (so what is forwarded is exactly what arrived);
// `data:` payloads are read by scan_completion, in place: no copy of an event that arrived whole,
// no allocation per event once the buffers have grown.
#include "gateway/sse_relay.h"

#include "gateway/completion_scan.h"

#include <cstring>

namespace inferscope::gateway {

namespace {

// line_end returns the index of the first line end ('\r' or '\n') in `s` at or after `i`, or
// s.size(). Two memchr calls: std::string_view::find_first_of("\r\n") calls memchr per byte.
std::size_t line_end(std::string_view s, std::size_t i) {
  const char* begin = s.data() + i;
  const std::size_t n = s.size() - i;
  const auto* lf = static_cast<const char*>(std::memchr(begin, '\n', n));
  const std::size_t before_lf = lf != nullptr ? static_cast<std::size_t>(lf - begin) : n;
  const auto* cr = static_cast<const char*>(std::memchr(begin, '\r', before_lf));
  return i + (cr != nullptr ? static_cast<std::size_t>(cr - begin) : before_lf);
}

// event_end finds the end of the first complete event in `s` (the index after its blank line),
// or npos. A blank line is two consecutive line ends of any kind (LF, CRLF, CR); a line end as
// the very first byte does not make one.
std::size_t event_end(std::string_view s) {
  std::size_t i = 0;  // the start of the current line
  for (;;) {
    const std::size_t eol = line_end(s, i);
    if (eol == s.size()) return std::string_view::npos;
    std::size_t next = eol + 1;
    if (s[eol] == '\r') {
      if (next >= s.size()) return std::string_view::npos;  // CR at the end: maybe CRLF, wait
      if (s[next] == '\n') ++next;
    }
    if (eol == i && eol != 0) return next;
    i = next;
  }
}

}  // namespace

SseRelay::SseRelay(bool strip_usage, std::size_t max_event_bytes)
    : strip_usage_(strip_usage), max_event_bytes_(max_event_bytes) {}

std::string_view SseRelay::feed(std::string_view bytes, TimePoint now, std::string& scratch) {
  scratch.clear();
  if (malformed_) return {};  // nothing after a malformed event is forwarded
  std::string_view forward;
  if (pending_.empty()) {
    // The usual case: the read starts at an event boundary, so events are read and forwarded in
    // place and only an unfinished last one is copied.
    bool in_place = true;
    const std::size_t used = relay_events(bytes, now, scratch, in_place);
    forward = in_place ? bytes.substr(0, used) : std::string_view(scratch);
    pending_.assign(bytes.substr(used));
  } else {
    pending_.append(bytes);
    bool in_place = false;  // pending_ changes below: what is forwarded is copied out first
    pending_.erase(0, relay_events(pending_, now, scratch, in_place));
    forward = scratch;
  }
  if (pending_.size() > max_event_bytes_) malformed_ = true;
  return forward;
}

std::size_t SseRelay::relay_events(std::string_view bytes, TimePoint now, std::string& out, bool& in_place) {
  std::size_t start = 0;
  while (!malformed_) {  // after a malformed event the caller ends the stream with an error event
    const std::string_view rest = bytes.substr(start);
    const std::size_t end = event_end(rest);
    if (end == std::string_view::npos) break;
    const std::string_view event = rest.substr(0, end);
    if (inspect(event, now)) {
      if (!in_place) out.append(event);
    } else if (in_place) {
      out.assign(bytes.substr(0, start));
      in_place = false;
    }
    start += end;
  }
  return start;
}

bool SseRelay::inspect(std::string_view event, TimePoint now) {
  std::string_view data;  // one data line is read in place; several are joined in data_lines_
  int data_lines = 0;
  std::size_t i = 0;
  while (i < event.size()) {
    const std::size_t eol = line_end(event, i);
    std::string_view line = event.substr(i, eol - i);
    i = eol + 1;
    if (eol < event.size() && event[eol] == '\r' && i < event.size() && event[i] == '\n') ++i;
    if (line.empty() || line.front() == ':') continue;
    const std::size_t colon = line.find(':');
    std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "data") {
      if (data_lines == 1) data_lines_.assign(data);
      if (data_lines >= 1) {
        data_lines_.push_back('\n');
        data_lines_.append(value);
        data = data_lines_;
      } else {
        data = value;
      }
      ++data_lines;
    } else if (field == "error") {
      error_event_seen_ = true;  // llama.cpp reports failures after its 200 this way
    }
  }
  if (data_lines == 0) return true;
  if (data == "[DONE]") {
    done_seen_ = true;
    return true;
  }
  return inspect_json(data, now);
}

bool SseRelay::inspect_json(std::string_view data, TimePoint now) {
  const CompletionScan scan = scan_completion(data, CompletionShape::kChunk);
  if (!scan.valid) {
    malformed_ = true;
    return false;  // the client gets the gateway's error event instead
  }
  if (scan.error) error_event_seen_ = true;
  if (scan.prompt_tokens) prompt_tokens_ = static_cast<std::uint32_t>(*scan.prompt_tokens);
  if (scan.completion_tokens) completion_tokens_ = static_cast<std::uint32_t>(*scan.completion_tokens);
  if (scan.timings) {
    engine_timings_ = scan.engine_timings;
    engine_timings_read_ = now;
  }
  if (!scan.choices) return true;
  if (scan.choices_empty) {
    if (!scan.usage || !strip_usage_) return true;
    stripped_usage_ = true;
    return false;
  }
  if (scan.finish_reason_seen) assign_json_string(scan.finish_reason, scan.finish_reason_escaped, finish_reason_);
  if (scan.content) {
    // Sized at the first content event, not at construction: the gateway makes a relay for
    // every response, whole bodies included.
    if (content_times_.empty()) content_times_.reserve(kExpectedContentEvents);
    content_times_.push_back(now);
  }
  return true;
}

WholeResponse read_whole_response(std::string_view body) {
  WholeResponse r;
  const CompletionScan scan = scan_completion(body, CompletionShape::kWhole);
  if (!scan.valid) return r;
  r.parsed = true;
  if (scan.prompt_tokens) r.prompt_tokens = static_cast<std::uint32_t>(*scan.prompt_tokens);
  if (scan.completion_tokens) r.completion_tokens = static_cast<std::uint32_t>(*scan.completion_tokens);
  r.has_content = scan.content;
  if (scan.timings) r.engine_timings = scan.engine_timings;
  if (scan.finish_reason_seen) assign_json_string(scan.finish_reason, scan.finish_reason_escaped, r.finish_reason);
  return r;
}

}  // namespace inferscope::gateway
