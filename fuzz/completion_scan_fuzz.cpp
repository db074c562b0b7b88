// Fuzzes scan_completion, the gateway's allocation-free reader of completion JSON, against the
// simdjson DOM reading the gateway did before it (the oracle below): for every input and both
// shapes, the same acceptance and the same error flag, usage, token counts, choices, content,
// decoded finish_reason and llama.cpp timings. Any difference aborts.
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "gateway/completion_scan.h"

using inferscope::gateway::CompletionScan;
using inferscope::gateway::CompletionShape;

namespace {

bool has_text(const simdjson::dom::element& object, const char* key) {
  std::string_view text;
  return object[key].get_string().get(text) == simdjson::SUCCESS && !text.empty();
}

bool non_empty_array(const simdjson::dom::element& object, const char* key) {
  simdjson::dom::array array;
  return object[key].get_array().get(array) == simdjson::SUCCESS && array.size() > 0;
}

struct Reference {
  bool valid = false;
  bool error = false;
  bool usage = false;
  std::optional<std::uint64_t> prompt_tokens;
  std::optional<std::uint64_t> completion_tokens;
  bool choices = false;
  bool choices_empty = false;
  bool content = false;
  std::optional<std::string> finish_reason;
  bool timings = false;
  std::optional<double> prompt_ms, predicted_ms;
  std::optional<std::uint64_t> prompt_n, predicted_n;
};

// same_number: equal, or both below any duration that matters (a subnormal the scanner reads as
// 0 where simdjson keeps its bits).
bool same_number(const std::optional<double>& a, const std::optional<double>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || *a == *b || (std::fabs(*a) < 1e-300 && std::fabs(*b) < 1e-300);
}

Reference read_with_simdjson(std::string_view json, CompletionShape shape) {
  thread_local simdjson::dom::parser parser;
  Reference r;
  simdjson::padded_string padded(json);
  simdjson::dom::element root;
  if (parser.parse(padded).get(root) != simdjson::SUCCESS || !root.is_object()) return r;
  r.valid = true;
  simdjson::dom::element error;
  r.error = root["error"].get(error) == simdjson::SUCCESS && !error.is_null();
  simdjson::dom::element usage;
  r.usage = root["usage"].get(usage) == simdjson::SUCCESS && usage.is_object();
  if (r.usage) {
    std::uint64_t n = 0;
    if (usage["prompt_tokens"].get_uint64().get(n) == simdjson::SUCCESS) r.prompt_tokens = n;
    if (usage["completion_tokens"].get_uint64().get(n) == simdjson::SUCCESS) r.completion_tokens = n;
  }
  simdjson::dom::element timings;
  r.timings = root["timings"].get(timings) == simdjson::SUCCESS && timings.is_object();
  if (r.timings) {
    std::uint64_t n = 0;
    double ms = 0;
    if (timings["prompt_ms"].get_double().get(ms) == simdjson::SUCCESS) r.prompt_ms = ms;
    if (timings["predicted_ms"].get_double().get(ms) == simdjson::SUCCESS) r.predicted_ms = ms;
    if (timings["prompt_n"].get_uint64().get(n) == simdjson::SUCCESS) r.prompt_n = n;
    if (timings["predicted_n"].get_uint64().get(n) == simdjson::SUCCESS) r.predicted_n = n;
  }
  simdjson::dom::array choices;
  if (root["choices"].get_array().get(choices) != simdjson::SUCCESS) return r;
  r.choices = true;
  r.choices_empty = choices.size() == 0;
  const bool chunk = shape == CompletionShape::kChunk;
  for (simdjson::dom::element choice : choices) {
    simdjson::dom::element holder;
    if (choice[chunk ? "delta" : "message"].get(holder) == simdjson::SUCCESS && holder.is_object()) {
      r.content = r.content || has_text(holder, "content") || non_empty_array(holder, "tool_calls") ||
                  (chunk && (has_text(holder, "reasoning_content") || has_text(holder, "reasoning")));
    }
    r.content = r.content || has_text(choice, "text");
    std::string_view reason;
    if (choice["finish_reason"].get_string().get(reason) == simdjson::SUCCESS) r.finish_reason = std::string(reason);
  }
  return r;
}

void check(std::string_view json, CompletionShape shape) {
  const CompletionScan scan = inferscope::gateway::scan_completion(json, shape);
  const Reference want = read_with_simdjson(json, shape);
  if (scan.valid != want.valid) std::abort();
  if (!want.valid) return;
  if (scan.error != want.error || scan.usage != want.usage || scan.prompt_tokens != want.prompt_tokens ||
      scan.completion_tokens != want.completion_tokens || scan.choices != want.choices ||
      scan.choices_empty != want.choices_empty || scan.content != want.content ||
      scan.finish_reason_seen != want.finish_reason.has_value()) {
    std::abort();
  }
  const inferscope::gateway::EngineTimings& t = scan.engine_timings;
  if (scan.timings != want.timings || !same_number(t.prompt_ms, want.prompt_ms) ||
      !same_number(t.predicted_ms, want.predicted_ms) || t.prompt_n != want.prompt_n ||
      t.predicted_n != want.predicted_n) {
    std::abort();
  }
  if (scan.finish_reason_seen) {
    std::string decoded;
    inferscope::gateway::assign_json_string(scan.finish_reason, scan.finish_reason_escaped, decoded);
    if (decoded != *want.finish_reason) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  check(json, CompletionShape::kChunk);
  check(json, CompletionShape::kWhole);
  return 0;
}
