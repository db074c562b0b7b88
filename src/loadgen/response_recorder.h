// File: response_recorder.h
// ResponseRecorder turns a response body, fed as it is read, into a RequestRecord's timings,
// token counts and error kind: SSE events for streamed responses, one JSON document otherwise.
// It is the network-free half of the client, so every accounting rule is unit-testable.
// Example: ResponseRecorder r(record, parser); r.on_body(bytes, now_ns); r.on_end(now_ns);
// Not thread-safe; one per request. Never throws; keeps references to `record` and `parser`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "loadgen/openai_event.h"
#include "loadgen/request_record.h"
#include "loadgen/sse_parser.h"

namespace inferscope::loadgen {

class ResponseRecorder {
 public:
  // ResponseRecorder fills `record` (its streaming flag and started_ns must be set) and parses
  // JSON with `parser`; both must outlive it.
  ResponseRecorder(RequestRecord& record, OpenAiEventParser& parser);

  // on_body consumes body bytes read at `now_ns`.
  void on_body(std::string_view bytes, std::int64_t now_ns);

  // on_end finishes the record at `now_ns` after the body ended cleanly: sets end_ns, the
  // token count and source, and kTruncatedStream/kMalformedStream when the body was incomplete,
  // kEmptyResponse when it held neither output nor a finish_reason. A stream error (a JSON
  // "error" member or llama.cpp's `error:` line) is kStreamError whatever follows it.
  void on_end(std::int64_t now_ns);

  // done reports whether a streamed response has sent [DONE] (later bytes are ignored).
  bool done() const { return done_; }

 private:
  void on_event(std::string_view data, std::int64_t t);
  void fail(ErrorKind kind);
  void set_input_tokens(std::uint64_t prompt_tokens);

  RequestRecord& record_;
  OpenAiEventParser& parser_;
  SseParser sse_;
  std::string body_;  // non-streamed bodies only
  std::uint64_t usage_tokens_ = 0;
  bool has_usage_ = false;
  bool finished_ = false;
  bool done_ = false;
  std::size_t content_bytes_ = 0;
};

}  // namespace inferscope::loadgen
