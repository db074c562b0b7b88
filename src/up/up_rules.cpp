// File: up_rules.cpp
#include "up/up_rules.h"

#include <inferscope/metrics/exposition_parser.h>

#include "alerts/rules_generator.h"
#include "dialect/detect.h"
#include "dialect/dialect.h"
#include "net/blocking_client.h"
#include "up/stack_rules_config.h"

namespace inferscope::up {
namespace {

int count_alerts(const std::string& rule_file_text) {
  int n = 0;
  for (std::size_t at = rule_file_text.find("- alert: "); at != std::string::npos;
       at = rule_file_text.find("- alert: ", at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace

TargetProbe probe_target(const config::TargetConfig& target, const std::string& expected_kind) {
  TargetProbe probe;
  auto reply = net::blocking_http_request("GET", target.url, {}, {}, std::chrono::seconds(3));
  if (!reply) {
    probe.error = reply.error().message;
    return probe;
  }
  if (reply->status != 200) {
    probe.error = "cannot scrape " + target.url + ": HTTP " + std::to_string(reply->status);
    return probe;
  }
  auto parsed = metrics::parse_exposition(reply->body, metrics::ExpositionTextFormat::kPrometheus004);
  if (!parsed) {
    probe.error = "cannot parse the exposition of " + target.url + ": " + parsed.error().message;
    return probe;
  }
  probe.answered = true;
  for (const auto& family : parsed->families) probe.families.insert(family.name);
  const dialect::Detection detection = dialect::detect_dialects(*parsed);
  if (detection.primary) {
    probe.kind = std::string(dialect::to_string(*detection.primary));
  } else {
    probe.error = "no known dialect in " + target.url + " (" + detection.evidence + ")";
  }
  if (const auto expected = dialect::parse_dialect(expected_kind)) {
    probe.checked_kind = expected_kind;
    for (const dialect::MissingMetric& m : dialect::check_coverage(*parsed, *expected).missing) {
      probe.expected_missing.push_back(m.metric);
    }
  }
  return probe;
}

Result<UpRules> make_up_rules(config::StackConfig& config) {
  std::vector<std::string> warnings;
  std::map<std::string, TargetProbe> probes;
  for (config::TargetConfig& target : config.targets) {
    if (target.kind != config::kAutoKind) continue;
    TargetProbe probe = probe_target(target);
    if (probe.kind) {
      target.kind = *probe.kind;
    } else {
      warnings.push_back("inferscope up: target " + target.name + ": kind unknown yet, only generic alerts apply "
                         "until it answers with a known dialect (up keeps trying while it runs): " + probe.error);
    }
    probes[target.name] = std::move(probe);
  }
  auto rules = generate_up_rules(config);
  if (rules) {
    rules->warnings = std::move(warnings);
    rules->probes = std::move(probes);
  }
  return rules;
}

Result<UpRules> generate_up_rules(const config::StackConfig& config) {
  UpRules rules;
  for (const config::TargetConfig& target : config.targets) rules.dialects[target.name] = target.kind;
  for (const config::QueueTargetConfig& target : config.queue_targets) rules.dialects[target.name] = std::string(config::kRedisKind);
  for (const auto& [name, duration] : config.alert_for) {
    bool known = name == alerts::kWatchdog || name == alerts::kNotificationsFailing;
    for (const char* alert : alerts::kTargetAlerts) known = known || name == alert;
    for (const char* alert : alerts::kQueueAlerts) known = known || name == alert;
    if (!known) {
      std::string list;
      for (const char* alert : alerts::kTargetAlerts) list += (list.empty() ? "" : ", ") + std::string(alert);
      for (const char* alert : alerts::kQueueAlerts) list += ", " + std::string(alert);
      return make_error("key 'alerts.for." + name + "': unknown alert (known: " + list + ", " +
                        alerts::kNotificationsFailing + ")");
    }
  }
  auto generated = alerts::generate_rules(rules_config_from(config));
  if (!generated) return make_error("cannot generate the alert rules: " + generated.error().message);
  // The generator writes the common file first, then one file per target in config order.
  for (std::size_t i = 0; i < config.targets.size() && i + 1 < generated->files.size(); ++i) {
    rules.alert_counts[config.targets[i].name] = count_alerts(generated->files[i + 1].text);
  }
  // ... then one file per queue target.
  for (std::size_t i = 0; i < config.queue_targets.size(); ++i) {
    const std::size_t file = 1 + config.targets.size() + i;
    if (file < generated->files.size()) rules.alert_counts[config.queue_targets[i].name] = count_alerts(generated->files[file].text);
  }
  for (alerts::RuleFile& file : generated->files) rules.files.push_back({std::move(file.name), std::move(file.text)});
  for (const auto& [job, lacking] : generated->lacking) {
    for (const alerts::LackingAlert& alert : lacking) rules.missing_alerts[job].push_back(alert.alert + " (" + alert.reason + ")");
  }
  return rules;
}

}  // namespace inferscope::up
