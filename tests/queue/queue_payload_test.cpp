// Tests the parsers of what queue systems store in Redis (queue_payload.h).
#include "queue/queue_payload.h"

#include <gtest/gtest.h>

namespace inferscope::queue {
namespace {

// Tests RQ timestamps: with and without microseconds, and refusals.
TEST(QueuePayloadTest, RqTimestamps) {
  EXPECT_DOUBLE_EQ(parse_rq_timestamp("1970-01-01T00:00:00Z").value(), 0);
  EXPECT_DOUBLE_EQ(parse_rq_timestamp("2026-12-01T16:07:04.146997Z").value(), 1796141224.146997);
  EXPECT_DOUBLE_EQ(parse_rq_timestamp("2024-02-29T23:59:59.5Z").value(), 1709251199.5);
  for (const char* bad : {"", "yesterday", "2026-12-01 16:07:04Z", "2026-12-01T16:07:04", "2026-12-01T16:07:04.Z",
                          "2026-13-01T00:00:00Z", "2025-02-29T00:00:00Z", "2026-12-01T24:00:00Z",
                          "1969-12-31T23:59:59Z", "2026-12-01T16:07:04.1Zjunk", "-026-12-01T16:07:04Z"}) {
    EXPECT_FALSE(parse_rq_timestamp(bad).has_value()) << bad;
  }
}

// Tests the Celery task envelope: the id, the task name and the opt-in enqueue header.
TEST(QueuePayloadTest, CeleryMessages) {
  auto m = parse_celery_message(
      R"({"body": "W10=", "headers": {"id": "abc", "task": "t.work", "inferscope_enqueued_at": 1796141224.5},
          "properties": {"priority": 0}})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->id, "abc");
  EXPECT_EQ(m->task, "t.work");
  EXPECT_DOUBLE_EQ(m->enqueued_at.value(), 1796141224.5);
  auto plain = parse_celery_message(R"({"headers": {"id": "x", "eta": null}})");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->enqueued_at.has_value());
  auto as_string = parse_celery_message(R"({"headers": {"id": "x", "inferscope_enqueued_at": "12.5"}})");
  ASSERT_TRUE(as_string.ok());
  EXPECT_DOUBLE_EQ(as_string->enqueued_at.value(), 12.5);
  for (const char* bad : {"not json", "[]", "{}", R"({"headers": []})", R"({"headers": {"task": "t"}})",
                          R"({"headers": {"id": ""}})", R"({"headers": {"id": "x", "inferscope_enqueued_at": "soon"}})",
                          R"({"headers": {"id": "x", "inferscope_enqueued_at": -1}})"}) {
    auto r = parse_celery_message(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message.rfind("cannot parse celery message: ", 0), 0u) << r.error().message;
  }
}

// Tests a worker heartbeat as Celery 5.2 publishes it (captured from a live worker).
TEST(QueuePayloadTest, CeleryWorkerEvents) {
  const std::string captured =
      R"({"body": "eyJob3N0bmFtZSI6ICJ3MUB2bSIsICJ1dGNvZmZzZXQiOiAwLCAicGlkIjogMTk2ODEsICJjbG9jayI6IDQsICJmcmVxIjogMi4wLCAiYWN0aXZlIjogMCwgInByb2Nlc3NlZCI6IDAsICJsb2FkYXZnIjogWzQuODMsIDMuNDYsIDEuNzRdLCAic3dfaWRlbnQiOiAicHktY2VsZXJ5IiwgInN3X3ZlciI6ICI1LjIuNiIsICJzd19zeXMiOiAiTGludXgiLCAidGltZXN0YW1wIjogMTc5NjE0ODQ2NC4xNzQyNDQ0LCAidHlwZSI6ICJ3b3JrZXItaGVhcnRiZWF0In0=", "content-encoding": "utf-8", "content-type": "application/json", "headers": {"hostname": "w1@vm"}, "properties": {"delivery_mode": 1, "delivery_info": {"exchange": "celeryev", "routing_key": "worker.heartbeat"}, "priority": 0, "body_encoding": "base64", "delivery_tag": "5ddc086e-5c35-4abc-96ea-3512c39e9021"}})";
  auto e = parse_celery_event(captured);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->type, "worker-heartbeat");
  EXPECT_EQ(e->hostname, "w1@vm");
  EXPECT_DOUBLE_EQ(e->freq, 2.0);
  EXPECT_EQ(e->active, 0);
  EXPECT_DOUBLE_EQ(e->timestamp, 1796148464.1742444);
  auto plain = parse_celery_event(
      R"({"body": "{\"type\": \"worker-offline\", \"hostname\": \"h\", \"timestamp\": 5}", "properties": {}})");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->type, "worker-offline");
  for (const char* bad : {"", "{}", R"({"body": 1})", R"({"body": "!!", "properties": {"body_encoding": "base64"}})",
                          R"({"body": "{\"type\": \"task-sent\", \"hostname\": \"h\", \"timestamp\": 5}"})",
                          R"({"body": "{\"type\": \"worker-heartbeat\", \"timestamp\": 5}"})",
                          R"({"body": "{\"type\": \"worker-heartbeat\", \"hostname\": \"h\"}"})",
                          R"({"body": "{\"type\": \"worker-heartbeat\", \"hostname\": \"h\", \"timestamp\": 5, \"freq\": 0}"})",
                          R"({"body": "{\"type\": \"worker-heartbeat\", \"hostname\": \"h\", \"timestamp\": 5, \"active\": -1}"})"}) {
    EXPECT_FALSE(parse_celery_event(bad).ok()) << bad;
  }
}

// Tests stream IDs, label safety and base64.
TEST(QueuePayloadTest, StreamIdsLabelsAndBase64) {
  const auto id = parse_stream_id("1796148464174-3");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->ms, 1796148464174u);
  EXPECT_EQ(id->seq, 3u);
  for (const char* bad : {"", "-", "1-", "-1", "1", "a-1", "1-a", "1-2-3", "99999999999999999999-0"}) {
    EXPECT_FALSE(parse_stream_id(bad).has_value()) << bad;
  }
  EXPECT_TRUE(is_label_safe("default"));
  EXPECT_TRUE(is_label_safe("файлы"));
  EXPECT_FALSE(is_label_safe(""));
  EXPECT_FALSE(is_label_safe(std::string(201, 'a')));
  EXPECT_FALSE(is_label_safe(std::string("celery\x06\x16") + "3"));
  EXPECT_FALSE(is_label_safe("\xff\xfe"));
  EXPECT_FALSE(is_label_safe("\xc0\xaf"));  // overlong '/'
  EXPECT_EQ(base64_decode("aGVsbG8=").value(), "hello");
  EXPECT_EQ(base64_decode("aGVsbG8").value(), "hello");
  EXPECT_EQ(base64_decode("").value(), "");
  EXPECT_FALSE(base64_decode("a").has_value());
  EXPECT_FALSE(base64_decode("aGVs=G8=").has_value());
  EXPECT_FALSE(base64_decode("aGVsbG8*").has_value());
}

}  // namespace
}  // namespace inferscope::queue
