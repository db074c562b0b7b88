// File: stack_config.cpp
// YAML → StackConfig. Every value is read through one Reader so that each error carries
// file:line:column and the dotted key path ("targets[1].kind").
#include "config/stack_config.h"

#include "config/role_mapping.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "alerts/rules_generator.h"
#include "common/prom_duration.h"
#include "queue/redis_target.h"

namespace inferscope::config {
namespace {

// one_line makes an error message safe for a one-line report: keys and YAML messages may hold
// line breaks or control bytes (a multi-line key), and a very long key is cut.
std::string one_line(const std::string& message) {
  std::string out;
  for (char c : message) {
    if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < ' ' || c == 127) {
      out += '?';
    } else {
      out += c;
    }
    if (out.size() > 600) return out + "...";
  }
  return out;
}

// ConfigError unwinds the parse to load_stack_config, which turns it into an Error; exceptions
// never leave this file.
struct ConfigError {
  std::string message;
};

class Reader {
 public:
  explicit Reader(std::string_view file) : file_(file) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& why) const {
    const YAML::Mark mark = node.Mark();
    std::ostringstream out;
    out << file_ << ':' << (mark.line + 1) << ':' << (mark.column + 1) << ": key '" << key << "': " << why;
    throw ConfigError{out.str()};
  }

  // expect_keys rejects any key of `map` not in `allowed`, naming it and the ones allowed.
  void expect_keys(const YAML::Node& map, const std::string& path, std::initializer_list<std::string_view> allowed) const {
    if (!map.IsMap()) fail(map, path, "expected a mapping (key: value lines)");
    for (const auto& entry : map) {
      const std::string key = entry.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string list;
      for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail(entry.first, join(path, key), "unknown key (allowed here: " + list + ")");
    }
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  std::string scalar(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(node, key, "expected a single value");
    return node.Scalar();
  }

  std::string non_empty(const YAML::Node& node, const std::string& key) const {
    std::string text = scalar(node, key);
    if (text.empty()) fail(node, key, "must not be empty");
    return text;
  }

  bool boolean(const YAML::Node& node, const std::string& key) const {
    const std::string text = scalar(node, key);
    if (text == "true") return true;
    if (text == "false") return false;
    fail(node, key, "expected true or false, got \"" + text + "\"");
  }

  std::chrono::milliseconds duration(const YAML::Node& node, const std::string& key) const {
    auto d = common::parse_prom_duration(scalar(node, key));
    if (!d) fail(node, key, d.error().message);
    return *d;
  }

  std::uint16_t port(const YAML::Node& node, const std::string& key) const {
    const std::string text = scalar(node, key);
    char* end = nullptr;
    const long value = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || value < 0 || value > 65535) {
      fail(node, key, "expected a port number 0..65535 (0 = ephemeral), got \"" + text + "\"");
    }
    return static_cast<std::uint16_t>(value);
  }

  double number(const YAML::Node& node, const std::string& key, double min, double max) const {
    const std::string text = scalar(node, key);
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(value)) fail(node, key, "expected a number, got \"" + text + "\"");
    if (value < min || value > max) {
      std::ostringstream why;
      why << "must be between " << min << " and " << max << ", got " << text;
      fail(node, key, why.str());
    }
    return value;
  }

  double seconds(const YAML::Node& node, const std::string& key) const {
    return static_cast<double>(duration(node, key).count()) / 1000.0;
  }

  std::vector<std::string> string_list(const YAML::Node& node, const std::string& key) const {
    std::vector<std::string> out;
    if (node.IsScalar()) {
      out.push_back(non_empty(node, key));
      return out;
    }
    if (!node.IsSequence()) fail(node, key, "expected a list");
    for (std::size_t i = 0; i < node.size(); ++i) {
      out.push_back(non_empty(node[i], key + "[" + std::to_string(i) + "]"));
    }
    return out;
  }

 private:
  std::string file_;
};

bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

bool printable_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 127; });
}

