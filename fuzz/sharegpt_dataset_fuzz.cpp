// Fuzzes the ShareGPT dataset reader of `inferscope bench` (--dataset-name sharegpt). The first
// input byte picks the --sharegpt-output-len override (0 = from the gpt turn). Invariants: never
// crashes or throws; an error is one "cannot ..." line naming the source; every accepted
// conversation passes vLLM's filters (prompt 4..1024 tokens; without an override, output >= 4 and
// prompt + output <= 2048); the same seed gives the same order.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "loadgen/dataset_workload.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::uint32_t output_len = data[0] % 4 == 0 ? data[0] : 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto workload = inferscope::loadgen::parse_sharegpt_workload(text, "fuzz.json", output_len, 7);
  if (!workload) {
    const std::string& m = workload.error().message;
    if (m.rfind("cannot read ShareGPT dataset from fuzz.json: ", 0) != 0 || m.find('\n') != std::string::npos) {
      std::abort();
    }
    return 0;
  }
  auto again = inferscope::loadgen::parse_sharegpt_workload(text, "fuzz.json", output_len, 7);
  if (!again || (*again)->size() != (*workload)->size()) std::abort();
  for (std::size_t i = 0; i < (*workload)->size(); ++i) {
    inferscope::loadgen::RequestSpec spec = (*workload)->next(i);
    if (spec.prompt != (*again)->next(i).prompt) std::abort();
    if (spec.input_tokens < 4 || spec.input_tokens > 1024 || spec.prompt.empty()) std::abort();
    if (output_len > 0 && spec.max_tokens != output_len) std::abort();
    if (output_len == 0 && (spec.max_tokens < 4 || spec.input_tokens + spec.max_tokens > 2048)) std::abort();
  }
  return 0;
}
