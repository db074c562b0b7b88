// File: completion_scan.h
// scan_completion reads the few fields the gateway needs from an OpenAI completion JSON (one
// streamed chunk, or a whole non-streamed body) in one pass over its bytes, building no document
// and allocating nothing: whether it is a JSON object at all, a top-level "error", the usage token
// counts, whether "choices" is empty, whether a choice carries content, the finish_reason, and
// llama.cpp's "timings".
// It accepts exactly the documents simdjson's DOM parser accepts (RFC 8259 grammar, UTF-8 checked,
// numbers in range, nesting depth <= 1024) and, like its `object[key]`, takes the first of
// duplicate keys; fuzz/completion_scan_fuzz.cpp checks both against simdjson.
// Example: const CompletionScan s = scan_completion(data, CompletionShape::kChunk); if (!s.valid) ...
// Pure functions, thread-safe; never throw. A result's string_view points into the input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace inferscope::gateway {

// CompletionShape says where a choice keeps its content: a streamed chunk's "delta" (content,
// reasoning_content, reasoning, tool_calls) or a whole response's "message" (content, tool_calls).
// A non-empty "text" (the legacy completions route) counts for both.
enum class CompletionShape : std::uint8_t { kChunk, kWhole };

// EngineTimings is llama.cpp's "timings" object (its final stream event, or a whole response):
// prompt processing and token generation in milliseconds, with their token counts.
struct EngineTimings {
  std::optional<double> prompt_ms;      // timings.prompt_ms, when a number
  std::optional<double> predicted_ms;   // timings.predicted_ms, likewise
  std::optional<std::uint64_t> prompt_n;     // timings.prompt_n, when a non-negative integer
  std::optional<std::uint64_t> predicted_n;  // timings.predicted_n, likewise
};

// CompletionScan is what scan_completion found. Every field but `valid` is meaningful only when
// `valid` is true.
struct CompletionScan {
  bool valid = false;     // a well-formed JSON document whose root is an object
  bool error = false;     // the root has an "error" member that is not null
  bool usage = false;     // the root has a "usage" object
  std::optional<std::uint64_t> prompt_tokens;      // usage.prompt_tokens, when a non-negative integer
  std::optional<std::uint64_t> completion_tokens;  // usage.completion_tokens, likewise
  bool choices = false;   // the root has a "choices" array ...
  bool choices_empty = false;  // ... and it is []
  bool content = false;   // some choice carries content
  bool finish_reason_seen = false;  // some choice's finish_reason is a string ...
  std::string_view finish_reason;   // ... the last such, as written (escapes not decoded)
  bool finish_reason_escaped = false;  // finish_reason contains a backslash escape
  bool timings = false;   // the root has a "timings" object (llama.cpp) ...
  EngineTimings engine_timings;  // ... and these of its members
};

// scan_completion scans `json`. Cost: one pass over the bytes, no allocation.
CompletionScan scan_completion(std::string_view json, CompletionShape shape);

// assign_json_string sets `out` to the decoded text of `raw`, the inside of a JSON string that
// scan_completion accepted (escapes and surrogate pairs decoded to UTF-8).
void assign_json_string(std::string_view raw, bool escaped, std::string& out);

}  // namespace inferscope::gateway
