// libFuzzer target for serve/openai_request.h: any bytes as a request body, for both endpoints.
// Invariants: never crashes; an accepted request has what its endpoint requires; its client bytes,
// through the chat template and the response formatter, stay inside one SSE event.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "serve/chat_template.h"
#include "serve/openai_request.h"
#include "serve/openai_response.h"

using inferscope::serve::CompletionRequest;
using inferscope::serve::Endpoint;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  for (Endpoint endpoint : {Endpoint::kChat, Endpoint::kCompletions}) {
    CompletionRequest request;
    auto error = inferscope::serve::parse_completion_request(endpoint, body, request);
    if (error) {
      if (error->status != 400 || error->message.empty()) std::abort();
      continue;
    }
    if (endpoint == Endpoint::kChat && request.messages.empty()) std::abort();
    if (endpoint == Endpoint::kCompletions && request.prompt.empty() && request.prompt_token_ids.empty()) {
      std::abort();
    }
    if (request.max_tokens && (*request.max_tokens == 0 || *request.max_tokens > inferscope::serve::kMaxTokensLimit)) {
      std::abort();
    }
    std::string text = endpoint == Endpoint::kChat ? inferscope::serve::apply_chat_template(request.messages)
                                                   : request.prompt;
    inferscope::serve::ResponseFormatter formatter(endpoint, "id", 1, request.model);
    std::string sse;
    formatter.append_content_chunk(text, sse);
    if (sse.rfind("data: {", 0) != 0 || sse.substr(sse.size() - 2) != "\n\n") std::abort();
    // Client bytes are escaped: a raw newline inside the event would split the SSE frame.
    if (sse.find('\n') != sse.size() - 2) std::abort();
  }
  return 0;
}