bool valid_alert_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// read_roles reads `roles: {ROLE: NAME | {metric: NAME, unit: UNIT}}` of a custom target; each
// line is checked on its own first, so an error points at the line that is wrong.
// `prefix` is the path of `node` with a trailing dot ("targets[0].", "" for a --roles file).
std::shared_ptr<const dialect::CustomDialect> read_roles(const Reader& r, const YAML::Node& node, const std::string& prefix) {
  const YAML::Node roles = node["roles"];
  if (!roles) r.fail(node, prefix + "roles", "missing: a custom target maps roles to its names (roles: {e2e: NAME, ...})");
  if (!roles.IsMap() || roles.size() == 0) r.fail(roles, prefix + "roles", "expected a mapping ROLE: METRIC_NAME");
  std::vector<dialect::CustomRole> mapped;
  for (const auto& entry : roles) {
    const std::string role = entry.first.as<std::string>();
    const std::string key = prefix + "roles." + role;
    dialect::CustomRole line{.role = role};
    if (entry.second.IsMap()) {
      r.expect_keys(entry.second, key, {"metric", "unit"});
      if (!entry.second["metric"]) r.fail(entry.second, key + ".metric", "missing: the exposed metric name");
      line.metric = r.non_empty(entry.second["metric"], key + ".metric");
      if (entry.second["unit"]) line.unit = r.non_empty(entry.second["unit"], key + ".unit");
    } else {
      line.metric = r.non_empty(entry.second, key);
    }
    if (auto alone = dialect::make_custom_dialect({line}, ""); !alone) r.fail(entry.second, key, alone.error().message);
    mapped.push_back(std::move(line));
  }
  std::string model_label;
  if (node["model_label"]) model_label = r.non_empty(node["model_label"], prefix + "model_label");
  auto custom = dialect::make_custom_dialect(std::move(mapped), model_label);
  if (!custom) r.fail(node["model_label"] ? node["model_label"] : roles, prefix + "roles", custom.error().message);
  return *custom;
}

TargetConfig read_target(const Reader& r, const YAML::Node& node, const std::string& path) {
  r.expect_keys(node, path, {"name", "url", "kind", "roles", "model_label"});
  if (!node["url"]) r.fail(node, path + ".url", "missing (every target needs its /metrics URL)");
  auto target = parse_target_url(r.non_empty(node["url"], path + ".url"));
  if (!target) r.fail(node["url"], path + ".url", target.error().message);
  if (node["name"]) {
    target->name = r.non_empty(node["name"], path + ".name");
    if (!valid_name(target->name)) r.fail(node["name"], path + ".name", "use letters, digits, '_', '-', '.'");
  }
  if (node["kind"]) {
    target->kind = r.scalar(node["kind"], path + ".kind");
    if (target->kind != kCustomKind &&
        std::find(std::begin(kTargetKinds), std::end(kTargetKinds), target->kind) == std::end(kTargetKinds)) {
      r.fail(node["kind"], path + ".kind",
             "unknown kind \"" + target->kind +
                 "\" (inferscope, vllm, llamacpp, tgi, triton, sglang, litellm, dcgm, node, custom, auto)");
    }
  }
  if (target->kind == kCustomKind) {
    target->custom = read_roles(r, node, path + ".");
  } else {
    for (const char* key : {"roles", "model_label"}) {
      if (node[key]) r.fail(node[key], path + "." + key, "only a target of kind custom maps its own names");
    }
  }
  return *target;
}

