// Stage names: the strings are Prometheus label values and part of the public contract.
#include <inferscope/timeline/stage.h>

namespace inferscope::timeline {
namespace {
constexpr std::array<std::string_view, kStageCount> kNames = {
    "gateway_queue", "preprocess",  "dependency", "queue",           "prefill",      "decode",
    "postprocess",   "send",        "upstream_connect", "upstream_ttft", "stream",       "route",
    "kv_transfer"};
}  // namespace

std::string_view to_string(Stage stage) noexcept {
  const auto index = static_cast<std::size_t>(stage);
  return index < kNames.size() ? kNames[index] : std::string_view("unknown");
}

std::optional<Stage> parse_stage(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<Stage>(i);
  }
  return std::nullopt;
}

}  // namespace inferscope::timeline
