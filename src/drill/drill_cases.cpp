// The faults are sized far past the default SLOs (docs/serve-faults.md) so that a drill against
// an `up` with its default thresholds still crosses them; `for` durations are up's config.
#include "drill/drill_cases.h"

#include <array>

namespace inferscope::drill {

const std::vector<DrillCase>& drill_cases() {
  static const std::vector<DrillCase> kCases = {
      {"error_rate", R"({"clear": true, "error_rate": 0.5})", {"InferscopeErrorRatioHigh"},
       "half of the requests answer 500"},
      {"dependency", R"({"clear": true, "dependency": {"name": "drill", "mean_ms": 15000}})",
       {"InferscopeTtftP95OverSlo", "InferscopeE2eP95OverSlo", "InferscopeE2eP99OverSlo"},
       "every request first waits ~15 s on a dependency: TTFT and e2e grow past their SLOs"},
      {"decode_slowdown", R"({"clear": true, "decode_slowdown": 50})", {"InferscopeTpotP95OverSlo"},
       "each decode step costs 50x: TPOT grows past its SLO"},
      {"max_num_seqs", R"({"clear": true, "max_num_seqs": 1, "decode_slowdown": 20})",
       {"InferscopeRequestsWaiting"}, "one sequence at a time, slowly: requests pile up waiting"},
      {"kv_capacity", R"({"clear": true, "kv_capacity": 0.0005, "decode_slowdown": 10})",
       {"InferscopeKvCacheFull", "InferscopePreemptionsRising"},
       "a few KV blocks left and slow decoding: the cache stays full, growing sequences are preempted"},
  };
  return kCases;
}

std::span<const NotDrillable> not_drillable() {
  static constexpr std::array<NotDrillable, 5> kSkipped = {{
      {"InferscopeTargetDown", "stopping a target is not possible through its API"},
      {"InferscopeLatencyMetricsAbsent", "a running serve cannot drop its metric families"},
      {"InferscopeOutputThroughputHalved", "needs an hour of baseline at the same request rate"},
      {"InferscopeGpuMemoryHigh", "serve's simulated GPU memory does not follow a fault"},
      {"InferscopeNotificationsFailing", "needs a chat channel that rejects messages"},
  }};
  return kSkipped;
}

std::vector<DrillCase> select_cases(std::string_view only) {
  std::vector<DrillCase> out;
  for (const DrillCase& c : drill_cases()) {
    if (only.empty() || c.name == only) {
      out.push_back(c);
      continue;
    }
    for (std::string_view alert : c.alerts) {
      if (alert == only) out.push_back({c.name, c.inject_json, {alert}, c.why});
    }
  }
  return out;
}

}  // namespace inferscope::drill
