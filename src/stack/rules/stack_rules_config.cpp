#include "stack/rules/stack_rules_config.h"

#include <algorithm>

namespace inferscope::rules {

std::chrono::milliseconds rate_window_for(std::chrono::milliseconds scrape_interval) {
  using namespace std::chrono_literals;
  return std::clamp<std::chrono::milliseconds>(scrape_interval * 12, 10s, 5min);
}

RulesConfig rules_config_from(const stack::StackConfig& config) {
  RulesConfig out;
  for (const stack::TargetConfig& target : config.targets) {
    out.targets.push_back({target.name, dialect::parse_dialect(target.kind)});
  }
  const stack::SloConfig& slo = config.slo;
  out.slo.e2e_p99_seconds = slo.e2e_p99_seconds;
  out.slo.e2e_p95_seconds = slo.e2e_p95_seconds;
  out.slo.ttft_p95_seconds = slo.ttft_p95_seconds;
  out.slo.tpot_p95_seconds = slo.tpot_p95_seconds;
  out.slo.error_ratio = slo.error_ratio;
  out.slo.waiting_requests = slo.waiting_requests;
  out.slo.kv_cache_usage = slo.kv_cache_usage;
  out.slo.gpu_memory_ratio = slo.gpu_memory_ratio;
  out.alert_for = config.alert_for;
  out.evaluation_interval = config.evaluation_interval;
  out.rate_window = rate_window_for(config.scrape_interval);
  if (config.throughput_baseline_offset) out.throughput_baseline_offset = *config.throughput_baseline_offset;
  if (config.notification_window) out.notification_window = *config.notification_window;
  return out;
}

}  // namespace inferscope::rules
