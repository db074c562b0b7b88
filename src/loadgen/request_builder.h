// File: request_builder.h
// RequestBuilder serializes a RequestSpec into the exact HTTP/1.1 bytes sent on the wire (request
// line, headers, JSON body for the chat or completions endpoint), so the hot path writes one
// prebuilt buffer. The Authorization header is built here and nowhere else is the key kept.
// Example: RequestBuilder b(options); std::string wire = b.build(spec);
// build() is const and thread-safe. Never logs; never puts the API key anywhere but the wire.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loadgen/base_url.h"
#include "loadgen/workload.h"

namespace inferscope::loadgen {

// RequestOptions are the parts of every request that do not vary per request.
struct RequestOptions {
  std::string model;
  std::string endpoint = "/v1/chat/completions";  // appended to the target's base path
  bool chat = true;                  // messages (chat) or prompt (completions) body
  bool stream = true;                // stream (SSE) or one JSON body
  bool include_usage = true;         // ask for stream_options.include_usage when streaming
  bool ignore_eos = false;           // ask for exactly max_tokens (vLLM / inferscope serve)
  std::optional<double> temperature;
  std::vector<std::pair<std::string, std::string>> headers;  // extra --header values
  std::string api_key;               // sent as "Authorization: Bearer"; empty = none
  // lora_names: LoRA adapters to spread the requests over (bench --lora-adapters): each request
  // names the next in turn as its `model` instead of `model`. Empty = none.
  std::vector<std::string> lora_names;
};

class RequestBuilder {
 public:
  // RequestBuilder precomputes the header block for `target` and `options`.
  RequestBuilder(const Target& target, RequestOptions options);
  // build returns the full request for `spec`. Cost: one allocation sized to the body.
  std::string build(const RequestSpec& spec) const;
  bool streaming() const { return options_.stream; }

 private:
  RequestOptions options_;
  std::string head_;  // "POST <path> HTTP/1.1\r\nHost: ...\r\n...Content-Length: "
  mutable std::atomic<std::uint64_t> lora_next_{0};  // the next adapter of lora_names, in turn
};

// append_json_string appends `s` as a quoted JSON string (control characters escaped).
void append_json_string(std::string& out, std::string_view s);

}  // namespace inferscope::loadgen
