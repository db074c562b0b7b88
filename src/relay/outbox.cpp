// SQLite outbox. Every write is one BEGIN IMMEDIATE transaction, so a webhook is acknowledged
// only after its rows are committed with synchronous=FULL (durable across a crash of the process
// or the machine).
#include "relay/outbox.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "common/sqlite_db.h"
#include "relay/detail/time_ms.h"

namespace inferscope::relay {
namespace {

using nlohmann::json;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS notifications(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  dedupe_key TEXT NOT NULL,
  received_ms INTEGER NOT NULL,
  payload TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS notifications_dedupe ON notifications(dedupe_key, received_ms);
CREATE TABLE IF NOT EXISTS deliveries(
  notification_id INTEGER NOT NULL REFERENCES notifications(id),
  channel TEXT NOT NULL,
  state INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_ms INTEGER NOT NULL,
  last_error TEXT NOT NULL DEFAULT '',
  updated_ms INTEGER NOT NULL,
  PRIMARY KEY(notification_id, channel));
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries(channel, state, next_attempt_ms);
CREATE TABLE IF NOT EXISTS channel_sends(channel TEXT NOT NULL, sent_ms INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS channel_sends_time ON channel_sends(channel, sent_ms);
CREATE TABLE IF NOT EXISTS alert_history(
  fingerprint TEXT NOT NULL,
  starts_ms INTEGER NOT NULL,
  alertname TEXT NOT NULL,
  labels TEXT NOT NULL,
  annotations TEXT NOT NULL,
  ends_ms INTEGER,
  updated_ms INTEGER NOT NULL,
  received_ms INTEGER NOT NULL DEFAULT 0,
  resolved_received_ms INTEGER,
  PRIMARY KEY(fingerprint, starts_ms));
CREATE INDEX IF NOT EXISTS alert_history_time ON alert_history(starts_ms);
CREATE TABLE IF NOT EXISTS relay_state(key TEXT PRIMARY KEY, value TEXT NOT NULL);
)sql";

using Statement = common::SqliteStatement;
using Transaction = common::SqliteTransaction;

std::string labels_text(const LabelMap& labels) {
  json j = json::object();
  for (const auto& [k, v] : labels) j[k] = v;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

LabelMap labels_from(const std::string& text) {
  LabelMap out;
  const json j = json::parse(text, nullptr, false);
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (v.is_string()) out.emplace(k, v.get<std::string>());
    }
  }
  return out;
}

// history_fingerprint keys an alert's history row: Alertmanager's fingerprint, else its labels.
std::string history_fingerprint(const Alert& a) { return a.fingerprint.empty() ? labels_text(a.labels) : a.fingerprint; }


}  // namespace

Result<std::unique_ptr<Outbox>> Outbox::open(const std::string& path, std::chrono::milliseconds busy_timeout) {
  auto db = common::open_sqlite(
      {.path = path,
       .what = "relay outbox",
       .busy_timeout = busy_timeout,
       .pragmas = {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON"},
       .schema = kSchema,
       .migrations = {
           // Files written before received_ms existed.
           "ALTER TABLE alert_history ADD COLUMN received_ms INTEGER NOT NULL DEFAULT 0",
           "ALTER TABLE alert_history ADD COLUMN resolved_received_ms INTEGER",
           // Files written before documents (reports) were delivered: every existing row is an alert.
           "ALTER TABLE notifications ADD COLUMN kind TEXT NOT NULL DEFAULT 'alert'",
           // Files written before resolved notifications said what recovered.
           "ALTER TABLE alert_history ADD COLUMN firing_record TEXT"}});
  if (!db) return db.error();
  return std::unique_ptr<Outbox>(new Outbox(db->release(), path));
}

Result<std::unique_ptr<Outbox>> Outbox::open_read_only(const std::string& path, std::chrono::milliseconds busy_timeout) {
  auto db = common::open_sqlite({.path = path, .what = "relay database", .busy_timeout = busy_timeout, .read_only = true});
  if (!db) return db.error();
  return std::unique_ptr<Outbox>(new Outbox(db->release(), path));
}

Outbox::~Outbox() { sqlite3_close_v2(db_); }

Error Outbox::db_error(const std::string& what) const {
  return make_error("cannot " + what + " in relay outbox " + path_ + ": " + sqlite3_errmsg(db_));
}

void Outbox::durable(bool on) {
  if (durable_ == on) return;
  // Cannot fail outside a transaction; if it did, FULL stays on, which is only slower.
  if (sqlite3_exec(db_, on ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL", nullptr, nullptr, nullptr) ==
      SQLITE_OK) {
    durable_ = on;
  }
}

Result<void> Outbox::exec(const char* sql) { return common::sqlite_exec(db_, sql, "relay outbox", path_); }

bool Outbox::queue_deliveries(std::int64_t id, const std::vector<std::string>& channels, std::int64_t now_ms) {
  Statement delivery(db_, "INSERT INTO deliveries(notification_id, channel, next_attempt_ms, updated_ms) VALUES(?1, ?2, ?3, ?3)");
  for (const std::string& channel : channels) {
    delivery.reset();
    delivery.bind(1, id);
    delivery.bind(2, channel);
    delivery.bind(3, now_ms);
    if (delivery.step() != SQLITE_DONE) return false;
  }
  return true;
}

Result<StoreOutcome> Outbox::store(const Notification& n, const std::string& key, const std::vector<std::string>& channels,
                                   std::int64_t now_ms, std::int64_t dedupe_window_ms) {
  std::lock_guard lock(mutex_);
  durable(true);  // the webhook is acknowledged after this commit: it must reach the disk
  Transaction tx(db_);
  if (!tx.began()) return db_error("begin a transaction");
  {
    Statement seen(db_, "SELECT 1 FROM notifications WHERE dedupe_key = ?1 AND received_ms > ?2 LIMIT 1");
    seen.bind(1, key);
    seen.bind(2, now_ms - dedupe_window_ms);
    const int rc = seen.step();
    if (rc == SQLITE_ROW) return StoreOutcome::kDuplicate;
    if (rc != SQLITE_DONE) return db_error("look up a duplicate");
  }
  Statement insert(db_, "INSERT INTO notifications(dedupe_key, received_ms, payload) VALUES(?1, ?2, ?3)");
  insert.bind(1, key);
  insert.bind(2, now_ms);
  insert.bind(3, notification_to_json(n));
  if (!insert.ok() || insert.step() != SQLITE_DONE) return db_error("store a notification");
  const std::int64_t id = sqlite3_last_insert_rowid(db_);
  if (!queue_deliveries(id, channels, now_ms)) return db_error("queue a delivery");
  Statement fired(db_,
                  "INSERT INTO alert_history(fingerprint, starts_ms, alertname, labels, annotations, ends_ms, updated_ms, "
                  "received_ms, resolved_received_ms) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8) "
                  "ON CONFLICT(fingerprint, starts_ms) DO UPDATE SET "
                  "ends_ms = COALESCE(excluded.ends_ms, alert_history.ends_ms), annotations = excluded.annotations, "
                  "updated_ms = excluded.updated_ms, "
                  "resolved_received_ms = COALESCE(alert_history.resolved_received_ms, excluded.resolved_received_ms)");
  for (const Alert& a : n.alerts) {
    const auto starts = parse_rfc3339(a.starts_at);
    fired.reset();
    fired.bind(1, history_fingerprint(a));
    fired.bind(2, starts ? detail::to_ms(*starts) : now_ms);
    fired.bind(3, a.alertname());
    fired.bind(4, labels_text(a.labels));
    fired.bind(5, labels_text(a.annotations));
    if (a.status == "resolved") {
      const auto ends = parse_rfc3339(a.ends_at);
      fired.bind(6, ends && ends->time_since_epoch().count() > 0 ? detail::to_ms(*ends) : now_ms);
      fired.bind(8, now_ms);
    } else {
      fired.bind_null(6);
      fired.bind_null(8);
    }
    fired.bind(7, now_ms);
    if (fired.step() != SQLITE_DONE) return db_error("record alert history");
  }
  if (!tx.commit()) return db_error("commit a notification");
  return StoreOutcome::kStored;
}

Result<std::int64_t> Outbox::store_document(const std::string& payload, const std::vector<std::string>& channels,
                                            std::int64_t now_ms) {
  std::lock_guard lock(mutex_);
  durable(true);
  Transaction tx(db_);
  if (!tx.began()) return db_error("begin a transaction");
  Statement insert(db_, "INSERT INTO notifications(dedupe_key, received_ms, payload, kind) VALUES('', ?1, ?2, 'document')");
  insert.bind(1, now_ms);
  insert.bind(2, payload);
  if (!insert.ok() || insert.step() != SQLITE_DONE) return db_error("store a document");
  const std::int64_t id = sqlite3_last_insert_rowid(db_);
  if (!queue_deliveries(id, channels, now_ms)) return db_error("queue a document delivery");
  if (!tx.commit()) return db_error("commit a document");
  return id;
}

Result<std::vector<PendingDelivery>> Outbox::due(const std::string& channel, std::int64_t now_ms, int limit) {
  std::lock_guard lock(mutex_);
  Statement q(db_,
              "SELECT n.id, n.payload, n.received_ms, d.attempts, n.kind FROM deliveries d JOIN notifications n "
              "ON n.id = d.notification_id WHERE d.channel = ?1 AND d.state = 0 AND d.next_attempt_ms <= ?2 "
              "ORDER BY n.id LIMIT ?3");
  q.bind(1, channel);
  q.bind(2, now_ms);
  q.bind(3, limit);
  std::vector<PendingDelivery> rows;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) {
    rows.push_back({q.int_at(0), q.text_at(1), q.int_at(2), static_cast<int>(q.int_at(3)), q.text_at(4)});
  }
  if (rc != SQLITE_DONE) return db_error("read due deliveries");
  return rows;
}

Result<std::optional<std::int64_t>> Outbox::next_due_ms(const std::string& channel) {
  std::lock_guard lock(mutex_);
  Statement q(db_, "SELECT MIN(next_attempt_ms) FROM deliveries WHERE channel = ?1 AND state = 0");
  q.bind(1, channel);
  if (q.step() != SQLITE_ROW) return db_error("read the next due delivery");
  if (q.null_at(0)) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(q.int_at(0));
}

Result<void> Outbox::update(const std::string& channel, const std::vector<DeliveryUpdate>& updates, std::int64_t now_ms,
                            std::optional<std::int64_t> sent_ms) {
  std::lock_guard lock(mutex_);
  durable(false);
  Transaction tx(db_);
  if (!tx.began()) return db_error("begin a transaction");
  Statement u(db_,
              "UPDATE deliveries SET state = ?1, attempts = ?2, next_attempt_ms = ?3, last_error = ?4, updated_ms = ?5 "
              "WHERE notification_id = ?6 AND channel = ?7");
  for (const DeliveryUpdate& d : updates) {
    u.reset();
    u.bind(1, static_cast<std::int64_t>(d.state));
    u.bind(2, d.attempts);
    u.bind(3, d.next_attempt_ms);
    u.bind(4, d.error);
    u.bind(5, now_ms);
    u.bind(6, d.notification_id);
    u.bind(7, channel);
    if (u.step() != SQLITE_DONE) return db_error("update a delivery");
  }
  if (sent_ms) {
    Statement s(db_, "INSERT INTO channel_sends(channel, sent_ms) VALUES(?1, ?2)");
    s.bind(1, channel);
    s.bind(2, *sent_ms);
    if (s.step() != SQLITE_DONE) return db_error("record a send");
  }
  if (!tx.commit()) return db_error("commit delivery updates");
  return {};
}

Result<std::vector<std::int64_t>> Outbox::sends_since(const std::string& channel, std::int64_t since_ms) {
  std::lock_guard lock(mutex_);
  Statement q(db_, "SELECT sent_ms FROM channel_sends WHERE channel = ?1 AND sent_ms >= ?2 ORDER BY sent_ms");
  q.bind(1, channel);
  q.bind(2, since_ms);
  std::vector<std::int64_t> out;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) out.push_back(q.int_at(0));
  if (rc != SQLITE_DONE) return db_error("read recent sends");
  return out;
}

Result<std::map<std::string, ChannelCounts>> Outbox::counts() {
  std::lock_guard lock(mutex_);
  Statement q(db_, "SELECT channel, state, COUNT(*) FROM deliveries GROUP BY channel, state");
  std::map<std::string, ChannelCounts> out;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) {
    ChannelCounts& c = out[q.text_at(0)];
    const auto state = q.int_at(1);
    (state == 0 ? c.pending : state == 1 ? c.delivered : c.failed) = q.int_at(2);
  }
  if (rc != SQLITE_DONE) return db_error("count deliveries");
  Statement e(db_,
              "SELECT channel, last_error FROM deliveries WHERE last_error != '' AND updated_ms = "
              "(SELECT MAX(updated_ms) FROM deliveries d2 WHERE d2.channel = deliveries.channel AND d2.last_error != '')");
  while ((rc = e.step()) == SQLITE_ROW) out[e.text_at(0)].last_error = e.text_at(1);
  if (rc != SQLITE_DONE) return db_error("read the last delivery errors");
  return out;
}

