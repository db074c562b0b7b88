// File: openai_request.cpp
// One pass over the top-level object with simdjson's DOM API; each known key is checked for type
// and range as it is met, so the error names the first offending field.
#include "serve/openai_request.h"

#include <simdjson.h>

#include <string>

namespace inferscope::serve {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

std::string type_error(std::string_view field, std::string_view want) {
  return "cannot parse request body from client: '" + std::string(field) + "' must be " +
         std::string(want);
}

// read_count reads a non-negative integer no larger than `limit`.
std::optional<net::ApiError> read_count(element value, std::string_view field, std::uint64_t limit,
                                   std::uint64_t& out) {
  std::int64_t signed_value = 0;
  if (value.type() == element_type::UINT64) {
    out = value.get_uint64().value_unsafe();
  } else if (value.get_int64().get(signed_value) == simdjson::SUCCESS && signed_value >= 0) {
    out = static_cast<std::uint64_t>(signed_value);
  } else {
    return net::ApiError::bad_request(type_error(field, "a non-negative integer"), std::string(field));
  }
  if (out > limit) {
    return net::ApiError::bad_request(type_error(field, "at most " + std::to_string(limit)),
                                 std::string(field));
  }
  return std::nullopt;
}

std::optional<net::ApiError> read_bool(element value, std::string_view field, bool& out) {
  if (value.get_bool().get(out) != simdjson::SUCCESS) {
    return net::ApiError::bad_request(type_error(field, "a boolean"), std::string(field));
  }
  return std::nullopt;
}

// read_content accepts a string or an array of {"type":"text","text":...} parts (joined).
std::optional<net::ApiError> read_content(element value, std::string& out) {
  std::string_view text;
  if (value.get_string().get(text) == simdjson::SUCCESS) {
    out.assign(text);
    return std::nullopt;
  }
  simdjson::dom::array parts;
  if (value.get_array().get(parts) != simdjson::SUCCESS) {
    return net::ApiError::bad_request(type_error("messages[].content", "a string or an array of parts"),
                                 "messages");
  }
  for (element part : parts) {
    std::string_view part_text;
    if (part["text"].get_string().get(part_text) != simdjson::SUCCESS) {
      return net::ApiError::bad_request(type_error("messages[].content[].text", "a string"),
                                   "messages");
    }
    out.append(part_text);
  }
  return std::nullopt;
}

std::optional<net::ApiError> read_messages(element value, std::vector<ChatMessage>& out) {
  simdjson::dom::array items;
  if (value.get_array().get(items) != simdjson::SUCCESS || items.size() == 0) {
    return net::ApiError::bad_request(type_error("messages", "a non-empty array"), "messages");
  }
  for (element item : items) {
    ChatMessage message;
    std::string_view role;
    if (item["role"].get_string().get(role) != simdjson::SUCCESS) {
      return net::ApiError::bad_request(type_error("messages[].role", "a string"), "messages");
    }
    message.role.assign(role);
    element content;
    // A missing or null content is legal for assistant turns; it reads as empty text.
    if (item["content"].get(content) == simdjson::SUCCESS && !content.is_null()) {
      if (auto err = read_content(content, message.content)) return err;
    }
    out.push_back(std::move(message));
  }
  return std::nullopt;
}

// read_prompt accepts a string, a one-string array, or an array of token ids.
std::optional<net::ApiError> read_prompt(element value, CompletionRequest& out) {
  std::string_view text;
  if (value.get_string().get(text) == simdjson::SUCCESS) {
    out.prompt.assign(text);
    return std::nullopt;
  }
  simdjson::dom::array items;
  if (value.get_array().get(items) == simdjson::SUCCESS && items.size() > 0) {
    element first = items.at(0).value_unsafe();
    if (first.is_string() && items.size() == 1) {
      out.prompt.assign(first.get_string().value_unsafe());
      return std::nullopt;
    }
    for (element item : items) {
      std::uint64_t id = 0;
      if (auto err = read_count(item, "prompt[]", 0xffffffffu, id)) {
        return net::ApiError::bad_request(
            type_error("prompt", "a string, a one-string array or an array of token ids"), "prompt");
      }
      out.prompt_token_ids.push_back(static_cast<std::uint32_t>(id));
    }
    return std::nullopt;
  }
  return net::ApiError::bad_request(
      type_error("prompt", "a string, a one-string array or an array of token ids"), "prompt");
}

std::optional<net::ApiError> read_stream_options(element value, bool& include_usage) {
  if (value.is_null()) return std::nullopt;
  simdjson::dom::object options;
  if (value.get_object().get(options) != simdjson::SUCCESS) {
    return net::ApiError::bad_request(type_error("stream_options", "an object"), "stream_options");
  }
  element flag;
  if (options["include_usage"].get(flag) == simdjson::SUCCESS && !flag.is_null()) {
    return read_bool(flag, "stream_options.include_usage", include_usage);
  }
  return std::nullopt;
}

// read_field handles one top-level key; unknown keys are accepted and ignored.
std::optional<net::ApiError> read_field(std::string_view key, element value, CompletionRequest& out,
                                   bool& saw_stream_options) {
  std::uint64_t count = 0;
  if (key == "model") {
    std::string_view model;
    if (value.get_string().get(model) != simdjson::SUCCESS) {
      return net::ApiError::bad_request(type_error("model", "a string"), "model");
    }
    out.model.assign(model);
  } else if (key == "messages" && out.endpoint == Endpoint::kChat) {
    return read_messages(value, out.messages);
  } else if (key == "prompt" && out.endpoint == Endpoint::kCompletions) {
    return read_prompt(value, out);
  } else if (value.is_null()) {
    return std::nullopt;  // every optional field may be null, meaning "not given"
  } else if (key == "max_tokens" || key == "max_completion_tokens") {
    if (auto err = read_count(value, key, kMaxTokensLimit, count)) return err;
    if (count == 0) return net::ApiError::bad_request(type_error(key, "at least 1"), std::string(key));
    out.max_tokens = static_cast<std::uint32_t>(count);
  } else if (key == "min_tokens") {
    if (auto err = read_count(value, key, kMaxTokensLimit, count)) return err;
    out.min_tokens = static_cast<std::uint32_t>(count);
  } else if (key == "ignore_eos") {
    return read_bool(value, key, out.ignore_eos);
  } else if (key == "stream") {
    return read_bool(value, key, out.stream);
  } else if (key == "stream_options") {
    saw_stream_options = true;
    return read_stream_options(value, out.include_usage);
  } else if (key == "seed") {
    std::int64_t seed = 0;
    if (value.get_int64().get(seed) != simdjson::SUCCESS && value.type() != element_type::UINT64) {
      return net::ApiError::bad_request(type_error("seed", "an integer"), "seed");
    }
    out.seed = value.type() == element_type::UINT64 ? value.get_uint64().value_unsafe()
                                                    : static_cast<std::uint64_t>(seed);
  } else if (key == "n") {
    if (auto err = read_count(value, key, kMaxTokensLimit, count)) return err;
    if (count != 1) return net::ApiError::bad_request("cannot serve request: only n=1 is supported", "n");
  } else if (key == "temperature" || key == "top_p" || key == "presence_penalty" ||
             key == "frequency_penalty") {
    if (!value.is_number()) return net::ApiError::bad_request(type_error(key, "a number"), std::string(key));
  }
  return std::nullopt;
}

}  // namespace

