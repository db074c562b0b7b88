#include "up/stack_rules_config.h"

#include <algorithm>

namespace inferscope::up {

std::chrono::milliseconds rate_window_for(std::chrono::milliseconds scrape_interval) {
  using namespace std::chrono_literals;
  return std::clamp<std::chrono::milliseconds>(scrape_interval * 12, 10s, 5min);
}

alerts::RulesConfig rules_config_from(const config::StackConfig& config) {
  alerts::RulesConfig out;
  for (const config::TargetConfig& target : config.targets) {
    if (target.custom) {
      out.targets.push_back({target.name, dialect::DialectId::kCustom, target.custom});
    } else {
      out.targets.push_back({target.name, dialect::parse_dialect(target.kind)});
    }
  }
  for (const config::QueueTargetConfig& target : config.queue_targets) out.queue_jobs.push_back(target.name);
  out.slo = config.slo;
  out.alert_for = config.alert_for;
  out.evaluation_interval = config.evaluation_interval;
  out.rate_window = rate_window_for(config.scrape_interval);
  if (config.throughput_baseline_offset) out.throughput_baseline_offset = *config.throughput_baseline_offset;
  if (config.feature_baseline_offset) out.feature_baseline_offset = *config.feature_baseline_offset;
  if (config.notification_window) out.notification_window = *config.notification_window;
  return out;
}

}  // namespace inferscope::up