Result<std::vector<FiredAlert>> Outbox::fired_between(std::int64_t from_ms, std::int64_t to_ms) {
  std::lock_guard lock(mutex_);
  Statement q(db_,
              "SELECT fingerprint, alertname, labels, annotations, starts_ms, ends_ms, received_ms, resolved_received_ms "
              "FROM alert_history "
              "WHERE starts_ms < ?2 AND (ends_ms IS NULL OR ends_ms > ?1) ORDER BY starts_ms, fingerprint");
  q.bind(1, from_ms);
  q.bind(2, to_ms);
  std::vector<FiredAlert> out;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) {
    FiredAlert a;
    a.fingerprint = q.text_at(0);
    a.alertname = q.text_at(1);
    a.labels = labels_from(q.text_at(2));
    a.annotations = labels_from(q.text_at(3));
    a.starts_at = detail::from_ms(q.int_at(4));
    if (!q.null_at(5)) a.ends_at = detail::from_ms(q.int_at(5));
    a.received_at = detail::from_ms(q.int_at(6));
    if (!q.null_at(7)) a.resolved_received_at = detail::from_ms(q.int_at(7));
    out.push_back(std::move(a));
  }
  if (rc != SQLITE_DONE) return db_error("read alert history");
  return out;
}

Result<void> Outbox::set_state(const std::string& key, const std::string& value) {
  std::lock_guard lock(mutex_);
  durable(true);
  Statement s(db_, "INSERT INTO relay_state(key, value) VALUES(?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  s.bind(1, key);
  s.bind(2, value);
  if (s.step() != SQLITE_DONE) return db_error("write relay state");
  return {};
}

Result<std::optional<std::string>> Outbox::state(const std::string& key) {
  std::lock_guard lock(mutex_);
  Statement q(db_, "SELECT value FROM relay_state WHERE key = ?1");
  q.bind(1, key);
  const int rc = q.step();
  if (rc == SQLITE_ROW) return std::optional<std::string>(q.text_at(0));
  if (rc != SQLITE_DONE) return db_error("read relay state");
  return std::optional<std::string>();
}

Result<void> Outbox::keep_firing_record(const Alert& alert, const std::string& record) {
  const auto starts = parse_rfc3339(alert.starts_at);
  if (!starts) return {};
  std::lock_guard lock(mutex_);
  durable(true);
  Statement s(db_,
              "UPDATE alert_history SET firing_record = ?3 WHERE fingerprint = ?1 AND starts_ms = ?2 "
              "AND firing_record IS NULL");
  s.bind(1, history_fingerprint(alert));
  s.bind(2, detail::to_ms(*starts));
  s.bind(3, record);
  if (s.step() != SQLITE_DONE) return db_error("keep an alert's firing diagnosis");
  return {};
}

Result<std::optional<std::string>> Outbox::firing_record(const Alert& alert) {
  const auto starts = parse_rfc3339(alert.starts_at);
  if (!starts) return std::optional<std::string>();
  std::lock_guard lock(mutex_);
  Statement q(db_, "SELECT firing_record FROM alert_history WHERE fingerprint = ?1 AND starts_ms = ?2 "
                   "AND firing_record IS NOT NULL");
  q.bind(1, history_fingerprint(alert));
  q.bind(2, detail::to_ms(*starts));
  const int rc = q.step();
  if (rc == SQLITE_ROW) return std::optional<std::string>(q.text_at(0));
  if (rc != SQLITE_DONE) return db_error("read an alert's firing diagnosis");
  return std::optional<std::string>();
}

Result<void> Outbox::prune(std::int64_t before_ms, std::int64_t sends_before_ms) {
  std::lock_guard lock(mutex_);
  Transaction tx(db_);
  if (!tx.began()) return db_error("begin a transaction");
  Statement d(db_, "DELETE FROM deliveries WHERE state = 1 AND updated_ms < ?1");
  d.bind(1, before_ms);
  Statement n(db_,
              "DELETE FROM notifications WHERE received_ms < ?1 AND NOT EXISTS "
              "(SELECT 1 FROM deliveries WHERE deliveries.notification_id = notifications.id)");
  n.bind(1, before_ms);
  Statement h(db_, "DELETE FROM alert_history WHERE ends_ms IS NOT NULL AND ends_ms < ?1");
  h.bind(1, before_ms);
  Statement s(db_, "DELETE FROM channel_sends WHERE sent_ms < ?1");
  s.bind(1, sends_before_ms);
  for (Statement* st : {&d, &n, &h, &s}) {
    if (st->step() != SQLITE_DONE) return db_error("prune old rows");
  }
  if (!tx.commit()) return db_error("commit pruning");
  return {};
}

}  // namespace inferscope::relay
