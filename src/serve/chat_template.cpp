// File: chat_template.cpp
#include "serve/chat_template.h"

namespace inferscope::serve {
namespace {
constexpr std::string_view kTurnStart = "<|im_start|>";
constexpr std::string_view kTurnEnd = "<|im_end|>\n";
}  // namespace

std::string apply_chat_template(std::span<const ChatMessage> messages) {
  std::size_t size = kTurnStart.size() + 10;
  for (const ChatMessage& m : messages) {
    size += kTurnStart.size() + m.role.size() + 1 + m.content.size() + kTurnEnd.size();
  }
  std::string out;
  out.reserve(size);
  for (const ChatMessage& m : messages) {
    out.append(kTurnStart).append(m.role).append("\n").append(m.content).append(kTurnEnd);
  }
  out.append(kTurnStart).append("assistant\n");
  return out;
}

}  // namespace inferscope::serve
