// File: client_request.h
// inspect_client_request reads what the gateway needs from a client's OpenAI request body
// (model, stream, stream_options.include_usage) without changing it, and with_include_usage
// returns the body with stream_options.include_usage set, for exact token counts upstream.
// Example: auto r = inspect_client_request(body); if (r.needs_usage) body = with_include_usage(body);
// Pure functions; thread-safe. Never throws on any input (fuzzed: fuzz/gateway_request_fuzz.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace inferscope::gateway {

// ClientRequestInfo is what inspect_client_request found; error is set for a body the gateway
// refuses (not a JSON object, or a field of the wrong type) and names the field.
struct ClientRequestInfo {
  std::string model;          // empty when absent
  bool stream = false;
  bool include_usage = false;  // the client asked for the usage chunk itself
  std::optional<std::string> error;
  std::string error_param;
  // needs_usage: a streaming request without include_usage, which the gateway adds upstream.
  bool needs_usage() const { return stream && !include_usage; }
};

// inspect_client_request parses `body` (UTF-8 JSON). Cost: one simdjson DOM parse.
ClientRequestInfo inspect_client_request(std::string_view body);

// with_include_usage returns `body` with "stream_options": {"include_usage": true} (other
// stream_options keys kept). `body` must have passed inspect_client_request.
std::string with_include_usage(std::string_view body);

}  // namespace inferscope::gateway
