// File: stack_config.h
// StackConfig is everything `inferscope up` needs to generate and run its stack: scrape targets
// with their kind, intervals, retention, SLO thresholds, alert `for` overrides, the relay's
// notification channels (secrets only by env var or file name), ports, state dir, scale-out mode
// and binary paths.
// Example: Result<StackConfig> c = load_stack_config("deploy/inferscope.yaml");
// Plain value types; the loaders are pure apart from reading the file. Errors name
// file:line:column and the key ("inferscope.yaml:7:5: key 'kind': ...").
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/common/result.h>

#include "alerts/slo_thresholds.h"
#include "config/report_schedule.h"
#include "config/target_config.h"
#include "config/web_config.h"
#include "relay/relay_config.h"

namespace inferscope::config {

// BinaryPaths are the programs `up` runs; defaults are Debian 12's.
struct BinaryPaths {
  std::string prometheus = "/usr/bin/prometheus";
  std::string alertmanager = "/usr/bin/prometheus-alertmanager";
  std::string promtool = "/usr/bin/promtool";
  std::string node_exporter = "/usr/bin/prometheus-node-exporter";
  std::string redis_exporter = "/usr/bin/prometheus-redis-exporter";  // one per redis target
};

// AlertmanagerTiming is the route's grouping timing; fast defaults suit one small cluster.
struct AlertmanagerTiming {
  std::chrono::milliseconds group_wait{std::chrono::seconds(5)};
  std::chrono::milliseconds group_interval{std::chrono::seconds(30)};
  std::chrono::milliseconds repeat_interval{std::chrono::hours(4)};
};

// TracesConfig bounds up's trace store (traces: in the YAML): per job, model and 5-minute window
// the `slowest_per_window` slowest traces and every failed one, for `retention`, in `max_mb`.
struct TracesConfig {
  double max_mb = 256;
  std::chrono::milliseconds retention{std::chrono::hours(24)};
  int slowest_per_window = 100;
};

// StackConfig is the whole configuration after the YAML file and the flags are merged.
struct StackConfig {
  std::vector<TargetConfig> targets;
  std::vector<QueueTargetConfig> queue_targets;  // redis:// targets (kind redis)
  std::chrono::milliseconds scrape_interval{std::chrono::seconds(5)};
  std::optional<std::chrono::milliseconds> evaluation_interval;  // unset = scrape_interval
  std::chrono::milliseconds retention{std::chrono::hours(24 * 15)};
  alerts::SloThresholds slo;  // `slo:`; the rules generator reads the same struct
  std::map<std::string, std::chrono::milliseconds> alert_for;  // alert name -> `for`
  // relay: channels (secrets only as env var or file names), watchdog timeout; database_path is
  // filled from state_dir when up starts.
  relay::RelayConfig relay;
  AlertmanagerTiming alertmanager_timing;
  // alerts.throughput_baseline_offset ("same request rate as <offset> ago"; unset = the rules'
  // default, 1h) and alerts.notification_window (relay failures looked back; unset = 15m).
  std::optional<std::chrono::milliseconds> throughput_baseline_offset;
  std::optional<std::chrono::milliseconds> notification_window;
  // alerts.feature_baseline_offset (prefix-cache hit rate and draft acceptance "against their own
  // value <offset> ago"; unset = the rules' default, 24h).
  std::optional<std::chrono::milliseconds> feature_baseline_offset;
  // drill: {enabled: true}: up runs the fire drill's robot as relay channel "drill" and answers
  // GET/POST /api/drill for `inferscope drill` (off by default).
  bool drill_enabled = false;
  TracesConfig traces;  // traces: {max_mb, retention, slowest_per_window}
  // report: {daily_at, channels, timezone}: the daily report, queued to the relay (unset = none).
  std::optional<ReportSchedule> report;
  std::uint16_t port = 9300;             // up's own HTTP API (0 = ephemeral)
  std::uint16_t prometheus_port = 9090;  // 0 = ephemeral
  std::uint16_t alertmanager_port = 9093;
  std::filesystem::path state_dir = "./inferscope-state";
  bool node_exporter = false;
  std::vector<std::string> remote_write;  // remote_write URLs
  bool agent = false;                     // Prometheus agent mode: scrape and forward only
  std::string external_prometheus;        // --prometheus URL: start no Prometheus, query this
  // external_urls: {prometheus, alertmanager}: how people reach the children up starts (e.g.
  // through a reverse proxy); passed as --web.external-url, so links in notifications use it.
  // Empty: http://127.0.0.1:PORT (a port-0 child's links are re-based by the webhook route).
  std::string prometheus_external_url;
  std::string alertmanager_external_url;
  BinaryPaths binaries;
  // web: TLS, users and tokens of up's public server (`up --listen`); unset = no such section.
  std::optional<WebConfig> web;

  // effective_evaluation_interval returns evaluation_interval or, unset, scrape_interval.
  std::chrono::milliseconds effective_evaluation_interval() const {
    return evaluation_interval.value_or(scrape_interval);
  }
};

// load_stack_config reads a YAML config file into a StackConfig with the defaults above for
// every key it does not set. Unknown keys, wrong types and bad values fail with
// "<file>:<line>:<col>: key '<key>': <why>". Does not check that secrets exist (see
// check_secrets_present).
Result<StackConfig> load_stack_config(const std::filesystem::path& file);

// parse_stack_config is load_stack_config over text already in memory; `file` names it in errors.
Result<StackConfig> parse_stack_config(std::string_view yaml_text, std::string_view file);

// validate_stack_config checks the merged result (after flags): at least one target unless
// external Prometheus, unique target names, scrape_interval <= evaluation constraints, agent mode
// not combined with --prometheus, ports distinct when fixed.
Result<void> validate_stack_config(const StackConfig& config);

}  // namespace inferscope::config
