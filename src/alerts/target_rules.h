// File: alerts/target_rules.h
// Builds the rule group of one scrape target: uniform recording rules from its dialect's own
// names, then the alerts its dialect can support, and the list of those it cannot.
// Example: TargetRules r = build_target_rules(target, config); r.group_text, r.lacking.
// Pure; thread-safe. Internal to the rules generator (rules_generator.h is the public entry).
#pragma once

#include <string>
#include <vector>

#include "alerts/rules_generator.h"

namespace inferscope::alerts {

// TargetRules is one target's rendered group and what it lacks.
struct TargetRules {
  std::string group_text;             // YAML of one group, to sit under `groups:`
  std::vector<LackingAlert> lacking;  // alerts this target cannot have, with the reason
};

// build_target_rules renders the group "inferscope-target-<job>" for `target` under `config`.
TargetRules build_target_rules(const RulesTarget& target, const RulesConfig& config);

// alert_for returns config.alert_for[name] when set, else default_for(name).
std::chrono::milliseconds alert_for(const RulesConfig& config, const std::string& name);

}  // namespace inferscope::alerts