QueueTargetConfig read_queue_target(const Reader& r, const YAML::Node& node, const std::string& path) {
  r.expect_keys(node, path, {"name", "url", "kind", "password_file", "password_env", "queues"});
  auto target = parse_queue_target_url(r.non_empty(node["url"], path + ".url"));
  if (!target) r.fail(node["url"], path + ".url", target.error().message);
  if (node["name"]) {
    target->name = r.non_empty(node["name"], path + ".name");
    if (!valid_name(target->name)) r.fail(node["name"], path + ".name", "use letters, digits, '_', '-', '.'");
  }
  if (node["kind"] && r.scalar(node["kind"], path + ".kind") != "redis") {
    r.fail(node["kind"], path + ".kind", "a redis:// target has kind redis (or no kind)");
  }
  if (node["password_file"]) target->password.file = r.non_empty(node["password_file"], path + ".password_file");
  if (node["password_env"]) target->password.env = r.non_empty(node["password_env"], path + ".password_env");
  if (!target->password.file.empty() && !target->password.env.empty()) {
    r.fail(node, path + ".password_file", "give password_file or password_env, not both");
  }
  const YAML::Node queues = node["queues"];
  if (!queues) return *target;
  const std::string qpath = path + ".queues";
  r.expect_keys(queues, qpath, {"systems", "streams", "lists", "interval"});
  if (const YAML::Node streams = queues["streams"]) {
    if (!streams.IsSequence()) r.fail(streams, qpath + ".streams", "expected a list of {key: ..., group: ...}");
    for (std::size_t i = 0; i < streams.size(); ++i) {
      const std::string spath = qpath + ".streams[" + std::to_string(i) + "]";
      r.expect_keys(streams[i], spath, {"key", "group"});
      if (!streams[i]["key"] || !streams[i]["group"]) r.fail(streams[i], spath, "needs key and group");
      target->streams.emplace_back(r.non_empty(streams[i]["key"], spath + ".key"),
                                   r.non_empty(streams[i]["group"], spath + ".group"));
    }
  }
  if (queues["lists"]) target->lists = r.string_list(queues["lists"], qpath + ".lists");
  if (queues["systems"]) {
    target->systems = r.string_list(queues["systems"], qpath + ".systems");
    for (std::size_t i = 0; i < target->systems.size(); ++i) {
      const std::string& system = target->systems[i];
      if (std::find(std::begin(kQueueSystems), std::end(kQueueSystems), system) == std::end(kQueueSystems)) {
        const YAML::Node item = queues["systems"].IsSequence() ? queues["systems"][i] : queues["systems"];
        r.fail(item, qpath + ".systems[" + std::to_string(i) + "]",
               "unknown queue system \"" + system + "\" (rq, celery, streams, list)");
      }
    }
    const auto has = [&](std::string_view s) {
      return std::find(target->systems.begin(), target->systems.end(), s) != target->systems.end();
    };
    if (!target->streams.empty() && !has("streams")) {
      r.fail(queues["streams"], qpath + ".streams", "streams are named but systems does not list streams");
    }
    if (!target->lists.empty() && !has("list")) {
      r.fail(queues["lists"], qpath + ".lists", "lists are named but systems does not list list");
    }
    if (has("streams") && target->streams.empty()) {
      r.fail(queues["systems"], qpath + ".systems", "streams needs queues.streams: [{key: ..., group: ...}]");
    }
    if (has("list") && target->lists.empty()) r.fail(queues["systems"], qpath + ".systems", "list needs queues.lists");
  } else {
    if (!target->streams.empty()) target->systems.emplace_back("streams");
    if (!target->lists.empty()) target->systems.emplace_back("list");
  }
  if (queues["interval"]) target->interval = r.duration(queues["interval"], qpath + ".interval");
  return *target;
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

relay::SecretSource read_secret(const Reader& r, const YAML::Node& node, const std::string& key) {
  if (node.IsScalar()) {
    r.fail(node, key, "secrets are never written in the config: use {env: VARIABLE} or {file: PATH}");
  }
  r.expect_keys(node, key, {"env", "file"});
  relay::SecretSource s;
  if (node["env"]) s.env = r.non_empty(node["env"], key + ".env");
  if (node["file"]) s.file = r.non_empty(node["file"], key + ".file");
  if (s.env.empty() == s.file.empty()) r.fail(node, key, "give exactly one of env or file");
  return s;
}

relay::ChannelConfig read_channel(const Reader& r, const YAML::Node& node, const std::string& path) {
  r.expect_keys(node, path, {"name", "kind", "url", "secret", "receivers", "messages_per_minute",
                             "max_message_bytes", "email_from", "email_to", "smtp_username", "smtp_password",
                             "smtp_require_tls"});
  relay::ChannelConfig c;
  if (!node["kind"]) r.fail(node, path + ".kind", "missing (feishu, lark, dingtalk, wecom, slack, webhook, email)");
  const std::string kind = r.scalar(node["kind"], path + ".kind");
  static const std::map<std::string, relay::ChannelKind> kKinds{
      {"feishu", relay::ChannelKind::kFeishu}, {"lark", relay::ChannelKind::kFeishu},
      {"dingtalk", relay::ChannelKind::kDingTalk}, {"wecom", relay::ChannelKind::kWeCom},
      {"slack", relay::ChannelKind::kSlack}, {"webhook", relay::ChannelKind::kWebhook},
      {"email", relay::ChannelKind::kEmail}};
  const auto found = kKinds.find(kind);
  if (found == kKinds.end()) {
    r.fail(node["kind"], path + ".kind",
           "unknown channel kind \"" + kind + "\" (feishu, lark, dingtalk, wecom, slack, webhook, email)");
  }
  c.kind = found->second;
  c.name = node["name"] ? r.non_empty(node["name"], path + ".name") : kind;
  if (!valid_name(c.name)) r.fail(node["name"], path + ".name", "use letters, digits, '_', '-', '.'");
  if (!node["url"]) {
    r.fail(node, path + ".url", "missing: {env: VARIABLE} or {file: PATH} holding the webhook (or SMTP) URL");
  }
  c.url = read_secret(r, node["url"], path + ".url");
  if (node["secret"]) c.secret = read_secret(r, node["secret"], path + ".secret");
  if (node["smtp_password"]) c.smtp_password = read_secret(r, node["smtp_password"], path + ".smtp_password");
  if (node["receivers"]) c.receivers = r.string_list(node["receivers"], path + ".receivers");
  if (node["messages_per_minute"]) {
    c.messages_per_minute = static_cast<int>(r.number(node["messages_per_minute"], path + ".messages_per_minute", 0, 1e6));
  }
  if (node["max_message_bytes"]) {
    c.max_message_bytes = static_cast<std::size_t>(r.number(node["max_message_bytes"], path + ".max_message_bytes", 64, 1e8));
  }
  if (node["email_from"]) c.email_from = r.non_empty(node["email_from"], path + ".email_from");
  if (node["email_to"]) c.email_to = r.string_list(node["email_to"], path + ".email_to");
  if (node["smtp_username"]) c.smtp_username = r.non_empty(node["smtp_username"], path + ".smtp_username");
  if (node["smtp_require_tls"]) c.smtp_require_tls = r.boolean(node["smtp_require_tls"], path + ".smtp_require_tls");
  if (c.kind == relay::ChannelKind::kEmail && (c.email_from.empty() || c.email_to.empty())) {
    r.fail(node, path + ".email_to", "email channels need email_from and email_to");
  }
  return c;
}

void read_notifications(const Reader& r, const YAML::Node& node, relay::RelayConfig& relay) {
  r.expect_keys(node, "notifications", {"channels", "watchdog_timeout", "max_attempts"});
  if (const YAML::Node channels = node["channels"]) {
    if (!channels.IsSequence()) r.fail(channels, "notifications.channels", "expected a list of channels (- kind: ...)");
    std::set<std::string> names;
    for (std::size_t i = 0; i < channels.size(); ++i) {
      const std::string path = "notifications.channels[" + std::to_string(i) + "]";
      relay.channels.push_back(read_channel(r, channels[i], path));
      if (!names.insert(relay.channels.back().name).second) {
        r.fail(channels[i], path + ".name", "channel name \"" + relay.channels.back().name + "\" is used twice");
      }
    }
  }
  if (node["watchdog_timeout"]) {
    relay.watchdog.timeout = std::chrono::duration_cast<std::chrono::seconds>(
        r.duration(node["watchdog_timeout"], "notifications.watchdog_timeout"));
  }
  if (node["max_attempts"]) {
    relay.retry.max_attempts = static_cast<int>(r.number(node["max_attempts"], "notifications.max_attempts", 1, 1000));
  }
}

// read_report reads `report:` after notifications (its channels must name configured ones).
void read_report(const Reader& r, const YAML::Node& node, StackConfig& c) {
  r.expect_keys(node, "report", {"daily_at", "channels", "timezone"});
  ReportSchedule schedule;
  if (!node["daily_at"]) r.fail(node, "report.daily_at", "missing: the time of day to send the report, e.g. \"09:00\"");
  auto at = parse_daily_at(r.scalar(node["daily_at"], "report.daily_at"));
  if (!at) r.fail(node["daily_at"], "report.daily_at", at.error().message);
  schedule.hour = at->first;
  schedule.minute = at->second;
  if (node["timezone"]) {
    schedule.timezone = r.non_empty(node["timezone"], "report.timezone");
    auto offset = parse_utc_offset(schedule.timezone);
    if (!offset) r.fail(node["timezone"], "report.timezone", offset.error().message);
    schedule.utc_offset_minutes = *offset;
  }
  if (c.relay.channels.empty()) {
    r.fail(node, "report", "no channel to send it to: configure notifications.channels first");
  }
  if (node["channels"]) {
    schedule.channels = r.string_list(node["channels"], "report.channels");
    for (std::size_t i = 0; i < schedule.channels.size(); ++i) {
      const std::string& name = schedule.channels[i];
      const bool known = std::any_of(c.relay.channels.begin(), c.relay.channels.end(),
                                     [&](const relay::ChannelConfig& ch) { return ch.name == name; });
      if (!known) {
        std::string names;
        for (const auto& ch : c.relay.channels) names += (names.empty() ? "" : ", ") + ch.name;
        const YAML::Node item = node["channels"].IsSequence() ? node["channels"][i] : node["channels"];
        r.fail(item, "report.channels[" + std::to_string(i) + "]",
               "unknown channel \"" + name + "\" (notifications.channels has: " + names + ")");
      }
    }
  } else {
    for (const auto& ch : c.relay.channels) schedule.channels.push_back(ch.name);
  }
  c.report = std::move(schedule);
}

void read_top(const Reader& r, const YAML::Node& root, StackConfig& c) {
  r.expect_keys(root, "", {"targets", "scrape_interval", "evaluation_interval", "retention", "slo", "alerts",
                           "alertmanager", "notifications", "port", "prometheus_port", "alertmanager_port",
                           "state_dir", "node_exporter", "remote_write", "agent", "prometheus", "binaries", "report",
                           "drill", "external_urls", "traces"});
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
    r.expect_keys(alerts, "alerts", {"for", "throughput_baseline_offset", "notification_window"});
    if (alerts["throughput_baseline_offset"]) {
      c.throughput_baseline_offset = r.duration(alerts["throughput_baseline_offset"], "alerts.throughput_baseline_offset");
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

// yaml_syntax_error is the one-line error of a file yaml-cpp cannot parse, at yaml-cpp's position.
std::string yaml_syntax_error(std::string_view file, const YAML::Exception& e) {
  std::ostringstream out;
  out << file << ':' << (e.mark.line + 1) << ':' << (e.mark.column + 1) << ": cannot parse YAML: " << e.msg;
  return one_line(out.str());
}

}  // namespace

Result<TargetConfig> parse_target_url(std::string_view text) {
  TargetConfig t;
  std::string_view url = text;
  const std::size_t eq = text.find('=');
  const std::size_t scheme_pos = text.find("://");
  if (eq != std::string_view::npos && (scheme_pos == std::string_view::npos || eq < scheme_pos)) {
    t.name = std::string(text.substr(0, eq));
    url = text.substr(eq + 1);
    if (!valid_name(t.name)) {
      return make_error("bad target name \"" + t.name + "\" in \"" + std::string(text) +
                        "\": use letters, digits, '_', '-', '.'");
    }
  }
  // KIND@ before the scheme names the kind (NAME=vllm@http://...): that target skips detection.
  if (const std::size_t at = url.find('@'), scheme = url.find("://"); at != std::string_view::npos &&
                                                                        scheme != std::string_view::npos && at < scheme) {
    t.kind = std::string(url.substr(0, at));
    url.remove_prefix(at + 1);
    if (t.kind == "auto" || std::find(std::begin(kTargetKinds), std::end(kTargetKinds), t.kind) == std::end(kTargetKinds)) {
      return make_error("unknown kind \"" + t.kind + "\" in \"" + std::string(text) +
                        "\" (inferscope, vllm, llamacpp, tgi, triton, sglang, litellm, dcgm, node; leave KIND@ out to detect it)");
    }
  }
  const auto bad = [&](std::string_view why) {
    return make_error("bad target URL \"" + std::string(url) + "\": " + std::string(why) +
                      " (expected [NAME=][KIND@]http://host:port[/path])");
  };
  if (!printable_ascii(url)) return bad("only printable ASCII without spaces is allowed (percent-encode the rest)");
  if (url.starts_with("http://")) {
    t.scheme = "http";
    url.remove_prefix(7);
  } else if (url.starts_with("https://")) {
    t.scheme = "https";
    url.remove_prefix(8);
  } else {
    return bad("scheme must be http:// or https://");
  }
  const std::size_t slash = url.find('/');
  t.host_port = std::string(url.substr(0, slash));
  t.metrics_path = slash == std::string_view::npos ? "/metrics" : std::string(url.substr(slash));
  if (t.metrics_path.find_first_of("?#") != std::string::npos) return bad("query strings are not supported");
  const std::size_t colon = t.host_port.rfind(':');
  if (t.host_port.empty() || colon == std::string::npos || colon == 0 || colon + 1 == t.host_port.size()) {
    return bad("host and port are required");
  }
  const std::string port_text = t.host_port.substr(colon + 1);
  if (!std::all_of(port_text.begin(), port_text.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      port_text.size() > 5 || std::stoi(port_text) == 0 || std::stoi(port_text) > 65535) {
    return bad("port must be 1..65535");
  }
  t.url = t.scheme + "://" + t.host_port + t.metrics_path;
  if (t.name.empty()) {
    t.name = t.host_port;
    std::replace(t.name.begin(), t.name.end(), ':', '_');
    std::replace(t.name.begin(), t.name.end(), '[', '_');
    std::replace(t.name.begin(), t.name.end(), ']', '_');
  }
  return t;
}

bool is_queue_target_url(std::string_view text) {
  const std::size_t scheme = text.find("://");
  return scheme != std::string_view::npos && scheme >= 5 && text.substr(scheme - 5, 8) == "redis://" &&
         (scheme == 5 || text[scheme - 6] == '=');
}

Result<QueueTargetConfig> parse_queue_target_url(std::string_view text) {
  QueueTargetConfig t;
  std::string_view url = text;
  if (const std::size_t eq = text.find('='); eq != std::string_view::npos && eq < text.find("://")) {
    t.name = std::string(text.substr(0, eq));
    url = text.substr(eq + 1);
    if (!valid_name(t.name)) {
      return make_error("bad target name \"" + t.name + "\": use letters, digits, '_', '-', '.'");
    }
  }
  auto target = queue::parse_redis_url(url);
  if (!target) return target.error();
  if (!target->password.empty()) {
    return make_error("the redis URL " + queue::describe(*target) + " carries a password: keep it off the command "
                      "line and out of the config, and give it as password_file: or password_env: of the target");
  }
  if (!printable_ascii(target->host)) return make_error("bad redis URL " + queue::describe(*target) + ": bad host");
  t.url = queue::describe(*target);
  if (t.name.empty()) {
    t.name = target->host + "_" + std::to_string(target->port);
    std::replace(t.name.begin(), t.name.end(), ':', '_');
  }
  return t;
}

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

Result<std::shared_ptr<const dialect::CustomDialect>> parse_role_mapping(std::string_view yaml_text,
                                                                        std::string_view file) {
  Reader reader(file);
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    if (root.IsNull()) return make_error(std::string(file) + ":1:1: the role mapping is empty (it needs 'roles')");
    reader.expect_keys(root, "", {"roles", "model_label"});
    return read_roles(reader, root, "");
  } catch (const ConfigError& e) {
    return make_error(one_line(e.message));
  } catch (const YAML::Exception& e) {
    return make_error(yaml_syntax_error(file, e));
  }
}

Result<std::shared_ptr<const dialect::CustomDialect>> load_role_mapping(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error("cannot read role mapping from " + file.string() + ": no such file or not readable");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_role_mapping(text.str(), file.string());
}

Result<StackConfig> load_stack_config(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error("cannot read config from " + file.string() + ": no such file or not readable");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_stack_config(text.str(), file.string());
}

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
