// File: client_request.cpp
// The common case (no stream_options key) is a byte insert after the opening brace, so the rest
// of the body goes upstream exactly as the client sent it; only an existing stream_options object
// is rewritten through nlohmann-json.
#include "gateway/client_request.h"

#include <nlohmann/json.hpp>
#include <simdjson.h>

namespace inferscope::gateway {

namespace {
simdjson::dom::parser& parser() {
  thread_local simdjson::dom::parser p;
  return p;
}
}  // namespace

ClientRequestInfo inspect_client_request(std::string_view body) {
  ClientRequestInfo info;
  simdjson::padded_string padded(body);
  simdjson::dom::element root;
  if (parser().parse(padded).get(root) != simdjson::SUCCESS) {
    info.error = "cannot parse request body from client: it is not valid JSON";
    return info;
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    info.error = "cannot parse request body from client: it must be a JSON object";
    return info;
  }
  // A repeated key means different things to different JSON parsers (first or last wins): the
  // gateway and the upstream must not read different models or stream flags from one body.
  int seen[3] = {0, 0, 0};
  for (auto field : object) {
    const std::string_view key = field.key;
    const int i = key == "model" ? 0 : key == "stream" ? 1 : key == "stream_options" ? 2 : -1;
    if (i >= 0 && ++seen[i] > 1) {
      info.error = "cannot parse request body from client: key '" + std::string(key) + "' appears more than once";
      info.error_param = std::string(key);
      return info;
    }
  }
  simdjson::dom::element value;
  if (object["model"].get(value) == simdjson::SUCCESS && !value.is_null()) {
    std::string_view model;
    if (value.get_string().get(model) != simdjson::SUCCESS) {
      info.error = "cannot parse request body from client: 'model' must be a string";
      info.error_param = "model";
      return info;
    }
    info.model.assign(model);
  }
  if (object["stream"].get(value) == simdjson::SUCCESS && !value.is_null()) {
    if (value.get_bool().get(info.stream) != simdjson::SUCCESS) {
      info.error = "cannot parse request body from client: 'stream' must be a boolean";
      info.error_param = "stream";
      return info;
    }
  }
  if (object["stream_options"].get(value) == simdjson::SUCCESS && !value.is_null()) {
    simdjson::dom::object options;
    if (value.get_object().get(options) != simdjson::SUCCESS) {
      info.error = "cannot parse request body from client: 'stream_options' must be an object";
      info.error_param = "stream_options";
      return info;
    }
    simdjson::dom::element usage;
    if (options["include_usage"].get(usage) == simdjson::SUCCESS && !usage.is_null()) {
      if (usage.get_bool().get(info.include_usage) != simdjson::SUCCESS) {
        info.error = "cannot parse request body from client: 'stream_options.include_usage' must be a boolean";
        info.error_param = "stream_options";
        return info;
      }
    }
  }
  return info;
}

// has_stream_options reports whether the top-level object has a stream_options key (the text may
// also appear inside a message, which must not send the body down the rewrite path).
bool has_stream_options(std::string_view body) {
  if (body.find("\"stream_options\"") == std::string_view::npos) return false;
  simdjson::padded_string padded(body);
  simdjson::dom::object object;
  if (parser().parse(padded).get_object().get(object) != simdjson::SUCCESS) return true;
  simdjson::dom::element value;
  return object["stream_options"].get(value) == simdjson::SUCCESS;
}

std::string with_include_usage(std::string_view body) {
  if (!has_stream_options(body)) {
    const std::size_t brace = body.find('{');
    if (brace == std::string_view::npos) return std::string(body);
    std::size_t next = body.find_first_not_of(" \t\r\n", brace + 1);
    const bool empty_object = next != std::string_view::npos && body[next] == '}';
    std::string out;
    out.reserve(body.size() + 48);
    out.append(body.substr(0, brace + 1));
    out.append("\"stream_options\":{\"include_usage\":true}");
    if (!empty_object) out.push_back(',');
    out.append(body.substr(brace + 1));
    return out;
  }
  auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return std::string(body);
  if (!json["stream_options"].is_object()) json["stream_options"] = nlohmann::json::object();
  json["stream_options"]["include_usage"] = true;
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace inferscope::gateway
