// Fuzzes the JSONL dataset reader of `inferscope bench` (--dataset-name jsonl). Invariants: never
// crashes or throws; an error is one "cannot ..." line naming the source; every accepted entry has
// exactly one of a prompt or a messages array (which re-parses as a JSON array), an input estimate
// of at least one token and a max_tokens in 1..10,000,000.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "loadgen/dataset_workload.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto workload = inferscope::loadgen::parse_jsonl_workload(text, "fuzz.jsonl", 128);
  if (!workload) {
    const std::string& m = workload.error().message;
    if (m.rfind("cannot read dataset", 0) != 0 || m.find("fuzz.jsonl") == std::string::npos ||
        m.find('\n') != std::string::npos) {
      std::abort();
    }
    return 0;
  }
  const auto& w = **workload;
  if (w.size() == 0) std::abort();
  for (std::size_t i = 0; i < w.size(); ++i) {
    inferscope::loadgen::RequestSpec spec = w.next(i);
    if (spec.prompt.empty() == spec.messages_json.empty() && !spec.messages_json.empty()) std::abort();
    if (!spec.messages_json.empty()) {
      auto messages = nlohmann::json::parse(spec.messages_json, nullptr, false);
      if (!messages.is_array() || messages.empty()) std::abort();
    }
    if (spec.input_tokens == 0 || spec.max_tokens == 0 || spec.max_tokens > 10'000'000) std::abort();
  }
  return 0;
}
