// File: openai_event.h
// OpenAiEventParser extracts what latency accounting needs from one OpenAI-style JSON payload (a
// streamed chunk or a whole non-streamed response): whether it carries choices, output (content,
// reasoning or tool calls), a finish reason, usage token counts, or an error object.
// Example: OpenAiEventParser p; EventFields f = p.parse(R"({"choices":[...]})");
// Not thread-safe (reuses simdjson buffers); one per connection or per thread. Never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <simdjson.h>

namespace inferscope::loadgen {

// EventFields is the latency-relevant summary of one payload.
struct EventFields {
  bool valid = false;           // parsed as a JSON object
  bool has_choices = false;     // a non-empty "choices" array (vLLM's TTFT anchor)
  bool has_content = false;     // non-empty delta.content / text / message.content
  bool has_output = false;      // content, reasoning or tool calls (AIPerf's TTFT anchor)
  bool finished = false;        // a non-null finish_reason
  bool is_error = false;        // a top-level "error" member
  std::size_t content_bytes = 0;  // bytes of content + reasoning text (for estimates without usage)
  std::optional<std::uint64_t> completion_tokens;  // usage.completion_tokens
  std::optional<std::uint64_t> prompt_tokens;      // usage.prompt_tokens
};

// OpenAiEventParser parses payloads with simdjson on-demand, copying each into a padded scratch
// buffer (payloads are small; the copy is cheaper than a padded_string allocation).
class OpenAiEventParser {
 public:
  // parse returns the fields of `json`; valid=false on anything that is not a JSON object.
  // Cost: one copy of `json` plus one pass over it.
  EventFields parse(std::string_view json);

 private:
  simdjson::ondemand::parser parser_;
  std::string scratch_;
};

}  // namespace inferscope::loadgen
