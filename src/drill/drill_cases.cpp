// The faults are sized far past the default SLOs (docs/serve-faults.md) so that a drill against
// an `up` with its default thresholds still crosses them; `for` durations are up's config.
#include "drill/drill_cases.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "alerts/rules_generator.h"
#include "dialect/dialect.h"

namespace inferscope::drill {

std::string_view how_name(DrillHow how) {
  switch (how) {
    case DrillHow::kFault: return "fault";
    case DrillHow::kLoad: return "load";
    case DrillHow::kRefusingChannel: return "refusing channel";
  }
  return "fault";
}

std::vector<std::string> hidden_latency_families() {
  std::vector<std::string> out;
  for (const dialect::MetricBinding& b : dialect::dialect(dialect::DialectId::kInferscope).bindings) {
    if (!dialect::is_latency_role(b.role) || b.presence == dialect::Presence::kOptional ||
        b.presence == dialect::Presence::kFeature) {
      continue;
    }
    const std::string name(b.metric);
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

const std::vector<DrillCase>& drill_cases() {
  static const std::vector<DrillCase> kCases = [] {
    const nlohmann::json hide = {{"clear", true}, {"hide_metrics", hidden_latency_families()}};
    return std::vector<DrillCase>{
        {"output_throughput", DrillHow::kLoad, "", {alerts::kThroughputHalved},
         "after a steady baseline, each request gets 12 instead of 40 output tokens at the same request rate"},
        {"error_rate", DrillHow::kFault, R"({"clear": true, "error_rate": 0.5})", {alerts::kErrorRatioHigh},
         "half of the requests answer 500"},
        {"dependency", DrillHow::kFault, R"({"clear": true, "dependency": {"name": "drill", "mean_ms": 15000}})",
         {alerts::kTtftP95OverSlo, alerts::kE2eP95OverSlo, alerts::kE2eP99OverSlo},
         "every request first waits ~15 s on a dependency: TTFT and e2e grow past their SLOs"},
        {"decode_slowdown", DrillHow::kFault, R"({"clear": true, "decode_slowdown": 50})", {alerts::kTpotP95OverSlo},
         "each decode step costs 50x: TPOT grows past its SLO"},
        {"max_num_seqs", DrillHow::kFault, R"({"clear": true, "max_num_seqs": 1, "decode_slowdown": 20})",
         {alerts::kRequestsWaiting}, "one sequence at a time, slowly: requests pile up waiting"},
        {"kv_capacity", DrillHow::kFault, R"({"clear": true, "kv_capacity": 0.0005, "decode_slowdown": 10})",
         {alerts::kKvCacheFull, alerts::kPreemptionsRising},
         "a few KV blocks left and slow decoding: the cache stays full, growing sequences are preempted"},
        {"metrics_down", DrillHow::kFault, R"({"clear": true, "metrics_down": true})", {alerts::kTargetDown},
         "GET /metrics answers 503: Prometheus' scrape fails (up = 0) while serving goes on"},
        {"latency_absent", DrillHow::kFault, hide.dump(), {alerts::kLatencyMetricsAbsent},
         "the latency families leave /metrics, as after an upgrade that renamed them"},
        {"gpu_memory", DrillHow::kFault, R"({"clear": true, "gpu_memory_other": 0.97})", {alerts::kGpuMemoryHigh},
         "another process takes 97 % of the simulated GPU's memory"},
        {"notifications", DrillHow::kRefusingChannel, R"({"clear": true, "error_rate": 0.5})",
         {alerts::kNotificationsFailing},
         "up's drill robot refuses every message while an error-rate fault makes notifications"},
    };
  }();
  return kCases;
}

std::vector<DrillCase> select_cases(std::string_view only) {
  std::vector<DrillCase> out;
  for (const DrillCase& c : drill_cases()) {
    if (only.empty() || c.name == only) {
      out.push_back(c);
      continue;
    }
    for (const std::string& alert : c.alerts) {
      if (alert == only) out.push_back({c.name, c.how, c.inject_json, {alert}, c.why});
    }
  }
  return out;
}

}  // namespace inferscope::drill
