#include "loadgen/response_recorder.h"

#include <algorithm>

namespace inferscope::loadgen {

ResponseRecorder::ResponseRecorder(RequestRecord& record, OpenAiEventParser& parser)
    : record_(record), parser_(parser), sse_([this](std::string_view d, std::int64_t t) { on_event(d, t); }) {}

void ResponseRecorder::fail(ErrorKind kind) {
  if (record_.error == ErrorKind::kNone) record_.error = kind;
}

void ResponseRecorder::on_body(std::string_view bytes, std::int64_t now_ns) {
  if (!record_.streaming) {
    body_.append(bytes);
    return;
  }
  if (done_) return;
  sse_.feed(bytes, now_ns);
  if (sse_.error()) fail(ErrorKind::kMalformedStream);
  if (sse_.error_field_seen()) fail(ErrorKind::kStreamError);
}

void ResponseRecorder::on_event(std::string_view data, std::int64_t t) {
  ++record_.events;
  if (done_) return;
  if (data == "[DONE]") {
    done_ = true;
    return;
  }
  EventFields f = parser_.parse(data);
  if (!f.valid) {
    fail(ErrorKind::kMalformedStream);
    return;
  }
  if (f.is_error) fail(ErrorKind::kStreamError);
  if (f.has_choices && record_.first_event_ns == kNoTime) record_.first_event_ns = t;
  if (f.has_output) {
    if (record_.first_content_ns == kNoTime) record_.first_content_ns = t;
    record_.last_token_ns = t;
    ++record_.token_events;
    std::int64_t us = std::max<std::int64_t>(0, (t - record_.started_ns) / 1000);
    record_.token_event_us.push_back(static_cast<std::uint32_t>(std::min<std::int64_t>(us, UINT32_MAX)));
  }
  content_bytes_ += f.content_bytes;
  if (f.finished) finished_ = true;
  if (f.completion_tokens) {
    usage_tokens_ = *f.completion_tokens;
    has_usage_ = true;
  }
  if (f.prompt_tokens) set_input_tokens(*f.prompt_tokens);
}

void ResponseRecorder::set_input_tokens(std::uint64_t prompt_tokens) {
  record_.input_tokens = static_cast<std::uint32_t>(std::min<std::uint64_t>(prompt_tokens, UINT32_MAX));
  record_.input_token_source = TokenSource::kUsage;
}

void ResponseRecorder::on_end(std::int64_t now_ns) {
  record_.end_ns = now_ns;
  if (record_.streaming) {
    if (!done_ && !sse_.error()) sse_.finish();
    if (!done_ && !finished_) fail(ErrorKind::kTruncatedStream);
    // [DONE] after nothing at all (no output, no finish_reason) is a failure, not a fast success:
    // its end time must not enter TTFT or E2E statistics.
    if (!finished_ && record_.token_events == 0) fail(ErrorKind::kEmptyResponse);
  } else if (record_.error == ErrorKind::kNone || record_.error == ErrorKind::kHttpStatus) {
    EventFields f = parser_.parse(body_);
    if (record_.error == ErrorKind::kNone) {
      if (!f.valid) fail(ErrorKind::kMalformedStream);
      if (f.is_error) fail(ErrorKind::kStreamError);
      if (!f.has_output && !f.finished) fail(ErrorKind::kEmptyResponse);
    }
    if (f.completion_tokens) {
      usage_tokens_ = *f.completion_tokens;
      has_usage_ = true;
    }
    if (f.prompt_tokens) set_input_tokens(*f.prompt_tokens);
    content_bytes_ = f.content_bytes;
    if (f.has_output) {
      record_.first_content_ns = record_.last_token_ns = now_ns;
      record_.token_events = 1;
    }
  }
  if (has_usage_) {
    record_.output_tokens = static_cast<std::uint32_t>(usage_tokens_);
    record_.token_source = TokenSource::kUsage;
  } else if (record_.streaming && record_.token_events > 0) {
    record_.output_tokens = record_.token_events;
    record_.token_source = TokenSource::kCounted;
  } else if (content_bytes_ > 0) {
    record_.output_tokens = static_cast<std::uint32_t>((content_bytes_ + 3) / 4);
    record_.token_source = TokenSource::kEstimated;
  }
  body_.clear();
  body_.shrink_to_fit();
}

}  // namespace inferscope::loadgen
