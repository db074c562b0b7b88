// File: api_error.cpp
// OpenAI-format error bodies. nlohmann is fine here: errors are not on the token hot path.
#include "net/api_error.h"

#include <nlohmann/json.hpp>

namespace inferscope::net {

ApiError ApiError::bad_request(std::string message, std::string param) {
  ApiError e;
  e.status = 400;
  e.message = std::move(message);
  e.param = std::move(param);
  return e;
}

ApiError ApiError::not_found(std::string message) {
  ApiError e;
  e.status = 404;
  e.message = std::move(message);
  e.code = "not_found";
  return e;
}

ApiError ApiError::model_not_found(const std::string& model) {
  ApiError e;
  e.status = 404;
  // The requested name is echoed (OpenAI does), but it never becomes a metric label.
  e.message = "The model `" + model + "` does not exist.";
  e.param = "model";
  e.code = "model_not_found";
  return e;
}

ApiError ApiError::method_not_allowed(std::string message) {
  ApiError e;
  e.status = 405;
  e.message = std::move(message);
  e.code = "method_not_allowed";
  return e;
}

ApiError ApiError::server_error(std::string message) {
  ApiError e;
  e.status = 500;
  e.message = std::move(message);
  e.type = "server_error";
  return e;
}

ApiError ApiError::overloaded(std::string message, int retry_after_seconds) {
  ApiError e;
  e.status = 503;
  e.message = std::move(message);
  e.type = "server_error";
  e.code = "server_overloaded";
  e.retry_after = retry_after_seconds;
  return e;
}

ApiError ApiError::unauthorized(std::string message) {
  ApiError e;
  e.status = 401;
  e.message = std::move(message);
  e.type = "authentication_error";
  e.code = "unauthorized";
  return e;
}

ApiError ApiError::forbidden(std::string message) {
  ApiError e;
  e.status = 403;
  e.message = std::move(message);
  e.type = "permission_error";
  e.code = "forbidden";
  return e;
}

ApiError ApiError::too_many_requests(std::string message, int retry_after_seconds) {
  ApiError e;
  e.status = 429;
  e.message = std::move(message);
  e.type = "rate_limit_error";
  e.code = "rate_limit_exceeded";
  e.retry_after = retry_after_seconds;
  return e;
}

ApiError ApiError::request_too_large(std::string message) {
  ApiError e = bad_request(std::move(message));
  e.status = 413;
  e.code = "request_too_large";
  return e;
}

std::string api_error_body(const ApiError& error) {
  nlohmann::json inner = {{"message", error.message}, {"type", error.type}};
  inner["param"] = error.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(error.param);
  inner["code"] = error.code.empty() ? nlohmann::json(nullptr) : nlohmann::json(error.code);
  // replace: a client's bytes echoed in a message must not make dump() throw on invalid UTF-8.
  return nlohmann::json{{"error", inner}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace inferscope::net
