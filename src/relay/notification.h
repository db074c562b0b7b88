// File: notification.h
// Notification: one Alertmanager v4 webhook payload (a group of alerts as Alertmanager grouped
// them), its parser and the dedupe key. Example:
//   Result<Notification> n = parse_notification(body);  if (!n) return bad_request(n.error());
// Pure value types and functions, thread-safe. The parser accepts any input without crashing
// (libFuzzer target fuzz/webhook_payload_fuzz.cpp) and never throws.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/common/result.h>

namespace inferscope::relay {

using LabelMap = std::map<std::string, std::string>;

// Alert is one entry of alerts[]. Times are kept as Alertmanager sent them (RFC 3339) and parsed.
struct Alert {
  std::string status{};  // "firing" | "resolved"
  LabelMap labels{};
  LabelMap annotations{};
  std::string starts_at{};
  std::string ends_at{};  // "0001-01-01T00:00:00Z" while firing
  std::string generator_url{};
  std::string fingerprint{};

  // alertname returns labels["alertname"] or "" .
  std::string alertname() const;
  // annotation returns annotations[key] or "".
  std::string annotation(const std::string& key) const;
};

// Notification is the whole payload.
struct Notification {
  std::string receiver{};
  std::string status{};  // "firing" if any alert fires, else "resolved"
  std::vector<Alert> alerts{};
  LabelMap group_labels{};
  LabelMap common_labels{};
  LabelMap common_annotations{};
  std::string external_url{};
  std::string group_key{};
  std::int64_t truncated_alerts = 0;
};

// FiredAlert is one row of the fired-alert history.
struct FiredAlert {
  std::string fingerprint{};
  std::string alertname{};
  LabelMap labels{};
  LabelMap annotations{};
  std::chrono::system_clock::time_point starts_at{};
  std::optional<std::chrono::system_clock::time_point> ends_at{};  // unset while still firing
  // When the relay first stored a notification with this alert, and the one resolving it (the
  // relay's clock): "fault -> notification" without polling error.
  std::chrono::system_clock::time_point received_at{};
  std::optional<std::chrono::system_clock::time_point> resolved_received_at{};
};

// parse_notification parses a v4 webhook body. Errors ("cannot parse Alertmanager webhook: ...")
// name the offending field: not JSON, version other than "4", a missing or mistyped required
// field (status, alerts, groupKey; each alert's status and labels), a status other than
// firing/resolved. Unknown fields are ignored; optional ones (annotations, times, URLs) default
// to empty.
Result<Notification> parse_notification(std::string_view body);

// notification_to_json serialises a Notification back to the v4 shape (the outbox stores this).
std::string notification_to_json(const Notification& notification);

// dedupe_key returns hex SHA-256 over (group key, status, sorted set of fingerprint@startsAt):
// equal for a retry or an HA twin of the same notification, whatever the alerts' order; different
// for an alert that resolved and fired again (a new startsAt).
std::string dedupe_key(const Notification& notification);

// parse_rfc3339 parses "2026-11-30T03:26:28.51Z" or "...+08:00"; nullopt if malformed. The Go
// zero time "0001-01-01T00:00:00Z" parses (it is before any real time).
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text);

// format_rfc3339 writes a time as "2026-11-30T03:26:28.510Z" (UTC, milliseconds).
std::string format_rfc3339(std::chrono::system_clock::time_point time);

}  // namespace inferscope::relay
