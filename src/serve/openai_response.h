// File: openai_response.h
// ResponseFormatter writes the OpenAI response shapes for one request: SSE chunks (role chunk,
// content chunks, finish chunk, usage chunk, [DONE]) and the non-streaming JSON body. Example:
//   ResponseFormatter f(Endpoint::kChat, "chatcmpl-1", 1700000000, "m"); f.append_content_chunk("Hi", out);
// Thread-compatible (const methods only after construction). Content chunks are the hot path:
// they append to a caller-owned buffer and allocate nothing once that buffer has grown.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "serve/openai_request.h"

namespace inferscope::serve {

// Usage is the token accounting OpenAI reports.
struct Usage {
  std::uint64_t prompt_tokens = 0;
  std::uint64_t completion_tokens = 0;
};

// append_json_escaped appends `text` as the inside of a JSON string (quotes not added).
void append_json_escaped(std::string_view text, std::string& out);

// make_response_id returns "chatcmpl-<32 hex>" or "cmpl-<32 hex>" (random per call, thread-safe).
std::string make_response_id(Endpoint endpoint);

class ResponseFormatter {
 public:
  // ResponseFormatter precomputes the constant head and tail of every chunk for this request.
  ResponseFormatter(Endpoint endpoint, std::string id, std::int64_t created, std::string_view model);

  // append_role_chunk writes the chat role-only first event ({"role":"assistant","content":""});
  // completions have none, so it writes nothing for them.
  void append_role_chunk(std::string& out) const;
  // append_content_chunk writes one content event carrying `text`.
  void append_content_chunk(std::string_view text, std::string& out) const;
  // append_finish_chunk writes the final event: empty delta/text and finish_reason.
  void append_finish_chunk(std::string_view finish_reason, std::string& out) const;
  // append_last_content_chunk writes one content event carrying `text` and finish_reason: vLLM's
  // shape, where the last content chunk ends the choice.
  void append_last_content_chunk(std::string_view text, std::string_view finish_reason, std::string& out) const;
  // append_usage_chunk writes the stream_options.include_usage event ("choices":[] and usage).
  void append_usage_chunk(const Usage& usage, std::string& out) const;
  // append_error_event writes `data: {"error":{...}}` for a failure after the headers were sent.
  static void append_error_event(std::string_view message, std::string& out);
  // append_done writes the terminating `data: [DONE]` event.
  static void append_done(std::string& out);
  // full_body renders the non-streaming response (chat.completion or text_completion).
  std::string full_body(std::string_view text, std::string_view finish_reason, const Usage& usage) const;

 private:
  void append_head(std::string& out) const;

  Endpoint endpoint_;
  std::string id_;
  std::int64_t created_;
  std::string model_;
  std::string head_;          // `data: {"id":...,"model":...,"choices":[` for chunks
  std::string content_head_;  // head_ + `{"index":0,"delta":{"content":"` (or "text":")
  std::string content_tail_;  // `"},"logprobs":null,"finish_reason":null}]}\n\n`
};

}  // namespace inferscope::serve
