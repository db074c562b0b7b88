#include "relay/outbox.h"

#include <sqlite3.h>

#include <gtest/gtest.h>

#include "relay_test_util.h"

namespace inferscope::relay {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;

Notification make(const std::string& name, const std::string& status, const std::string& fingerprint) {
  auto n = parse_notification(testing::webhook_body(name, status, {fingerprint}));
  if (!n) std::abort();
  return *n;
}

// Tests that stored notifications survive closing and reopening the file, and that WAL is on.
TEST(OutboxTest, DurableAcrossReopen) {
  TempDir dir;
  const std::string path = (dir.path() / "relay.db").string();
  {
    auto box = Outbox::open(path, 1s);
    ASSERT_TRUE(box) << box.error().message;
    const Notification n = make("A", "firing", "f1");
    auto stored = (*box)->store(n, dedupe_key(n), {"chat", "mail"}, 1000, 0);
    ASSERT_TRUE(stored) << stored.error().message;
    EXPECT_EQ(*stored, StoreOutcome::kStored);
  }
  auto box = Outbox::open(path, 1s);
  ASSERT_TRUE(box);
  auto due = (*box)->due("chat", 1000, 10);
  ASSERT_TRUE(due);
  ASSERT_EQ(due->size(), 1u);
  auto n = parse_notification((*due)[0].payload);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->alerts[0].fingerprint, "f1");
  EXPECT_EQ((*due)[0].received_ms, 1000);
  EXPECT_EQ((*(*box)->due("mail", 1000, 10)).size(), 1u);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &q, nullptr);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)), "wal");
  sqlite3_finalize(q);
  sqlite3_close(raw);
}

// Tests dedupe within the window only, and that a different status is not a duplicate.
TEST(OutboxTest, DedupeWindow) {
  TempDir dir;
  auto box = Outbox::open((dir.path() / "relay.db").string(), 1s);
  ASSERT_TRUE(box);
  const Notification n = make("A", "firing", "f1");
  const Notification resolved = make("A", "resolved", "f1");
  EXPECT_EQ(*(*box)->store(n, dedupe_key(n), {"c"}, 1000, 60000), StoreOutcome::kStored);
  EXPECT_EQ(*(*box)->store(n, dedupe_key(n), {"c"}, 30000, 60000), StoreOutcome::kDuplicate);
  EXPECT_EQ(*(*box)->store(resolved, dedupe_key(resolved), {"c"}, 30000, 60000), StoreOutcome::kStored);
  EXPECT_EQ(*(*box)->store(n, dedupe_key(n), {"c"}, 61001, 60000), StoreOutcome::kStored);
  EXPECT_EQ((*(*box)->due("c", 100000, 10)).size(), 3u);
}

// Tests back-off scheduling, delivered and failed states, and the counts.
TEST(OutboxTest, DeliveryStates) {
  TempDir dir;
  auto box = Outbox::open((dir.path() / "relay.db").string(), 1s);
  ASSERT_TRUE(box);
  for (const char* f : {"f1", "f2", "f3"}) {
    const Notification n = make("A", "firing", f);
    ASSERT_TRUE((*box)->store(n, dedupe_key(n), {"c"}, 1000, 0));
  }
  auto due = *(*box)->due("c", 1000, 10);
  ASSERT_EQ(due.size(), 3u);
  ASSERT_TRUE((*box)->update("c",
                             {{due[0].notification_id, DeliveryState::kDelivered, 1, 0, ""},
                              {due[1].notification_id, DeliveryState::kPending, 1, 5000, "HTTP 500"},
                              {due[2].notification_id, DeliveryState::kFailed, 16, 0, "HTTP 404"}},
                             1100));
  EXPECT_TRUE((*(*box)->due("c", 4999, 10)).empty());
  auto later = *(*box)->due("c", 5000, 10);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].attempts, 1);
  EXPECT_EQ(**(*box)->next_due_ms("c"), 5000);
  auto counts = *(*box)->counts();
  EXPECT_EQ(counts["c"].pending, 1);
  EXPECT_EQ(counts["c"].delivered, 1);
  EXPECT_EQ(counts["c"].failed, 1);
  EXPECT_FALSE(counts["c"].last_error.empty());
  // Pruning drops old delivered rows but keeps the failed and pending ones.
  ASSERT_TRUE((*box)->prune(2000, 2000));
  counts = *(*box)->counts();
  EXPECT_EQ(counts["c"].delivered, 0);
  EXPECT_EQ(counts["c"].failed, 1);
  EXPECT_EQ(counts["c"].pending, 1);
}

