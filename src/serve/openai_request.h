// File: openai_request.h
// Parses and validates the JSON body of POST /v1/chat/completions and /v1/completions (simdjson,
// the hot path) into a CompletionRequest. Example:
//   CompletionRequest req; if (auto err = parse_completion_request(Endpoint::kChat, body, req)) ...
// Thread-safe (each thread reuses its own simdjson parser). Never throws, never logs the prompt.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/api_error.h"

namespace inferscope::serve {

// Endpoint names the two OpenAI generation routes.
enum class Endpoint { kChat, kCompletions };

// ChatMessage is one entry of "messages"; array content parts are joined into content.
struct ChatMessage {
  std::string role;
  std::string content;
};

// CompletionRequest is a validated request. Unset optionals mean "not given".
struct CompletionRequest {
  Endpoint endpoint = Endpoint::kChat;
  std::string model;                          // empty: not given (server picks its first name)
  std::vector<ChatMessage> messages;          // kChat
  std::string prompt;                         // kCompletions, text form
  std::vector<std::uint32_t> prompt_token_ids;  // kCompletions, token-id form (used as is)
  std::optional<std::uint32_t> max_tokens;    // max_tokens or max_completion_tokens
  std::uint32_t min_tokens = 0;               // vLLM extra field
  bool ignore_eos = false;                    // vLLM extra field
  bool stream = false;
  bool include_usage = false;                 // stream_options.include_usage
  std::optional<std::uint64_t> seed;
};

// kMaxTokensLimit bounds max_tokens so arithmetic on it never overflows (context checks come later).
inline constexpr std::uint64_t kMaxTokensLimit = 1u << 24;

// parse_completion_request fills `out` from `body` and returns nothing, or the 400 ApiError naming
// the field at fault (invalid JSON, wrong types, missing messages/prompt, n != 1, stream_options
// without stream). Unknown fields are ignored, as vLLM does. Cost: one simdjson parse plus copies
// of the strings kept.
std::optional<net::ApiError> parse_completion_request(Endpoint endpoint, std::string_view body,
                                                 CompletionRequest& out);

}  // namespace inferscope::serve
