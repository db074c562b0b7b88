#include "relay/notification.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace inferscope::relay {
namespace {

std::string testdata(const std::string& name) {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/relay/testdata/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Tests that Alertmanager 0.25's firing payload (verbatim capture) parses field by field.
TEST(NotificationTest, ParsesAlertmanagerFiringPayload) {
  auto n = parse_notification(testdata("firing.json"));
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(n->receiver, "webhook");
  EXPECT_EQ(n->status, "firing");
  EXPECT_EQ(n->group_key, "{}:{alertname=\"AlwaysFiring\"}");
  EXPECT_EQ(n->external_url, "http://vm:19093");
  EXPECT_EQ(n->group_labels.at("alertname"), "AlwaysFiring");
  EXPECT_EQ(n->common_labels.at("team"), "infra");
  EXPECT_EQ(n->common_annotations.at("summary"), "Always firing, value=1");
  ASSERT_EQ(n->alerts.size(), 1u);
  const Alert& a = n->alerts[0];
  EXPECT_EQ(a.status, "firing");
  EXPECT_EQ(a.alertname(), "AlwaysFiring");
  EXPECT_EQ(a.annotation("description"), "labels=map[] uptime 1h 2m 3s");
  EXPECT_EQ(a.starts_at, "2026-11-30T03:26:28.51Z");
  EXPECT_EQ(a.ends_at, "0001-01-01T00:00:00Z");
  EXPECT_EQ(a.fingerprint, "91cbcab5ee17d692");
  EXPECT_EQ(a.generator_url, "http://vm:19090/graph?g0.expr=vector%281%29&g0.tab=1");
}

// Tests that the resolved and truncated captures parse, truncatedAlerts included.
TEST(NotificationTest, ParsesResolvedAndTruncated) {
  auto resolved = parse_notification(testdata("resolved.json"));
  ASSERT_TRUE(resolved) << resolved.error().message;
  EXPECT_EQ(resolved->status, "resolved");
  EXPECT_EQ(resolved->alerts[0].ends_at, "2026-11-30T03:30:29Z");
  auto truncated = parse_notification(testdata("truncated.json"));
  ASSERT_TRUE(truncated) << truncated.error().message;
  EXPECT_EQ(truncated->truncated_alerts, 2);
  EXPECT_EQ(truncated->group_key, "{}/{team=\"trunc\"}:{team=\"trunc\"}");
}

// Tests that malformed payloads are rejected with a message naming the problem.
TEST(NotificationTest, RejectsMalformedPayloads) {
  auto check = [](const std::string& body, const std::string& want) {
    auto n = parse_notification(body);
    ASSERT_FALSE(n) << "accepted: " << body;
    EXPECT_NE(n.error().message.find(want), std::string::npos) << "got " << n.error().message << "; want " << want;
    EXPECT_EQ(n.error().message.rfind("cannot parse Alertmanager webhook: ", 0), 0u) << n.error().message;
  };
  const std::string alert = R"({"status":"firing","labels":{"alertname":"A"}})";
  check("", "not valid JSON");
  check("{", "not valid JSON");
  check("[]", "JSON object");
  check(R"({"version":"3","status":"firing","groupKey":"k","alerts":[)" + alert + "]}", "'version' must be \"4\"");
  check(R"({"status":"firing","groupKey":"k","alerts":[)" + alert + "]}", "'version'");
  check(R"({"version":"4","status":"burning","groupKey":"k","alerts":[)" + alert + "]}", "'status'");
  check(R"({"version":"4","status":"firing","alerts":[)" + alert + "]}", "'groupKey' is missing");
  check(R"({"version":"4","status":"firing","groupKey":"k"})", "'alerts' must be an array");
  check(R"({"version":"4","status":"firing","groupKey":"k","alerts":[]})", "'alerts' is empty");
  check(R"({"version":"4","status":"firing","groupKey":"k","alerts":[1]})", "alerts[0] must be an object");
  check(R"({"version":"4","status":"firing","groupKey":"k","alerts":[{"status":"firing"}]})", "alerts[0].labels is missing");
  check(R"({"version":"4","status":"firing","groupKey":"k","alerts":[{"status":"x","labels":{}}]})", "alerts[0].status");
  check(R"({"version":"4","status":"firing","groupKey":"k","alerts":[{"status":"firing","labels":{"a":1}}]})",
        "'labels.a' must be a string");
  check(R"({"version":"4","status":"firing","groupKey":7,"alerts":[)" + alert + "]}", "'groupKey' must be a string");
  check(R"({"version":"4","status":"firing","groupKey":"k","truncatedAlerts":"2","alerts":[)" + alert + "]}",
        "'truncatedAlerts'");
}

// Tests that serialising and parsing again gives the same notification.
TEST(NotificationTest, JsonRoundTrip) {
  auto n = parse_notification(testdata("truncated.json"));
  ASSERT_TRUE(n);
  auto again = parse_notification(notification_to_json(*n));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(notification_to_json(*again), notification_to_json(*n));
  EXPECT_EQ(again->truncated_alerts, 2);
  EXPECT_EQ(again->alerts[0].labels, n->alerts[0].labels);
}

// Tests that the dedupe key ignores alert order but not group key, status, the fingerprint set,
// an alert's startsAt or an alert's own status.
TEST(NotificationTest, DedupeKey) {
  Notification a;
  a.group_key = "g";
  a.status = "firing";
  a.alerts = {Alert{.status = "firing", .fingerprint = "f1"}, Alert{.status = "firing", .fingerprint = "f2"}};
  Notification reordered = a;
  std::swap(reordered.alerts[0], reordered.alerts[1]);
  reordered.common_annotations["summary"] = "value changed";
  EXPECT_EQ(dedupe_key(a), dedupe_key(reordered));
  EXPECT_EQ(dedupe_key(a).size(), 64u);
  Notification other_status = a;
  other_status.status = "resolved";
  EXPECT_NE(dedupe_key(a), dedupe_key(other_status));
  Notification other_group = a;
  other_group.group_key = "h";
  EXPECT_NE(dedupe_key(a), dedupe_key(other_group));
  Notification fewer = a;
  fewer.alerts.pop_back();
  EXPECT_NE(dedupe_key(a), dedupe_key(fewer));
  // The same alert firing again after it resolved carries a new startsAt: not a duplicate.
  Notification refired = a;
  refired.alerts[0].starts_at = "2026-11-30T14:00:00Z";
  EXPECT_NE(dedupe_key(a), dedupe_key(refired));
  // One alert of a still-firing group resolved: the group's status stays "firing", and the
  // notification carries that resolve. Not a duplicate of the one that fired both.
  Notification partly_resolved = a;
  partly_resolved.alerts[1].status = "resolved";
  partly_resolved.alerts[1].ends_at = "2026-11-30T14:05:00Z";
  EXPECT_NE(dedupe_key(a), dedupe_key(partly_resolved));
}

// Tests RFC 3339 parsing: fractions, offsets, the Go zero time, and malformed input.
TEST(NotificationTest, Rfc3339) {
  using std::chrono::milliseconds;
  auto ms = [](const std::string& s) {
    auto t = parse_rfc3339(s);
    return t ? std::chrono::duration_cast<milliseconds>(t->time_since_epoch()).count() : -1;
  };
  EXPECT_EQ(ms("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ms("2026-11-30T03:26:28.51Z"), 1796009188510);
  EXPECT_EQ(ms("2026-11-30T11:26:28.510+08:00"), 1796009188510);
  EXPECT_EQ(ms("2026-11-30T03:30:29.721085169Z"), 1796009429721);
  EXPECT_LT(parse_rfc3339("0001-01-01T00:00:00Z")->time_since_epoch().count(), 0);
  for (const char* bad : {"", "2026-11-30", "2026-11-30T03:26:28", "2026-13-30T03:26:28Z", "2026-11-30T03:26:28.Z",
                          "2026-11-30T03:26:28Zjunk", "2026-11-30T03:26:28+0800"}) {
    EXPECT_FALSE(parse_rfc3339(bad)) << bad;
  }
  EXPECT_EQ(format_rfc3339(*parse_rfc3339("2026-11-30T03:26:28.51Z")), "2026-11-30T03:26:28.510Z");
}

}  // namespace
}  // namespace inferscope::relay
