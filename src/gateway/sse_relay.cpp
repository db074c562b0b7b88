// File: sse_relay.cpp
// Event boundaries are found on the raw bytes (so what is forwarded is exactly what arrived);
// only `data:` payloads are parsed, with simdjson.
#include "gateway/sse_relay.h"

#include <simdjson.h>

namespace inferscope::gateway {

namespace {

simdjson::dom::parser& parser() {
  thread_local simdjson::dom::parser p;
  return p;
}

// event_end finds the end of the first complete event in `s` (the index after its blank line),
// or npos. A blank line is two consecutive line ends of any kind (LF, CRLF, CR).
std::size_t event_end(std::string_view s) {
  std::size_t i = 0;
  bool line_start = true;  // at the start of a line (previous char ended a line)
  bool first = true;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\n' || c == '\r') {
      std::size_t next = i + 1;
      if (c == '\r') {
        if (next >= s.size()) return std::string_view::npos;  // CR at the end: maybe CRLF, wait
        if (s[next] == '\n') ++next;
      }
      if (line_start && !first) return next;
      line_start = true;
      first = false;
      i = next;
      continue;
    }
    line_start = false;
    first = false;
    ++i;
  }
  return std::string_view::npos;
}

bool has_text(const simdjson::dom::element& object, const char* key) {
  std::string_view text;
  return object[key].get_string().get(text) == simdjson::SUCCESS && !text.empty();
}

bool non_empty_array(const simdjson::dom::element& object, const char* key) {
  simdjson::dom::array array;
  return object[key].get_array().get(array) == simdjson::SUCCESS && array.size() > 0;
}

}  // namespace

void SseRelay::feed(std::string_view bytes, TimePoint now, std::string& out) {
  if (malformed_) return;  // nothing after a malformed event is forwarded
  pending_.append(bytes);
  std::size_t start = 0;
  for (;;) {
    const std::string_view rest = std::string_view(pending_).substr(start);
    const std::size_t end = event_end(rest);
    if (end == std::string_view::npos) break;
    const std::string_view event = rest.substr(0, end);
    if (inspect(event, now)) out.append(event);
    start += end;
    if (malformed_) break;  // the caller ends the stream with an error event
  }
  pending_.erase(0, start);
  if (pending_.size() > max_event_bytes_) malformed_ = true;
}

bool SseRelay::inspect(std::string_view event, TimePoint now) {
  std::string data;
  bool has_data = false;
  std::size_t i = 0;
  while (i < event.size()) {
    std::size_t eol = event.find_first_of("\r\n", i);
    if (eol == std::string_view::npos) eol = event.size();
    std::string_view line = event.substr(i, eol - i);
    i = eol + 1;
    if (eol < event.size() && event[eol] == '\r' && i < event.size() && event[i] == '\n') ++i;
    if (line.empty() || line.front() == ':') continue;
    const std::size_t colon = line.find(':');
    std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "data") {
      if (has_data) data.push_back('\n');
      data.append(value);
      has_data = true;
    } else if (field == "error") {
      error_event_seen_ = true;  // llama.cpp reports failures after its 200 this way
    }
  }
  if (!has_data) return true;
  if (data == "[DONE]") {
    done_seen_ = true;
    return true;
  }
  bool forward = true;
  inspect_json(data, now, forward);
  return forward;
}

void SseRelay::inspect_json(std::string_view data, TimePoint now, bool& forward) {
  simdjson::padded_string padded(data);
  simdjson::dom::element root;
  if (parser().parse(padded).get(root) != simdjson::SUCCESS || !root.is_object()) {
    malformed_ = true;
    forward = false;  // the client gets the gateway's error event instead
    return;
  }
  simdjson::dom::element error;
  if (root["error"].get(error) == simdjson::SUCCESS && !error.is_null()) error_event_seen_ = true;
  simdjson::dom::element usage;
  const bool has_usage = root["usage"].get(usage) == simdjson::SUCCESS && usage.is_object();
  if (has_usage) {
    std::uint64_t n = 0;
    if (usage["prompt_tokens"].get_uint64().get(n) == simdjson::SUCCESS) prompt_tokens_ = static_cast<std::uint32_t>(n);
    if (usage["completion_tokens"].get_uint64().get(n) == simdjson::SUCCESS) {
      completion_tokens_ = static_cast<std::uint32_t>(n);
    }
  }
  simdjson::dom::array choices;
  if (root["choices"].get_array().get(choices) != simdjson::SUCCESS) return;
  if (choices.size() == 0) {
    if (has_usage && strip_usage_) {
      forward = false;
      stripped_usage_ = true;
    }
    return;
  }
  bool content = false;
  for (simdjson::dom::element choice : choices) {
    simdjson::dom::element delta;
    if (choice["delta"].get(delta) == simdjson::SUCCESS && delta.is_object()) {
      content = content || has_text(delta, "content") || has_text(delta, "reasoning_content") ||
                has_text(delta, "reasoning") || non_empty_array(delta, "tool_calls");
    }
    content = content || has_text(choice, "text");
    std::string_view reason;
    if (choice["finish_reason"].get_string().get(reason) == simdjson::SUCCESS) finish_reason_.assign(reason);
  }
  if (content) content_times_.push_back(now);
}

WholeResponse read_whole_response(std::string_view body) {
  WholeResponse r;
  simdjson::padded_string padded(body);
  simdjson::dom::element root;
  if (parser().parse(padded).get(root) != simdjson::SUCCESS || !root.is_object()) return r;
  r.parsed = true;
  simdjson::dom::element usage;
  if (root["usage"].get(usage) == simdjson::SUCCESS && usage.is_object()) {
    std::uint64_t n = 0;
    if (usage["prompt_tokens"].get_uint64().get(n) == simdjson::SUCCESS) r.prompt_tokens = static_cast<std::uint32_t>(n);
    if (usage["completion_tokens"].get_uint64().get(n) == simdjson::SUCCESS) {
      r.completion_tokens = static_cast<std::uint32_t>(n);
    }
  }
  simdjson::dom::array choices;
  if (root["choices"].get_array().get(choices) != simdjson::SUCCESS) return r;
  for (simdjson::dom::element choice : choices) {
    simdjson::dom::element message;
    if (choice["message"].get(message) == simdjson::SUCCESS && message.is_object()) {
      r.has_content = r.has_content || has_text(message, "content") || non_empty_array(message, "tool_calls");
    }
    r.has_content = r.has_content || has_text(choice, "text");
    std::string_view reason;
    if (choice["finish_reason"].get_string().get(reason) == simdjson::SUCCESS) r.finish_reason.assign(reason);
  }
  return r;
}

}  // namespace inferscope::gateway
