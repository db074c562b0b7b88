// Fuzzes the fault parser of `inferscope serve` (POST /admin/faults, --faults): any JSON object
// goes through parse_faults on top of no fault and on top of every fault.
// Invariants: never crashes or throws; an error starts "cannot parse faults from request: "; an
// accepted FaultSet round-trips exactly through to_json; hide_metrics names are metric names.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "serve/engine/faults.h"

namespace {

using inferscope::serve::FaultSet;
using inferscope::serve::parse_faults;
using inferscope::serve::to_json;

void check(const nlohmann::json& body, const FaultSet& base) {
  auto faults = parse_faults(body, base);
  if (!faults) {
    if (faults.error().message.rfind("cannot parse faults from request: ", 0) != 0) std::abort();
    return;
  }
  auto again = parse_faults(to_json(*faults), FaultSet{});
  if (!again || !(*again == *faults)) std::abort();
  for (const std::string& name : faults->hide_metrics) {
    if (name.empty() || name.find_first_of(" {}\"\n") != std::string::npos) std::abort();
  }
  if (faults->gpu_memory_other < 0 || faults->gpu_memory_other > 1) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto body = nlohmann::json::parse(text, nullptr, false);
  if (body.is_discarded()) return 0;
  check(body, FaultSet{});
  static const FaultSet every = [] {
    auto f = parse_faults(nlohmann::json::parse(R"({"decode_slowdown": 3, "kv_capacity": 0.5,
        "stall": {"for_ms": 500, "every_s": 10}, "dependency": {"name": "db", "mean_ms": 30, "p99_ms": 90},
        "error_rate": 0.1, "max_num_seqs": 2, "metrics_down": true, "hide_metrics": ["a_seconds"],
        "gpu_memory_other": 0.5})"), FaultSet{});
    if (!f) std::abort();
    return *f;
  }();
  check(body, every);
  return 0;
}
