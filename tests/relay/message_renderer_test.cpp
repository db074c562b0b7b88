#include "relay/message_renderer.h"

#include <gtest/gtest.h>

#include "relay/utf8_truncate.h"

namespace inferscope::relay {
namespace {

Notification latency_notification(const std::string& status, const std::string& model) {
  Notification n;
  n.receiver = "relay";
  n.status = status;
  n.group_key = "{}:{alertname=\"InferenceLatencyHigh\", model=\"" + model + "\"}";
  n.group_labels = {{"alertname", "InferenceLatencyHigh"}, {"model", model}};
  n.external_url = "http://127.0.0.1:9093";
  Alert a;
  a.status = status;
  a.labels = {{"alertname", "InferenceLatencyHigh"}, {"model", model}, {"instance", "10.0.0.7:8000"}, {"severity", "critical"}};
  a.annotations = {{"summary", "e2e p99 4.2 s over the 2 s SLO"},
                   {"description", "p99 of inferscope_request_duration_seconds is 4.2 s for 10 m"},
                   {"runbook", "Open the stage panel: which stage grew?"}};
  a.starts_at = "2026-11-30T03:26:28.51Z";
  a.ends_at = status == "firing" ? "0001-01-01T00:00:00Z" : "2026-11-30T03:40:00Z";
  a.generator_url = "http://127.0.0.1:9090/graph?g0.expr=x";
  a.fingerprint = "f-" + model;
  n.alerts.push_back(a);
  return n;
}

// Tests that a firing section carries title, labels, summary, description, runbook and link.
TEST(MessageRendererTest, FiringSectionHasEverything) {
  const std::string text = render_section(latency_notification("firing", "m1"), MarkupStyle::kDingTalk, "");
  for (const char* want : {"#### [FIRING:1] InferenceLatencyHigh (model=m1)", "instance=10.0.0.7:8000",
                           "**Summary**: e2e p99 4.2 s over the 2 s SLO", "**Description**: p99 of",
                           "**Runbook**: Open the stage panel", "Since**: 2026-11-30T03:26:28.51Z",
                           "[source](http://127.0.0.1:9090/graph?g0.expr=x)", "[Alertmanager](http://127.0.0.1:9093)"}) {
    EXPECT_NE(text.find(want), std::string::npos) << "missing " << want << " in\n" << text;
  }
  EXPECT_EQ(text.find("Diagnosis"), std::string::npos);
}

// Tests the resolved title, the end time, and the slot saying what recovered (not "Diagnosis").
TEST(MessageRendererTest, ResolvedWithRecovery) {
  const Notification n = latency_notification("resolved", "m2");
  EXPECT_EQ(notification_title(n), "[RESOLVED] InferenceLatencyHigh (model=m2)");
  const std::string text = render_section(n, MarkupStyle::kSlack, "- decode per request: before 800 ms, during 2.60 s, after 810 ms");
  EXPECT_NE(text.find("*Resolved*: 2026-11-30T03:40:00Z"), std::string::npos) << text;
  EXPECT_NE(text.find("*Recovered*\n- decode per request: before 800 ms"), std::string::npos) << text;
  EXPECT_EQ(text.find("Diagnosis"), std::string::npos) << text;
  EXPECT_NE(text.find("<http://127.0.0.1:9090/graph?g0.expr=x|source>"), std::string::npos) << text;
}

// Tests that a group with firing and resolved alerts lists both, as Alertmanager grouped them.
TEST(MessageRendererTest, MixedGroup) {
  Notification n = latency_notification("firing", "m1");
  Alert resolved = n.alerts[0];
  resolved.status = "resolved";
  resolved.labels["instance"] = "10.0.0.8:8000";
  n.alerts.push_back(resolved);
  n.truncated_alerts = 3;
  const std::string text = render_section(n, MarkupStyle::kPlain, "");
  EXPECT_EQ(notification_title(n), "[FIRING:1] InferenceLatencyHigh (model=m1)");
  const auto firing_at = text.find("10.0.0.7"), resolved_header = text.find("Resolved\n"), resolved_at = text.find("10.0.0.8");
  EXPECT_LT(firing_at, resolved_header);
  EXPECT_LT(resolved_header, resolved_at);
  EXPECT_NE(text.find("+3 more alert(s)"), std::string::npos);
}

// Tests merging: several notifications in one message with a count line, none dropped while
// they fit, the rest left for the next message when they do not.
TEST(MessageRendererTest, MergesWithinLimit) {
  std::vector<Notification> batch;
  for (int i = 0; i < 5; ++i) batch.push_back(latency_notification(i % 2 == 0 ? "firing" : "resolved", std::string("m") + std::to_string(i)));
  const ComposedMessage all = compose_message(MarkupStyle::kWeCom, batch, 0, {});
  EXPECT_EQ(all.notifications, 5u);
  EXPECT_EQ(all.title, "[inferscope] 5 notifications (3 firing, 2 resolved)");
  for (int i = 0; i < 5; ++i) EXPECT_NE(all.text.find("model=m" + std::to_string(i)), std::string::npos);
  EXPECT_EQ(all.text.rfind("inferscope: 5 notifications", 0), 0u);

  const std::size_t one = render_section(batch[0], MarkupStyle::kWeCom, "").size();
  const ComposedMessage some = compose_message(MarkupStyle::kWeCom, batch, 2 * one + 200, {});
  EXPECT_EQ(some.notifications, 2u);
  EXPECT_LE(some.text.size(), 2 * one + 200);
  EXPECT_FALSE(some.truncated);
}

// Tests that one section larger than the limit is cut with the marker and fits the limit.
TEST(MessageRendererTest, TruncatesOversizedSection) {
  Notification n = latency_notification("firing", "m1");
  n.alerts[0].annotations["description"] = std::string(10000, 'd') + "模型";
  const ComposedMessage m = compose_message(MarkupStyle::kWeCom, {n}, 4096, {});
  EXPECT_TRUE(m.truncated);
  EXPECT_LE(m.text.size(), 4096u);
  EXPECT_EQ(m.text.substr(m.text.size() - kTruncatedMarker.size()), kTruncatedMarker);
  EXPECT_EQ(m.notifications, 1u);
}

}  // namespace
}  // namespace inferscope::relay
