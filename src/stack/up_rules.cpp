// File: up_rules.cpp
#include "stack/up_rules.h"

#include <inferscope/metrics/exposition_parser.h>

#include "dialect/detect.h"
#include "dialect/dialect.h"
#include "stack/blocking_http.h"
#include "stack/rules/rules_generator.h"
#include "stack/rules/stack_rules_config.h"

namespace inferscope::stack {

Result<std::string> detect_target_dialect(const TargetConfig& target) {
  auto reply = blocking_http_request("GET", target.url, {}, {}, std::chrono::seconds(3));
  if (!reply) return reply.error();
  if (reply->status != 200) {
    return make_error("cannot scrape " + target.url + ": HTTP " + std::to_string(reply->status));
  }
  auto parsed = metrics::parse_exposition(reply->body, metrics::ExpositionTextFormat::kPrometheus004);
  if (!parsed) return make_error("cannot parse the exposition of " + target.url + ": " + parsed.error().message);
  const dialect::Detection detection = dialect::detect_dialects(*parsed);
  if (!detection.primary) return make_error("no known dialect in " + target.url + " (" + detection.evidence + ")");
  return std::string(dialect::to_string(*detection.primary));
}

Result<UpRules> make_up_rules(StackConfig& config) {
  UpRules rules;
  for (TargetConfig& target : config.targets) {
    if (target.kind == "auto") {
      auto detected = detect_target_dialect(target);
      if (detected) {
        target.kind = *detected;
      } else {
        rules.warnings.push_back("inferscope up: target " + target.name + ": dialect not detected, only generic "
                                 "alerts apply until a restart of up finds it: " + detected.error().message);
      }
    }
    rules.dialects[target.name] = target.kind;
  }
  for (const auto& [name, duration] : config.alert_for) {
    bool known = name == rules::kWatchdog || name == rules::kNotificationsFailing;
    for (const char* alert : rules::kTargetAlerts) known = known || name == alert;
    if (!known) {
      std::string list;
      for (const char* alert : rules::kTargetAlerts) list += (list.empty() ? "" : ", ") + std::string(alert);
      return make_error("key 'alerts.for." + name + "': unknown alert (known: " + list + ", " +
                        rules::kNotificationsFailing + ")");
    }
  }
  auto generated = rules::generate_rules(rules::rules_config_from(config));
  if (!generated) return make_error("cannot generate the alert rules: " + generated.error().message);
  for (rules::RuleFile& file : generated->files) rules.files.push_back({std::move(file.name), std::move(file.text)});
  for (const auto& [job, lacking] : generated->lacking) {
    for (const rules::LackingAlert& alert : lacking) rules.missing_alerts[job].push_back(alert.alert + " (" + alert.reason + ")");
  }
  return rules;
}

}  // namespace inferscope::stack
