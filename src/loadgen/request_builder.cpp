#include "loadgen/request_builder.h"

#include <fmt/format.h>

namespace inferscope::loadgen {

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
}

RequestBuilder::RequestBuilder(const Target& target, RequestOptions options) : options_(std::move(options)) {
  head_ = fmt::format("POST {}{} HTTP/1.1\r\nHost: {}\r\nUser-Agent: inferscope-bench/0.1\r\n"
                      "Content-Type: application/json\r\nAccept: {}\r\n",
                      target.base_path, options_.endpoint, target.host_header,
                      options_.stream ? "text/event-stream" : "application/json");
  if (!options_.api_key.empty()) head_ += "Authorization: Bearer " + options_.api_key + "\r\n";
  for (const auto& [name, value] : options_.headers) head_ += name + ": " + value + "\r\n";
  head_ += "Content-Length: ";
}

std::string RequestBuilder::build(const RequestSpec& spec) const {
  std::string body;
  body.reserve(spec.prompt.size() + spec.messages_json.size() + 256);
  // No --model: leave the field out so the server picks its default model.
  body += "{";
  if (!options_.lora_names.empty()) {
    const std::uint64_t turn = lora_next_.fetch_add(1, std::memory_order_relaxed);
    body += "\"model\":";
    append_json_string(body, options_.lora_names[turn % options_.lora_names.size()]);
    body += ",";
  } else if (!options_.model.empty()) {
    body += "\"model\":";
    append_json_string(body, options_.model);
    body += ",";
  }
  if (options_.chat) {
    body += "\"messages\":";
    if (!spec.messages_json.empty()) {
      body += spec.messages_json;
    } else {
      body += "[{\"role\":\"user\",\"content\":";
      append_json_string(body, spec.prompt);
      body += "}]";
    }
  } else {
    body += "\"prompt\":";
    append_json_string(body, spec.prompt);  // datasets with messages are flattened when loaded
  }
  body += fmt::format(",\"max_tokens\":{}", spec.max_tokens);
  if (options_.ignore_eos) body += ",\"ignore_eos\":true";
  if (options_.temperature) body += fmt::format(",\"temperature\":{}", *options_.temperature);
  if (!options_.stream) {
    body += ",\"stream\":false}";
  } else if (options_.include_usage) {
    body += ",\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
  } else {
    body += ",\"stream\":true}";
  }
  std::string wire;
  wire.reserve(head_.size() + body.size() + 32);
  wire += head_;
  wire += std::to_string(body.size());
  wire += "\r\n\r\n";
  wire += body;
  return wire;
}

}  // namespace inferscope::loadgen
