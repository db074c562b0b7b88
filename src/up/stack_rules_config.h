// File: up/stack_rules_config.h
// Maps `inferscope up`'s config (config::StackConfig) onto the rules generator's RulesConfig
// (src/alerts), so up needs one call:
//   auto rules = alerts::generate_rules(rules_config_from(config));
// Pure; thread-safe. Target kinds that name no dialect ("auto" left undetected) get dialect
// nullopt: only the generic alerts, the rest listed as lacking.
#pragma once

#include "alerts/rules_generator.h"
#include "config/stack_config.h"

namespace inferscope::up {

// rate_window_for picks the rate() range of the recording rules from the scrape interval: 12
// scrapes (a rate needs several samples and should not jump on one late scrape), at least 10 s,
// at most 5 m. 5 s scrapes (up's default) -> 1m; 1 s (tests, drill) -> 12s; 30 s -> 5m.
std::chrono::milliseconds rate_window_for(std::chrono::milliseconds scrape_interval);

// rules_config_from copies targets (job = target name, kind -> dialect), the SLO thresholds,
// per-alert `for` overrides, the evaluation interval (when set) and rate_window_for(scrape).
alerts::RulesConfig rules_config_from(const config::StackConfig& config);

}  // namespace inferscope::up
