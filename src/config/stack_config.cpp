// File: stack_config.cpp
// YAML → StackConfig: the top-level keys, `slo:` and `alerts:` here; targets, roles,
// notifications and the report in their own files (config/detail/section_readers.h). Every value
// is read through one Reader (config/detail/yaml_reader.h).
#include "config/stack_config.h"

#include <fstream>
#include <sstream>

#include "config/detail/section_readers.h"

namespace inferscope::config {
namespace {

using detail::ConfigError;
using detail::one_line;
using detail::printable_ascii;
using detail::read_notifications;
using detail::read_queue_target;
using detail::read_report;
using detail::read_target;
using detail::Reader;
using detail::yaml_syntax_error;

bool valid_alert_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

void read_slo(const Reader& r, const YAML::Node& node, alerts::SloThresholds& slo) {
  r.expect_keys(node, "slo", {"e2e_p99", "e2e_p95", "ttft_p95", "tpot_p95", "error_ratio", "waiting_requests",
                               "kv_cache_usage", "gpu_memory_ratio", "queue_wait", "queue_depth",
                               "queue_failure_ratio"});
  if (node["e2e_p99"]) slo.e2e_p99_seconds = r.seconds(node["e2e_p99"], "slo.e2e_p99");
  if (node["e2e_p95"]) slo.e2e_p95_seconds = r.seconds(node["e2e_p95"], "slo.e2e_p95");
  if (node["ttft_p95"]) slo.ttft_p95_seconds = r.seconds(node["ttft_p95"], "slo.ttft_p95");
  if (node["tpot_p95"]) slo.tpot_p95_seconds = r.seconds(node["tpot_p95"], "slo.tpot_p95");
  if (node["error_ratio"]) slo.error_ratio = r.number(node["error_ratio"], "slo.error_ratio", 0, 1);
  if (node["waiting_requests"]) slo.waiting_requests = r.number(node["waiting_requests"], "slo.waiting_requests", 0, 1e9);
  if (node["kv_cache_usage"]) slo.kv_cache_usage = r.number(node["kv_cache_usage"], "slo.kv_cache_usage", 0, 1);
  if (node["gpu_memory_ratio"]) slo.gpu_memory_ratio = r.number(node["gpu_memory_ratio"], "slo.gpu_memory_ratio", 0, 1);
  if (node["queue_wait"]) slo.queue_wait_seconds = r.seconds(node["queue_wait"], "slo.queue_wait");
  if (node["queue_depth"]) slo.queue_depth = r.number(node["queue_depth"], "slo.queue_depth", 0, 1e12);
  if (node["queue_failure_ratio"]) {
    slo.queue_failure_ratio = r.number(node["queue_failure_ratio"], "slo.queue_failure_ratio", 0, 1);
  }
}

void read_top(const Reader& r, const YAML::Node& root, StackConfig& c) {
  r.expect_keys(root, "", {"targets", "scrape_interval", "evaluation_interval", "retention", "slo", "alerts",
                           "alertmanager", "notifications", "port", "prometheus_port", "alertmanager_port",
                           "state_dir", "node_exporter", "remote_write", "agent", "prometheus", "binaries", "report",
                           "drill", "external_urls", "traces", "web"});
  if (root["scrape_interval"]) c.scrape_interval = r.duration(root["scrape_interval"], "scrape_interval");
  if (root["evaluation_interval"]) c.evaluation_interval = r.duration(root["evaluation_interval"], "evaluation_interval");
  if (root["retention"]) c.retention = r.duration(root["retention"], "retention");
  if (root["port"]) c.port = r.port(root["port"], "port");
  if (root["prometheus_port"]) c.prometheus_port = r.port(root["prometheus_port"], "prometheus_port");
  if (root["alertmanager_port"]) c.alertmanager_port = r.port(root["alertmanager_port"], "alertmanager_port");
  if (root["state_dir"]) c.state_dir = r.non_empty(root["state_dir"], "state_dir");
  if (root["node_exporter"]) c.node_exporter = r.boolean(root["node_exporter"], "node_exporter");
  if (root["agent"]) c.agent = r.boolean(root["agent"], "agent");
  if (root["prometheus"]) c.external_prometheus = r.non_empty(root["prometheus"], "prometheus");
  if (root["remote_write"]) c.remote_write = r.string_list(root["remote_write"], "remote_write");
  if (const YAML::Node targets = root["targets"]) {
    if (!targets.IsSequence()) r.fail(targets, "targets", "expected a list of targets (- url: ...)");
    for (std::size_t i = 0; i < targets.size(); ++i) {
      const std::string path = "targets[" + std::to_string(i) + "]";
      const YAML::Node url = targets[i].IsMap() ? targets[i]["url"] : YAML::Node();
      if (url && url.IsScalar() && is_queue_target_url(url.Scalar())) {
        c.queue_targets.push_back(read_queue_target(r, targets[i], path));
      } else {
        c.targets.push_back(read_target(r, targets[i], path));
      }
    }
  }
  if (const YAML::Node slo = root["slo"]) read_slo(r, slo, c.slo);
  if (const YAML::Node alerts = root["alerts"]) {
    // alerts.for itself: read_alert_for
    r.expect_keys(alerts, "alerts", {"for", "throughput_baseline_offset", "feature_baseline_offset", "notification_window"});
    if (alerts["throughput_baseline_offset"]) {
      c.throughput_baseline_offset = r.duration(alerts["throughput_baseline_offset"], "alerts.throughput_baseline_offset");
    }
    if (alerts["feature_baseline_offset"]) {
      c.feature_baseline_offset = r.duration(alerts["feature_baseline_offset"], "alerts.feature_baseline_offset");
    }
    if (alerts["notification_window"]) {
      c.notification_window = r.duration(alerts["notification_window"], "alerts.notification_window");
    }
  }
  if (const YAML::Node ext = root["external_urls"]) {
    r.expect_keys(ext, "external_urls", {"prometheus", "alertmanager"});
    for (const std::string key : {"prometheus", "alertmanager"}) {
      if (!ext[key]) continue;
      const std::string path = "external_urls." + key;
      std::string url = r.non_empty(ext[key], path);
      if ((!url.starts_with("http://") && !url.starts_with("https://")) || !printable_ascii(url)) {
        r.fail(ext[key], path, "expected the http:// or https:// URL people open to reach " + key + " (printable ASCII)");
      }
      (key == "prometheus" ? c.prometheus_external_url : c.alertmanager_external_url) = std::move(url);
    }
  }
  if (const YAML::Node drill = root["drill"]) {
    r.expect_keys(drill, "drill", {"enabled"});
    if (drill["enabled"]) c.drill_enabled = r.boolean(drill["enabled"], "drill.enabled");
  }
  if (const YAML::Node traces = root["traces"]) {
    r.expect_keys(traces, "traces", {"max_mb", "retention", "slowest_per_window"});
    if (traces["max_mb"]) c.traces.max_mb = r.number(traces["max_mb"], "traces.max_mb", 1, 1024 * 1024);
    if (traces["retention"]) {
      c.traces.retention = r.duration(traces["retention"], "traces.retention");
      if (c.traces.retention.count() <= 0) r.fail(traces["retention"], "traces.retention", "must be positive");
    }
    if (const YAML::Node n = traces["slowest_per_window"]) {
      const double value = r.number(n, "traces.slowest_per_window", 0, 100000);
      if (value != std::floor(value)) r.fail(n, "traces.slowest_per_window", "expected a whole number");
      c.traces.slowest_per_window = static_cast<int>(value);
    }
  }
  if (const YAML::Node am = root["alertmanager"]) {
    r.expect_keys(am, "alertmanager", {"group_wait", "group_interval", "repeat_interval"});
    if (am["group_wait"]) c.alertmanager_timing.group_wait = r.duration(am["group_wait"], "alertmanager.group_wait");
    if (am["group_interval"]) c.alertmanager_timing.group_interval = r.duration(am["group_interval"], "alertmanager.group_interval");
    if (am["repeat_interval"]) c.alertmanager_timing.repeat_interval = r.duration(am["repeat_interval"], "alertmanager.repeat_interval");
  }
  if (const YAML::Node notifications = root["notifications"]) read_notifications(r, notifications, c.relay);
  if (const YAML::Node report = root["report"]) read_report(r, report, c);
  if (const YAML::Node web = root["web"]) {
    c.web.emplace();
    detail::read_web(r, web, r.file(), *c.web);
  }
  if (const YAML::Node b = root["binaries"]) {
    r.expect_keys(b, "binaries", {"prometheus", "alertmanager", "promtool", "node_exporter", "redis_exporter"});
    if (b["prometheus"]) c.binaries.prometheus = r.non_empty(b["prometheus"], "binaries.prometheus");
    if (b["alertmanager"]) c.binaries.alertmanager = r.non_empty(b["alertmanager"], "binaries.alertmanager");
    if (b["promtool"]) c.binaries.promtool = r.non_empty(b["promtool"], "binaries.promtool");
    if (b["node_exporter"]) c.binaries.node_exporter = r.non_empty(b["node_exporter"], "binaries.node_exporter");
    if (b["redis_exporter"]) c.binaries.redis_exporter = r.non_empty(b["redis_exporter"], "binaries.redis_exporter");
  }
}

// read_alert_for reads `alerts.for`, a map whose keys are alert names rather than fixed keys.
void read_alert_for(const Reader& r, const YAML::Node& root, StackConfig& c) {
  const YAML::Node alerts = root["alerts"];
  if (!alerts || !alerts.IsMap()) return;
  const YAML::Node fors = alerts["for"];
  if (!fors) return;
  if (!fors.IsMap()) r.fail(fors, "alerts.for", "expected a mapping of alert name: duration");
  for (const auto& entry : fors) {
    const std::string name = entry.first.Scalar();
    if (!valid_alert_name(name)) r.fail(entry.first, "alerts.for." + name, "not a valid alert name");
    // 0s is a valid `for` (fire at the first evaluation), unlike the intervals elsewhere.
    const bool zero = entry.second.IsScalar() && (entry.second.Scalar() == "0s" || entry.second.Scalar() == "0");
    c.alert_for[name] = zero ? std::chrono::milliseconds(0) : r.duration(entry.second, "alerts.for." + name);
  }
}

}  // namespace

Result<StackConfig> parse_stack_config(std::string_view yaml_text, std::string_view file) {
  Reader reader(file);
  StackConfig config;
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    if (root.IsNull()) return make_error(std::string(file) + ":1:1: the config is empty (it needs at least 'targets')");
    read_alert_for(reader, root, config);
    read_top(reader, root, config);
  } catch (const ConfigError& e) {
    return make_error(one_line(e.message));
  } catch (const YAML::Exception& e) {
    return make_error(yaml_syntax_error(file, e));
  }
  return config;
}

Result<StackConfig> load_stack_config(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error("cannot read config from " + file.string() + ": no such file or not readable");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_stack_config(text.str(), file.string());
}

}  // namespace inferscope::config
