// File: notification_sections.cpp
// `notifications:` (channels, secrets by env var or file, watchdog, attempts) and `report:` (the
// daily report's time, timezone and channels) of up's config.
#include <algorithm>
#include <map>
#include <set>

#include "config/detail/section_readers.h"
#include "config/report_schedule.h"

namespace inferscope::config::detail {
namespace {

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

}  // namespace

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

}  // namespace inferscope::config::detail
