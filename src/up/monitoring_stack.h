// File: monitoring_stack.h
// MonitoringStack is the process side of `inferscope up`: it checks the generated files with
// promtool/amtool, then starts Alertmanager, node-exporter (optional), one prometheus-redis-exporter
// per redis target and Prometheus (or agent) as supervised children on 127.0.0.1 and keeps them
// running. Example:
//   auto s = MonitoringStack::start(config, api_port, rule_files, registry, events);
//   std::cout << (*s)->prometheus_url();  ...  (*s)->stop();
// Thread-safe accessors; start/stop from one thread. Never leaves a child running: a failed start
// stops what it started, and every child dies with up (see child_process.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <inferscope/common/result.h>
#include <inferscope/metrics/registry.h>

#include "config/stack_config.h"
#include "up/generated_files.h"
#include "up/supervisor.h"

namespace inferscope::up {

// CheckReport is what check_generated_files found: the files and each tool's verdict.
struct CheckReport {
  GeneratedFiles files;
  std::vector<std::string> tool_output;  // one entry per tool run ("promtool check config: SUCCESS ...")
};

// check_generated_files writes the files for `ports` (generate-only; `up --check` uses the
// configured ports) and runs `promtool check config` (also checks the rule files), `promtool
// check rules` on each rule file and `amtool check-config` when amtool is installed. Fails with the
// tool's first error line.
Result<CheckReport> check_generated_files(const config::StackConfig& config, const StackPorts& ports,
                                          const std::vector<RuleFile>& rule_files);

// RedisExporterTarget is one redis target's prometheus-redis-exporter: child
// "redis-exporter-<name>", scraped as job alerts::redis_exporter_job(name). `address` is
// redis://HOST:PORT/DB without a password; `password` reaches the exporter only through its
// environment (REDIS_PASSWORD), never its command line or a log.
struct RedisExporterTarget {
  std::string name;
  std::string address;
  std::string password;
};

class MonitoringStack {
 public:
  // start writes and checks the files, then starts the children (Alertmanager, node-exporter, a
  // redis exporter per `redis_exporters` entry, Prometheus; none of Prometheus/Alertmanager/redis
  // exporters with config.external_prometheus, which would not scrape them; no Alertmanager in
  // agent mode) and waits until each is ready. `api_port` is up's own HTTP port
  // (webhook target and self-scrape). Data stays in <state_dir>/prometheus and
  // <state_dir>/alertmanager across restarts. `events` gets each restart line.
  static Result<std::unique_ptr<MonitoringStack>> start(const config::StackConfig& config, std::uint16_t api_port,
                                                        const std::vector<RuleFile>& rule_files,
                                                        metrics::Registry& registry, SupervisorEvents events,
                                                        const std::vector<RedisExporterTarget>& redis_exporters = {});
  ~MonitoringStack();
  MonitoringStack(const MonitoringStack&) = delete;
  MonitoringStack& operator=(const MonitoringStack&) = delete;

  // prometheus_url is the query API base ("http://127.0.0.1:P", or the --prometheus URL).
  const std::string& prometheus_url() const { return prometheus_url_; }
  // alertmanager_url is "http://127.0.0.1:A", or empty when none runs.
  const std::string& alertmanager_url() const { return alertmanager_url_; }
  const GeneratedFiles& files() const { return files_; }
  Supervisor& supervisor() { return supervisor_; }

  // apply_rules rewrites prometheus.yml (targets' kinds) and the rule files for `config` and
  // makes the running Prometheus load them (POST /-/reload); a restarted Prometheus reads them
  // too. Fails with Prometheus' answer when it refuses them (it keeps the old ones then). Call
  // from one thread at a time, only after start succeeded with its own Prometheus.
  Result<void> apply_rules(const config::StackConfig& config, const std::vector<RuleFile>& rule_files);

  // stop stops every child (Prometheus first). Idempotent.
  void stop();

 private:
  MonitoringStack(metrics::Registry& registry, SupervisorEvents events);

  Supervisor supervisor_;
  GeneratedFiles files_;
  StackPorts ports_;
  std::string prometheus_url_;
  std::string alertmanager_url_;
};

}  // namespace inferscope::up
