// File: api_error.h
// ApiError is an OpenAI-format error answer: an HTTP status plus the body
// {"error":{"message","type","param","code"}} that OpenAI clients parse. Example:
//   ApiError e = ApiError::bad_request("'max_tokens' must be an integer", "max_tokens");
// Shared by every HTTP API of inferscope (serve, gateway, up). Value type, thread-compatible.
// It never carries prompt text (messages name fields, not values).
#pragma once

#include <optional>
#include <string>

namespace inferscope::net {

// ApiError holds one error answer; empty param/code are printed as JSON null.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;               // the offending field, or empty
  std::string code;                // e.g. "context_length_exceeded", or empty
  std::optional<int> retry_after;  // seconds, sent as a Retry-After header when set

  // bad_request builds a 400 invalid_request_error about one field.
  static ApiError bad_request(std::string message, std::string param = {});
  // not_found builds a 404 for an unknown path.
  static ApiError not_found(std::string message);
  // model_not_found builds OpenAI's 404 for a model this server does not serve.
  static ApiError model_not_found(const std::string& model);
  // method_not_allowed builds a 405 (the caller adds the Allow header).
  static ApiError method_not_allowed(std::string message);
  // server_error builds a 500 server_error.
  static ApiError server_error(std::string message);
  // overloaded builds a 503 with Retry-After, for a full waiting queue.
  static ApiError overloaded(std::string message, int retry_after_seconds);
  // unauthorized builds a 401 authentication_error (the caller adds WWW-Authenticate).
  static ApiError unauthorized(std::string message);
  // forbidden builds a 403 permission_error: the caller is known but its role does not reach.
  static ApiError forbidden(std::string message);
  // too_many_requests builds a 429 rate_limit_error with Retry-After.
  static ApiError too_many_requests(std::string message, int retry_after_seconds);
  // request_too_large builds a 413 for a body over the configured limit.
  static ApiError request_too_large(std::string message);
};

// api_error_body renders the JSON body of an error (allocates; not for the token hot path).
std::string api_error_body(const ApiError& error);

}  // namespace inferscope::net
