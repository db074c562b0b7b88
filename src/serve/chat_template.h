// File: chat_template.h
// apply_chat_template turns chat messages into the single prompt text the tokenizer sees, using
// ChatML (documented in docs/serve.md) so prompt-token counts grow with every message's text plus a
// small fixed cost per turn, as with a real model's template. Example:
//   std::string text = apply_chat_template(request.messages);
// Pure function, thread-safe. Never logs or stores the text.
#pragma once

#include <span>
#include <string>

#include "serve/openai_request.h"

namespace inferscope::serve {

// apply_chat_template renders `<|im_start|>{role}\n{content}<|im_end|>\n` per message and ends with
// the generation prompt `<|im_start|>assistant\n`. Cost: one allocation of the joined size.
std::string apply_chat_template(std::span<const ChatMessage> messages);

}  // namespace inferscope::serve
