#include "loadgen/sse_parser.h"

#include <cstring>

namespace inferscope::loadgen {

SseParser::SseParser(EventHandler on_event, std::size_t max_event_bytes)
    : on_event_(std::move(on_event)), max_event_bytes_(max_event_bytes) {}

void SseParser::feed(std::string_view bytes, std::int64_t time) {
  feed_time_ = time;
  const char* p = bytes.data();
  const char* end = p + bytes.size();
  while (p < end && !error_) {
    if (last_was_cr_) {
      last_was_cr_ = false;
      if (*p == '\n') {  // second half of a CRLF whose CR ended the previous line
        ++p;
        continue;
      }
    }
    if (!event_started_) {
      event_started_ = true;
      event_time_ = time;
    }
    // Find the next line end (LF or CR) in one pass; most lines end in LF.
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    const char* cr = static_cast<const char*>(std::memchr(p, '\r', static_cast<std::size_t>((nl ? nl : end) - p)));
    const char* stop = cr ? cr : nl;
    if (stop == nullptr) {
      if (line_.size() + static_cast<std::size_t>(end - p) > max_event_bytes_) {
        error_ = true;
        return;
      }
      line_.append(p, end);
      return;
    }
    if (line_.empty()) {
      process_line(std::string_view(p, static_cast<std::size_t>(stop - p)));
    } else {
      line_.append(p, stop);
      process_line(line_);
      line_.clear();
    }
    if (*stop == '\r') last_was_cr_ = true;
    p = stop + 1;
  }
}

void SseParser::process_line(std::string_view line) {
  if (line.empty()) {  // blank line: dispatch
    if (has_data_) on_event_(data_, event_time_);
    data_.clear();
    has_data_ = false;
    event_started_ = false;
    return;
  }
  if (line.front() == ':') {  // comment / keep-alive ping
    if (!has_data_) event_started_ = false;
    return;
  }
  std::size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "error") error_field_seen_ = true;
  if (field != "data") return;  // event:, id:, retry: do not affect latency accounting
  if (data_.size() + value.size() + 1 > max_event_bytes_) {
    error_ = true;
    return;
  }
  if (has_data_) data_.push_back('\n');
  data_.append(value);
  has_data_ = true;
}

bool SseParser::finish() {
  if (error_) return false;
  if (!line_.empty()) {
    process_line(line_);
    line_.clear();
  }
  if (!has_data_) return false;
  on_event_(data_, event_time_);
  data_.clear();
  has_data_ = false;
  event_started_ = false;
  return true;
}

}  // namespace inferscope::loadgen
