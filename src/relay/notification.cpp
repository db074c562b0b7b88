// Alertmanager v4 webhook parsing: nlohmann-json without exceptions (parse with allow_exceptions
// off, every field type-checked by hand), so that any input yields a value or an Error.
#include "relay/notification.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>

#include <nlohmann/json.hpp>
#include <openssl/evp.h>

namespace inferscope::relay {
namespace {

using nlohmann::json;

Error payload_error(const std::string& what) {
  return make_error("cannot parse Alertmanager webhook: " + what);
}

// read_string copies an optional string field; a present non-string is an error.
bool read_string(const json& object, const char* key, std::string& out, std::string& error) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return true;
  if (!it->is_string()) {
    error = std::string("field '") + key + "' must be a string";
    return false;
  }
  out = it->get_ref<const std::string&>();
  return true;
}

bool read_labels(const json& object, const char* key, LabelMap& out, std::string& error) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return true;
  if (!it->is_object()) {
    error = std::string("field '") + key + "' must be an object of strings";
    return false;
  }
  for (const auto& [name, value] : it->items()) {
    if (!value.is_string()) {
      error = std::string("field '") + key + "." + name + "' must be a string";
      return false;
    }
    out.emplace(name, value.get_ref<const std::string&>());
  }
  return true;
}

bool valid_status(const std::string& status) { return status == "firing" || status == "resolved"; }

bool read_alert(const json& item, std::size_t index, Alert& alert, std::string& error) {
  const std::string where = "alerts[" + std::to_string(index) + "]";
  if (!item.is_object()) {
    error = where + " must be an object";
    return false;
  }
  if (!read_string(item, "status", alert.status, error) || !read_labels(item, "labels", alert.labels, error) ||
      !read_labels(item, "annotations", alert.annotations, error) ||
      !read_string(item, "startsAt", alert.starts_at, error) || !read_string(item, "endsAt", alert.ends_at, error) ||
      !read_string(item, "generatorURL", alert.generator_url, error) ||
      !read_string(item, "fingerprint", alert.fingerprint, error)) {
    error = where + ": " + error;
    return false;
  }
  if (!valid_status(alert.status)) {
    error = where + ".status must be \"firing\" or \"resolved\"";
    return false;
  }
  if (!item.contains("labels")) {
    error = where + ".labels is missing";
    return false;
  }
  return true;
}

json labels_json(const LabelMap& labels) {
  json out = json::object();
  for (const auto& [k, v] : labels) out[k] = v;
  return out;
}

int two_digits(std::string_view s, std::size_t at) {
  if (at + 2 > s.size() || s[at] < '0' || s[at] > '9' || s[at + 1] < '0' || s[at + 1] > '9') return -1;
  return (s[at] - '0') * 10 + (s[at + 1] - '0');
}

// days_from_civil: days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's algorithm).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace

std::string Alert::alertname() const {
  auto it = labels.find("alertname");
  return it == labels.end() ? std::string() : it->second;
}

std::string Alert::annotation(const std::string& key) const {
  auto it = annotations.find(key);
  return it == annotations.end() ? std::string() : it->second;
}

Result<Notification> parse_notification(std::string_view body) {
  const json doc = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return payload_error("body is not valid JSON");
  if (!doc.is_object()) return payload_error("body must be a JSON object");
  std::string error;
  std::string version;
  if (!read_string(doc, "version", version, error)) return payload_error(error);
  if (version != "4") return payload_error("field 'version' must be \"4\" (got \"" + version.substr(0, 16) + "\")");

  Notification n;
  if (!read_string(doc, "receiver", n.receiver, error) || !read_string(doc, "status", n.status, error) ||
      !read_string(doc, "groupKey", n.group_key, error) || !read_string(doc, "externalURL", n.external_url, error) ||
      !read_labels(doc, "groupLabels", n.group_labels, error) ||
      !read_labels(doc, "commonLabels", n.common_labels, error) ||
      !read_labels(doc, "commonAnnotations", n.common_annotations, error)) {
    return payload_error(error);
  }
  if (!valid_status(n.status)) return payload_error("field 'status' must be \"firing\" or \"resolved\"");
  if (!doc.contains("groupKey")) return payload_error("field 'groupKey' is missing");
  if (auto it = doc.find("truncatedAlerts"); it != doc.end() && !it->is_null()) {
    if (!it->is_number_integer()) return payload_error("field 'truncatedAlerts' must be an integer");
    n.truncated_alerts = it->get<std::int64_t>();
  }
  auto alerts = doc.find("alerts");
  if (alerts == doc.end() || !alerts->is_array()) return payload_error("field 'alerts' must be an array");
  if (alerts->empty()) return payload_error("field 'alerts' is empty");
  n.alerts.reserve(alerts->size());
  for (std::size_t i = 0; i < alerts->size(); ++i) {
    Alert alert;
    if (!read_alert((*alerts)[i], i, alert, error)) return payload_error(error);
    n.alerts.push_back(std::move(alert));
  }
  return n;
}

