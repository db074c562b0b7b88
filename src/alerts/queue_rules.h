// File: alerts/queue_rules.h
// Builds the rule group of one queue target (a redis target of up): kTargetDown over the
// collector's inferscope_queue_up, and the queue alerts on src/queue's inferscope_queue_* series.
// Example: QueueRules r = build_queue_rules("jobs", config); r.group_text, r.lacking.
// Pure; thread-safe. Internal to the rules generator (rules_generator.h is the public entry).
#pragma once

#include <string>
#include <vector>

#include "alerts/rules_generator.h"

namespace inferscope::alerts {

// QueueRules is one queue target's rendered group and the alerts it cannot have.
struct QueueRules {
  std::string group_text;
  std::vector<LackingAlert> lacking;
};

// build_queue_rules renders the group "inferscope-queue-<job>" under `config` (its slo.queue_*
// thresholds, rate window as the look-back of "no job started" and of the growth, alert_for).
QueueRules build_queue_rules(const std::string& job, const RulesConfig& config);

}  // namespace inferscope::alerts
