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
#include "dialect/custom_dialect.h"
#include "relay/relay_config.h"

namespace inferscope::config {

// kTargetKinds lists the accepted target kinds; "auto" detects the dialect while up runs (and
// follows it when the target's metric names change); any other kind skips detection.
inline constexpr std::string_view kTargetKinds[] = {"inferscope", "vllm",    "llamacpp", "tgi",  "triton",
                                                    "sglang",     "litellm", "dcgm",     "node", "auto"};

// kCustomKind is the config-file-only kind of a target whose roles map to its own metric names
// (`roles:`, optional `model_label:`); not a --target/--kind value, since it needs the mapping.
inline constexpr std::string_view kCustomKind = "custom";

// TargetConfig is one scrape target. url is the full /metrics URL as given.
struct TargetConfig {
  std::string name;            // Prometheus job name; from NAME=URL, the config, or host_port
  std::string url;             // http(s)://host:port/path
  std::string kind = "auto";   // one of kTargetKinds, or kCustomKind
  std::shared_ptr<const dialect::CustomDialect> custom;  // kind custom: its validated role mapping
  std::string scheme;          // "http" or "https"
  std::string host_port;       // "127.0.0.1:8000"
  std::string metrics_path;    // "/metrics" when the URL has no path
};

// kQueueSystems are the queue systems a redis target's `queues.systems` may name.
inline constexpr std::string_view kQueueSystems[] = {"rq", "celery", "streams", "list"};

// QueueTargetConfig is one redis target (`--target NAME=redis://HOST:PORT/DB`, or a config target
// whose url is redis://): up runs a queue collector against it (src/queue) and scrapes its series
// from its own API at /queues/NAME/metrics under job NAME. The password is never in the URL: it
// comes from `password_file:` or `password_env:`.
struct QueueTargetConfig {
  std::string name;                 // Prometheus job name; from NAME=, the config, or host_port
  std::string url;                  // redis://HOST:PORT/DB (no password)
  relay::SecretSource password{};   // empty = no AUTH
  // systems: default rq and celery (discovered), plus streams/list when streams/lists are named.
  std::vector<std::string> systems{"rq", "celery"};
  std::vector<std::pair<std::string, std::string>> streams{};  // {key, consumer group}
  std::vector<std::string> lists{};                              // list keys or glob patterns
  std::optional<std::chrono::milliseconds> interval{};          // unset = scrape_interval
};

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

  // effective_evaluation_interval returns evaluation_interval or, unset, scrape_interval.
  std::chrono::milliseconds effective_evaluation_interval() const {
    return evaluation_interval.value_or(scrape_interval);
  }
};

// parse_target_url parses "[NAME=][KIND@]URL" (the --target form). URL must be http:// or https://
// with a host and port; a missing path becomes /metrics; a missing NAME becomes "host:port"-derived;
// KIND (one of kTargetKinds but "auto") fixes the kind, else it stays "auto" (detected).
Result<TargetConfig> parse_target_url(std::string_view text);

// parse_queue_target_url parses "[NAME=]redis://HOST[:PORT][/DB]" (the --target form of a redis
// target; the scheme selects the kind). A password in the URL is refused (it would sit on the
// command line and in process listings): use password_file: or password_env: in the config.
Result<QueueTargetConfig> parse_queue_target_url(std::string_view text);

// is_queue_target_url tells whether a --target text names a redis target ("[NAME=]redis://...").
bool is_queue_target_url(std::string_view text);

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
