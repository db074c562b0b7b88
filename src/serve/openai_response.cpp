// File: openai_response.cpp
// Chunks are assembled from precomputed head/tail strings plus the escaped token text, so a
// content event costs one escape pass and three appends (bench/serve/sse_throughput.sh).
#include "serve/openai_response.h"

#include <fmt/format.h>

#include <random>

namespace inferscope::serve {

void append_json_escaped(std::string_view text, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::size_t run_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.data() + run_start, i - run_start);
    run_start = i + 1;
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      default:
        out.append("\\u00");
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xf]);
    }
  }
  out.append(text.data() + run_start, text.size() - run_start);
}

std::string make_response_id(Endpoint endpoint) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{}{:016x}{:016x}", endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-", rng(),
                     rng());
}

ResponseFormatter::ResponseFormatter(Endpoint endpoint, std::string id, std::int64_t created,
                                     std::string_view model)
    : endpoint_(endpoint), id_(std::move(id)), created_(created), model_(model) {
  const bool chat = endpoint_ == Endpoint::kChat;
  head_ = "data: {\"id\":\"" + id_ + "\",\"object\":\"" +
          (chat ? "chat.completion.chunk" : "text_completion") +
          "\",\"created\":" + std::to_string(created_) + ",\"model\":\"";
  append_json_escaped(model_, head_);
  head_ += "\",\"choices\":[";
  content_head_ = head_ + (chat ? "{\"index\":0,\"delta\":{\"content\":\"" : "{\"index\":0,\"text\":\"");
  content_tail_ = chat ? "\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
                       : "\",\"logprobs\":null,\"finish_reason\":null}]}\n\n";
}

void ResponseFormatter::append_head(std::string& out) const { out.append(head_); }

void ResponseFormatter::append_role_chunk(std::string& out) const {
  if (endpoint_ != Endpoint::kChat) return;
  append_head(out);
  out.append(
      "{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,"
      "\"finish_reason\":null}]}\n\n");
}

void ResponseFormatter::append_content_chunk(std::string_view text, std::string& out) const {
  out.append(content_head_);
  append_json_escaped(text, out);
  out.append(content_tail_);
}

void ResponseFormatter::append_finish_chunk(std::string_view finish_reason, std::string& out) const {
  append_head(out);
  out.append(endpoint_ == Endpoint::kChat ? "{\"index\":0,\"delta\":{}," : "{\"index\":0,\"text\":\"\",");
  out.append("\"logprobs\":null,\"finish_reason\":\"");
  append_json_escaped(finish_reason, out);
  out.append("\"}]}\n\n");
}

void ResponseFormatter::append_last_content_chunk(std::string_view text, std::string_view finish_reason,
                                                  std::string& out) const {
  out.append(content_head_);
  append_json_escaped(text, out);
  out.append(endpoint_ == Endpoint::kChat ? "\"},\"logprobs\":null,\"finish_reason\":\"" : "\",\"logprobs\":null,\"finish_reason\":\"");
  append_json_escaped(finish_reason, out);
  out.append("\"}]}\n\n");
}

void ResponseFormatter::append_usage_chunk(const Usage& usage, std::string& out) const {
  append_head(out);
  fmt::format_to(std::back_inserter(out),
                 "],\"usage\":{{\"prompt_tokens\":{},\"completion_tokens\":{},\"total_tokens\":{}}}}}\n\n",
                 usage.prompt_tokens, usage.completion_tokens,
                 usage.prompt_tokens + usage.completion_tokens);
}

void ResponseFormatter::append_error_event(std::string_view message, std::string& out) {
  out.append("data: {\"error\":{\"message\":\"");
  append_json_escaped(message, out);
  out.append("\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n");
}

void ResponseFormatter::append_done(std::string& out) { out.append("data: [DONE]\n\n"); }

std::string ResponseFormatter::full_body(std::string_view text, std::string_view finish_reason,
                                         const Usage& usage) const {
  const bool chat = endpoint_ == Endpoint::kChat;
  std::string out;
  out.reserve(text.size() + 256);
  out.append("{\"id\":\"").append(id_).append("\",\"object\":\"");
  out.append(chat ? "chat.completion" : "text_completion");
  out.append("\",\"created\":").append(std::to_string(created_)).append(",\"model\":\"");
  append_json_escaped(model_, out);
  out.append(chat ? "\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\""
                  : "\",\"choices\":[{\"index\":0,\"text\":\"");
  append_json_escaped(text, out);
  out.append(chat ? "\"},\"logprobs\":null,\"finish_reason\":\"" : "\",\"logprobs\":null,\"finish_reason\":\"");
  append_json_escaped(finish_reason, out);
  fmt::format_to(std::back_inserter(out),
                 "\"}}],\"usage\":{{\"prompt_tokens\":{},\"completion_tokens\":{},\"total_tokens\":{}}}}}",
                 usage.prompt_tokens, usage.completion_tokens,
                 usage.prompt_tokens + usage.completion_tokens);
  return out;
}

}  // namespace inferscope::serve
