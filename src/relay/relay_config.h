// File: relay_config.h
// RelayConfig: everything the alert relay needs, as plain values that `inferscope up` fills from
// its YAML (src/up) or a test fills by hand. Example:
//   RelayConfig c; c.database_path = state_dir / "relay.db";
//   c.channels.push_back({.kind = ChannelKind::kDingTalk, .name = "oncall", .url = {.env = "DT_URL"},
//                         .secret = {.env = "DT_SECRET"}});
// Value types, thread-compatible. Secrets are never held here: only where to read them (an
// environment variable or a file), resolved once by Relay::open and never logged.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::relay {

// ChannelKind names the services the relay can deliver to.
enum class ChannelKind {
  kFeishu,    // Feishu/Lark custom bot: interactive card, optional signature in the body
  kDingTalk,  // DingTalk custom robot: markdown, optional signature in the URL
  kWeCom,     // WeCom (WeChat Work) group robot: markdown; the key in the URL is the secret
  kSlack,     // Slack-compatible incoming webhook (Slack, Mattermost, Rocket.Chat): {"text": ...}
  kWebhook,   // generic JSON webhook: the notification as JSON plus the rendered text
  kEmail,     // email over SMTP (libcurl): smtp:// or smtps:// URL
};

// channel_kind_name returns the config spelling: feishu, dingtalk, wecom, slack, webhook, email.
std::string_view channel_kind_name(ChannelKind kind) noexcept;
// parse_channel_kind maps that spelling (also "lark" -> kFeishu) back; nullopt if unknown.
std::optional<ChannelKind> parse_channel_kind(std::string_view text) noexcept;

// SecretSource says where a secret is read from: exactly one of env (an environment variable's
// name) or file (a path whose content, trailing newline stripped, is the secret). Both empty means
// "not configured".
struct SecretSource {
  std::string env{};
  std::string file{};
  bool empty() const noexcept { return env.empty() && file.empty(); }
};

// ChannelConfig describes one destination.
struct ChannelConfig {
  ChannelKind kind = ChannelKind::kWebhook;
  std::string name{};   // unique, [A-Za-z0-9_.-]+; the `channel` metric label and log name
  SecretSource url{};   // robot/webhook URL (it carries the token), or the SMTP server URL
  SecretSource secret{};  // Feishu/DingTalk signing secret; leave empty when signing is off
  // Alertmanager receiver names whose notifications go to this channel; empty = all of them.
  std::vector<std::string> receivers{};
  // Messages per rolling minute this channel may send; nullopt = the kind's default (DingTalk
  // and WeCom 20, Feishu 100, Slack 60, webhook and email unlimited); 0 = unlimited. When the
  // limit is reached, pending notifications wait and are merged into the next message.
  std::optional<int> messages_per_minute{};
  // Largest rendered message text in bytes; nullopt = the kind's default (WeCom 4096, DingTalk
  // and Feishu 18000, Slack 39000, webhook/email unlimited). Longer text is cut at a UTF-8
  // boundary with a "[truncated]" marker.
  std::optional<std::size_t> max_message_bytes{};
  // Email only.
  std::string email_from{};
  std::vector<std::string> email_to{};
  std::string smtp_username{};     // empty = no AUTH
  SecretSource smtp_password{};
  bool smtp_require_tls = false;   // STARTTLS required (smtps:// URLs are TLS anyway)
};

// RetryConfig: exponential back-off with jitter between delivery attempts of one message.
struct RetryConfig {
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{std::chrono::minutes(5)};
  double jitter = 0.2;   // each delay is multiplied by a uniform factor in [1-jitter, 1+jitter]
  int max_attempts = 16;  // after this many failed attempts a delivery is marked failed (kept, counted)
};

// WatchdogConfig: the dead man's switch. Alertmanager repeats the always-firing watchdog alert
// every repeat_interval; when none arrives for `timeout`, the relay raises its own alarm.
struct WatchdogConfig {
  bool enabled = true;
  std::string alertname = "InferscopeWatchdog";
  std::chrono::seconds timeout{std::chrono::minutes(10)};  // must exceed the watchdog's repeat_interval
  std::vector<std::string> channels{};  // channel names for the alarm; empty = every chat channel
};

// RelayConfig is the whole relay configuration.
struct RelayConfig {
  std::string database_path{};  // SQLite file (created if missing), e.g. <state-dir>/relay.db
  std::vector<ChannelConfig> channels{};
  RetryConfig retry{};
  WatchdogConfig watchdog{};
  // A notification with the same (group key, status, fingerprint set) as one received less than
  // this long ago is acknowledged but not stored again. Keep it below Alertmanager's
  // repeat_interval so that reminders still get through.
  std::chrono::seconds dedupe_window{std::chrono::minutes(5)};
  std::chrono::milliseconds request_timeout{10000};  // per HTTP/SMTP attempt
  std::chrono::milliseconds db_busy_timeout{2000};   // wait for a locked database, then answer 503
  std::chrono::hours history_retention{24 * 30};     // fired-alert history and delivered rows
};

}  // namespace inferscope::relay
