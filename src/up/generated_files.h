// File: generated_files.h
// Renders and writes the files `inferscope up` hands to its children: prometheus.yml,
// alertmanager.yml and the rule files, all under <state_dir>/config/. Example:
//   StackPorts ports{.api = 9300, .alertmanager = 9093};
//   Result<GeneratedFiles> files = write_generated_files(config, ports, rule_files);
// Pure rendering plus plain file writes; thread-compatible. Never writes a secret: channel
// secrets stay in the relay, Alertmanager only knows up's own webhook URL.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <inferscope/common/result.h>

#include "alerts/rules_generator.h"
#include "config/stack_config.h"

namespace inferscope::up {

// kWebhookPath is where up's HTTP API receives Alertmanager's v4 webhook (the relay's handler).
inline constexpr const char* kWebhookPath = "/api/alertmanager/webhook";

// StackPorts are the loopback ports the generated files point at (0 = not running / unknown).
struct StackPorts {
  std::uint16_t api = 0;            // up's own HTTP API (webhook, /metrics)
  std::uint16_t alertmanager = 0;
  std::uint16_t prometheus = 0;     // self-scrape once known
  std::uint16_t node_exporter = 0;
  std::vector<std::pair<std::string, std::uint16_t>> redis_exporters = {};  // redis target name -> exporter port
};

// RuleFile is one generated rule file (name without folder, YAML text), as the rules generator
// makes it.
using RuleFile = alerts::RuleFile;

// GeneratedFiles are the absolute paths written.
struct GeneratedFiles {
  std::filesystem::path prometheus_yml;
  std::filesystem::path alertmanager_yml;
  std::vector<std::filesystem::path> rule_files;
};

// kMaxExemplars is the size of Prometheus' exemplar ring (storage.exemplars.max_exemplars).
inline constexpr int kMaxExemplars = 100000;

// render_prometheus_yml renders prometheus.yml: global intervals, the exemplar ring, alerting to
// 127.0.0.1:<am> and rule_files (those three not in agent mode), one job per target with its kind as the
// `inferscope_kind` label, up's own /metrics, Alertmanager's, Prometheus' own, node-exporter's and
// each redis target's exporter (job "<target>-redis", kind "redis-exporter") when their ports are
// known, and remote_write blocks.
std::string render_prometheus_yml(const config::StackConfig& config, const StackPorts& ports,
                                  const std::vector<std::string>& rule_file_names);

// render_alertmanager_yml renders alertmanager.yml: one route grouped by alertname and target
// (job, model) to a webhook receiver at up's API, send_resolved on.
std::string render_alertmanager_yml(const config::StackConfig& config, const StackPorts& ports);

// write_generated_files renders all files and writes them atomically (temp file + rename) into
// <state_dir>/config/ and <state_dir>/config/rules/ (stale rule files there are removed). Fails
// with "cannot write <path>: <cause>".
Result<GeneratedFiles> write_generated_files(const config::StackConfig& config, const StackPorts& ports,
                                             const std::vector<RuleFile>& rule_files);

}  // namespace inferscope::up