std::string notification_to_json(const Notification& n) {
  json alerts = json::array();
  for (const Alert& a : n.alerts) {
    alerts.push_back({{"status", a.status},
                      {"labels", labels_json(a.labels)},
                      {"annotations", labels_json(a.annotations)},
                      {"startsAt", a.starts_at},
                      {"endsAt", a.ends_at},
                      {"generatorURL", a.generator_url},
                      {"fingerprint", a.fingerprint}});
  }
  json doc = {{"receiver", n.receiver},
              {"status", n.status},
              {"alerts", std::move(alerts)},
              {"groupLabels", labels_json(n.group_labels)},
              {"commonLabels", labels_json(n.common_labels)},
              {"commonAnnotations", labels_json(n.common_annotations)},
              {"externalURL", n.external_url},
              {"version", "4"},
              {"groupKey", n.group_key},
              {"truncatedAlerts", n.truncated_alerts}};
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string dedupe_key(const Notification& n) {
  std::vector<std::string> fingerprints;
  fingerprints.reserve(n.alerts.size());
  for (const Alert& a : n.alerts) {
    // An alert without a fingerprint (hand-made payloads) is identified by its labels instead.
    // startsAt is part of the identity: an alert that resolved and fired again is a new episode
    // (new startsAt) that must be delivered, while Alertmanager's retries and HA twins repeat it.
    // So is each alert's own status: a group stays "firing" while any alert in it fires, so the
    // notification that resolves some of its alerts carries the same group status, fingerprints
    // and startsAts as the one that fired them all, and without it those resolves were dropped.
    std::string identity = a.fingerprint.empty()
                               ? labels_json(a.labels).dump(-1, ' ', false, json::error_handler_t::replace)
                               : a.fingerprint;
    identity += '@';
    identity += a.starts_at;
    identity += '@';
    identity += a.status;
    fingerprints.push_back(std::move(identity));
  }
  std::sort(fingerprints.begin(), fingerprints.end());
  fingerprints.erase(std::unique(fingerprints.begin(), fingerprints.end()), fingerprints.end());
  std::string material = n.group_key;
  material += '\x1f';
  material += n.status;
  for (const std::string& f : fingerprints) {
    material += '\x1f';
    material += f;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(material.data(), material.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  int year = 0;
  if (std::from_chars(s.data(), s.data() + 4, year).ptr != s.data() + 4) return std::nullopt;
  const int month = two_digits(s, 5), day = two_digits(s, 8), hour = two_digits(s, 11), minute = two_digits(s, 14),
            second = two_digits(s, 17);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
      second < 0 || second > 60) {
    return std::nullopt;
  }
  std::size_t at = 19;
  std::int64_t nanos = 0;
  if (at < s.size() && s[at] == '.') {
    ++at;
    int digits = 0;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') {
      if (digits < 9) {
        nanos = nanos * 10 + (s[at] - '0');
        ++digits;
      }
      ++at;
    }
    if (digits == 0) return std::nullopt;
    while (digits++ < 9) nanos *= 10;
  }
  std::int64_t offset_seconds = 0;
  if (at < s.size() && (s[at] == 'Z' || s[at] == 'z')) {
    ++at;
  } else if (at < s.size() && (s[at] == '+' || s[at] == '-')) {
    const int oh = two_digits(s, at + 1), om = two_digits(s, at + 4);
    if (oh < 0 || om < 0 || at + 6 > s.size() || s[at + 3] != ':') return std::nullopt;
    offset_seconds = (oh * 3600 + om * 60) * (s[at] == '-' ? -1 : 1);
    at += 6;
  } else {
    return std::nullopt;
  }
  if (at != s.size()) return std::nullopt;
  const std::int64_t days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  const std::int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
  // Clamp to what system_clock (nanoseconds in int64) can hold: the Go zero time is far below.
  constexpr std::int64_t kMinSeconds = -9'000'000'000LL, kMaxSeconds = 9'000'000'000LL;
  const std::int64_t clamped = std::clamp(seconds, kMinSeconds, kMaxSeconds);
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::seconds(clamped) +
                                                                      std::chrono::nanoseconds(nanos)));
}

std::string format_rfc3339(std::chrono::system_clock::time_point time) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[40];
  const auto n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  char fraction[8];
  std::snprintf(fraction, sizeof fraction, ".%03dZ", static_cast<int>(((ms % 1000) + 1000) % 1000));
  return std::string(text, n) + fraction;
}

}  // namespace inferscope::relay