// Tests the fired-alert history: firing opens an interval, resolved closes it, and the query
// returns intervals overlapping [from, to).
TEST(OutboxTest, FiredBetween) {
  TempDir dir;
  auto box = Outbox::open((dir.path() / "relay.db").string(), 1s);
  ASSERT_TRUE(box);
  const Notification firing = make("LatencyHigh", "firing", "f1");    // starts 03:00, open
  const Notification resolved = make("LatencyHigh", "resolved", "f1");  // ends 03:10
  const Notification other = make("Other", "firing", "f2");
  ASSERT_TRUE((*box)->store(firing, dedupe_key(firing), {}, 1, 0));
  ASSERT_TRUE((*box)->store(other, dedupe_key(other), {}, 1, 0));
  const auto t = [](const char* s) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(parse_rfc3339(s)->time_since_epoch()).count();
  };
  auto open_now = *(*box)->fired_between(t("2026-11-30T04:00:00Z"), t("2026-11-30T05:00:00Z"));
  EXPECT_EQ(open_now.size(), 2u);  // both still firing
  ASSERT_TRUE((*box)->store(resolved, dedupe_key(resolved), {}, 2, 0));
  ASSERT_TRUE((*box)->store(resolved, dedupe_key(resolved), {}, 7, 0));  // a repeat keeps the first receipt time
  auto after = *(*box)->fired_between(t("2026-11-30T04:00:00Z"), t("2026-11-30T05:00:00Z"));
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].alertname, "Other");
  auto during = *(*box)->fired_between(t("2026-11-30T03:05:00Z"), t("2026-11-30T03:06:00Z"));
  ASSERT_EQ(during.size(), 2u);
  EXPECT_EQ(during[0].fingerprint == "f1" ? during[0].ends_at.has_value() : during[1].ends_at.has_value(), true);
  EXPECT_EQ(during[0].labels.at("severity"), "critical");
  for (const FiredAlert& a : during) {
    EXPECT_EQ(a.received_at.time_since_epoch(), std::chrono::milliseconds(1));
    if (a.fingerprint == "f1") {
      ASSERT_TRUE(a.resolved_received_at);
      EXPECT_EQ(a.resolved_received_at->time_since_epoch(), std::chrono::milliseconds(2));
    } else {
      EXPECT_FALSE(a.resolved_received_at);
    }
  }
  EXPECT_TRUE((*(*box)->fired_between(t("2026-11-30T02:00:00Z"), t("2026-11-30T03:00:00Z"))).empty());
}

// Tests that a write blocked by another connection's lock fails (after busy_timeout) instead of
// claiming success, and works again once the lock is gone.
TEST(OutboxTest, LockedDatabaseFailsStore) {
  TempDir dir;
  const std::string path = (dir.path() / "relay.db").string();
  auto box = Outbox::open(path, 100ms);
  ASSERT_TRUE(box);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  const Notification n = make("A", "firing", "f1");
  auto stored = (*box)->store(n, dedupe_key(n), {"c"}, 1000, 0);
  ASSERT_FALSE(stored);
  EXPECT_NE(stored.error().message.find(path), std::string::npos) << stored.error().message;
  ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  EXPECT_TRUE((*box)->store(n, dedupe_key(n), {"c"}, 1000, 0));
}

// Tests that an unusable path is reported with the path.
TEST(OutboxTest, BadPath) {
  auto box = Outbox::open("/nonexistent-dir/relay.db", 100ms);
  ASSERT_FALSE(box);
  EXPECT_NE(box.error().message.find("/nonexistent-dir/relay.db"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::relay
