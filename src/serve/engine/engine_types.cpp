#include "serve/engine/engine_types.h"

namespace inferscope::serve {

std::string_view to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kAbort: return "abort";
    case FinishReason::kError: return "error";
  }
  return "error";
}

}  // namespace inferscope::serve