std::optional<net::ApiError> parse_completion_request(Endpoint endpoint, std::string_view body,
                                                 CompletionRequest& out) {
  // One parser per thread: it keeps its buffers, so steady-state parsing allocates nothing.
  thread_local simdjson::dom::parser parser;
  out = CompletionRequest{};
  out.endpoint = endpoint;
  element doc;
  if (auto error = parser.parse(body.data(), body.size()).get(doc)) {
    return net::ApiError::bad_request(std::string("cannot parse request body from client: invalid JSON (") +
                                 simdjson::error_message(error) + ")");
  }
  simdjson::dom::object fields;
  if (doc.get_object().get(fields) != simdjson::SUCCESS) {
    return net::ApiError::bad_request("cannot parse request body from client: it must be a JSON object");
  }
  bool saw_stream_options = false;
  for (auto field : fields) {
    if (auto err = read_field(field.key, field.value, out, saw_stream_options)) return err;
  }
  const bool chat = endpoint == Endpoint::kChat;
  if (chat && out.messages.empty()) {
    return net::ApiError::bad_request("cannot parse request body from client: 'messages' is required",
                                 "messages");
  }
  if (!chat && out.prompt.empty() && out.prompt_token_ids.empty()) {
    return net::ApiError::bad_request(
        "cannot parse request body from client: 'prompt' is required and must not be empty", "prompt");
  }
  if (saw_stream_options && !out.stream) {
    return net::ApiError::bad_request(
        "cannot parse request body from client: 'stream_options' is only allowed when 'stream' is true",
        "stream_options");
  }
  return std::nullopt;
}

}  // namespace inferscope::serve
