#include "loadgen/openai_event.h"

namespace inferscope::loadgen {
namespace {

namespace od = simdjson::ondemand;

// non_empty_string reports whether `v` is a string with at least one byte, adding its length.
bool non_empty_string(od::value v, std::size_t& bytes) {
  std::string_view s;
  if (v.get_string().get(s) != simdjson::SUCCESS) return false;
  bytes += s.size();
  return !s.empty();
}

// read_message reads a delta / message object: content, reasoning and tool calls.
void read_message(od::object message, EventFields& f) {
  for (auto field : message) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return;
    od::value v;
    if (field.value().get(v) != simdjson::SUCCESS) return;
    if (key == "content") {
      if (non_empty_string(v, f.content_bytes)) f.has_content = f.has_output = true;
    } else if (key == "reasoning_content" || key == "reasoning") {
      if (non_empty_string(v, f.content_bytes)) f.has_output = true;
    } else if (key == "tool_calls") {
      od::array calls;
      if (v.get_array().get(calls) == simdjson::SUCCESS) {
        for (auto call : calls) {
          (void)call;
          f.has_output = true;
          break;
        }
      }
    }
  }
}

void read_choice(od::object choice, EventFields& f) {
  for (auto field : choice) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return;
    od::value v;
    if (field.value().get(v) != simdjson::SUCCESS) return;
    if (key == "delta" || key == "message") {
      od::object m;
      if (v.get_object().get(m) == simdjson::SUCCESS) read_message(m, f);
    } else if (key == "text") {
      if (non_empty_string(v, f.content_bytes)) f.has_content = f.has_output = true;
    } else if (key == "finish_reason") {
      bool is_null = true;
      if (v.is_null().get(is_null) == simdjson::SUCCESS && !is_null) f.finished = true;
    }
  }
}

void read_usage(od::object usage, EventFields& f) {
  for (auto field : usage) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return;
    std::uint64_t n = 0;
    if (key == "completion_tokens" && field.value().get_uint64().get(n) == simdjson::SUCCESS) f.completion_tokens = n;
    if (key == "prompt_tokens" && field.value().get_uint64().get(n) == simdjson::SUCCESS) f.prompt_tokens = n;
  }
}

}  // namespace

EventFields OpenAiEventParser::parse(std::string_view json) {
  EventFields f;
  scratch_.assign(json);
  scratch_.reserve(json.size() + simdjson::SIMDJSON_PADDING);
  od::document doc;
  if (parser_.iterate(scratch_.data(), scratch_.size(), scratch_.capacity()).get(doc) != simdjson::SUCCESS) return f;
  od::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) return f;
  for (auto field : root) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return f;
    od::value v;
    if (field.value().get(v) != simdjson::SUCCESS) return f;
    if (key == "choices") {
      od::array choices;
      if (v.get_array().get(choices) != simdjson::SUCCESS) continue;
      for (auto c : choices) {
        f.has_choices = true;
        od::object choice;
        if (c.get_object().get(choice) == simdjson::SUCCESS) read_choice(choice, f);
      }
    } else if (key == "usage") {
      od::object usage;
      if (v.get_object().get(usage) == simdjson::SUCCESS) read_usage(usage, f);
    } else if (key == "error") {
      f.is_error = true;
    }
  }
  // On-demand reports a truncated document only when iteration reaches the damage; require that
  // the whole document was consumed so "{...} junk" and cut-off payloads count as malformed.
  f.valid = doc.current_location().error() == simdjson::OUT_OF_BOUNDS;
  return f;
}

}  // namespace inferscope::loadgen
