// File: stack_config_validation.cpp
// validate_stack_config: the checks that need the whole configuration, after the YAML file and
// the flags are merged (targets present, names unique and not reserved, ports distinct, URLs).
#include <set>

#include "alerts/rules_generator.h"
#include "config/detail/yaml_reader.h"
#include "config/stack_config.h"

namespace inferscope::config {

using detail::printable_ascii;

Result<void> validate_stack_config(const StackConfig& config) {
  if (config.targets.empty() && config.queue_targets.empty() && config.external_prometheus.empty() &&
      !config.node_exporter) {
    return make_error("no targets: give --target [NAME=]URL or a config file with 'targets'");
  }
  std::set<std::string> names;
  std::vector<std::string> all_names;
  for (const TargetConfig& t : config.targets) all_names.push_back(t.name);
  for (const QueueTargetConfig& t : config.queue_targets) all_names.push_back(t.name);
  for (const std::string& name : all_names) {
    if (!names.insert(name).second) {
      return make_error("target name \"" + name + "\" is used twice: give each target its own NAME=");
    }
  }
  for (const char* reserved : {"inferscope-up", "prometheus", "alertmanager", "node"}) {
    if (names.contains(reserved)) {
      return make_error("target name \"" + std::string(reserved) + "\" is reserved for up's own jobs: rename it");
    }
  }
  for (const QueueTargetConfig& t : config.queue_targets) {
    if (names.contains(alerts::redis_exporter_job(t.name))) {
      return make_error("target name \"" + alerts::redis_exporter_job(t.name) + "\" is the job of the redis exporter of target " +
                        t.name + ": rename it");
    }
  }
  if (config.agent && !config.external_prometheus.empty()) {
    return make_error("--agent and --prometheus exclude each other: --agent runs a Prometheus in agent mode, "
                      "--prometheus starts none");
  }
  if (config.agent && config.remote_write.empty()) {
    return make_error("--agent needs --remote-write URL: an agent keeps no queryable data and evaluates no rules");
  }
  const std::uint16_t ports[] = {config.port, config.prometheus_port, config.alertmanager_port};
  for (int i = 0; i < 3; ++i) {
    for (int j = i + 1; j < 3; ++j) {
      if (ports[i] != 0 && ports[i] == ports[j]) {
        return make_error("--port, --prometheus-port and --alertmanager-port must differ (" +
                          std::to_string(ports[i]) + " is given twice)");
      }
    }
  }
  for (const std::string& url : config.remote_write) {
    if ((!url.starts_with("http://") && !url.starts_with("https://")) || !printable_ascii(url)) {
      return make_error("bad --remote-write URL \"" + url + "\": expected http:// or https://");
    }
  }
  if (!config.external_prometheus.empty() &&
      ((!config.external_prometheus.starts_with("http://") && !config.external_prometheus.starts_with("https://")) ||
       !printable_ascii(config.external_prometheus))) {
    return make_error("bad --prometheus URL \"" + config.external_prometheus + "\": expected http:// or https://");
  }
  return {};
}

}  // namespace inferscope::config
