// File: outbox.h
// Outbox: the relay's durable state in one SQLite file (WAL, synchronous=FULL): received
// notifications, one delivery row per (notification, channel) with its attempts and back-off,
// each channel's recent sends (for rate limits across restarts), the fired-alert history and a
// small key/value table (watchdog). Example:
//   auto box = Outbox::open("relay.db", 2s);  box->store(n, key, {"oncall"}, now_ms, window_ms);
// Thread-safe: one connection behind a mutex; every call is one short transaction. Times are
// Unix milliseconds (wall clock) because they must survive restarts.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <inferscope/common/result.h>

#include "relay/notification.h"

struct sqlite3;

namespace inferscope::relay {

// DeliveryState is a delivery row's state.
enum class DeliveryState { kPending = 0, kDelivered = 1, kFailed = 2 };

// PendingDelivery is one due row with its notification.
struct PendingDelivery {
  std::int64_t notification_id = 0;
  std::string payload;  // notification_to_json
  std::int64_t received_ms = 0;
  int attempts = 0;
  std::string kind = "alert";  // "alert" (payload: notification_to_json) or "document" (document_to_json)
};

// DeliveryUpdate is the outcome of one attempt for one row.
struct DeliveryUpdate {
  std::int64_t notification_id = 0;
  DeliveryState state = DeliveryState::kPending;
  int attempts = 0;
  std::int64_t next_attempt_ms = 0;
  std::string error;
};

// StoreOutcome says what store() did.
enum class StoreOutcome { kStored, kDuplicate };

// ChannelCounts are the rows of one channel by state.
struct ChannelCounts {
  std::int64_t pending = 0, delivered = 0, failed = 0;
  std::string last_error;
};

class Outbox {
 public:
  // open opens or creates the file and its schema. Errors name the path and SQLite's message.
  static Result<std::unique_ptr<Outbox>> open(const std::string& path, std::chrono::milliseconds busy_timeout);
  // open_read_only opens an existing file for queries only (another process may be writing it);
  // it creates nothing. Errors name the path.
  static Result<std::unique_ptr<Outbox>> open_read_only(const std::string& path, std::chrono::milliseconds busy_timeout);
  ~Outbox();
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // store commits, in one transaction: the notification, a pending delivery per channel, and the
  // history of its alerts; unless a notification with the same dedupe key arrived within
  // dedupe_window_ms (then nothing is written: kDuplicate). Errors mean nothing was stored.
  Result<StoreOutcome> store(const Notification& notification, const std::string& dedupe_key,
                             const std::vector<std::string>& channels, std::int64_t now_ms,
                             std::int64_t dedupe_window_ms);

  // store_document commits, in one transaction (synchronous=FULL), a document (payload:
  // document_to_json) and a pending delivery per channel; no dedupe, no alert history. Returns its id.
  Result<std::int64_t> store_document(const std::string& payload, const std::vector<std::string>& channels,
                                      std::int64_t now_ms);

  // due returns up to `limit` pending rows of `channel` whose next attempt is at or before now_ms,
  // oldest first.
  Result<std::vector<PendingDelivery>> due(const std::string& channel, std::int64_t now_ms, int limit);
  // next_due_ms returns the earliest next attempt of a pending row of `channel`, if any.
  Result<std::optional<std::int64_t>> next_due_ms(const std::string& channel);
  // update applies attempt outcomes of `channel` and, when sent_ms is set, notes that the channel
  // sent a message then (for its rate limit), in one transaction. It commits without waiting for
  // fsync (synchronous=NORMAL): a crash may lose the "delivered" mark, so a message may be sent
  // twice, but never lost; the next synchronous=FULL commit (a store) makes it durable too.
  Result<void> update(const std::string& channel, const std::vector<DeliveryUpdate>& updates, std::int64_t now_ms,
                      std::optional<std::int64_t> sent_ms = std::nullopt);

  // sends_since lists the channel's sends at or after since_ms.
  Result<std::vector<std::int64_t>> sends_since(const std::string& channel, std::int64_t since_ms);

  // counts returns the rows per channel by state.
  Result<std::map<std::string, ChannelCounts>> counts();
  // fired_between returns history rows whose [starts, ends) overlaps [from_ms, to_ms).
  Result<std::vector<FiredAlert>> fired_between(std::int64_t from_ms, std::int64_t to_ms);

  // set_state / state read and write the key/value table.
  Result<void> set_state(const std::string& key, const std::string& value);
  Result<std::optional<std::string>> state(const std::string& key);

  // keep_firing_record stores `record` (the diagnosis attached when the alert fired; opaque here) on
  // the alert's history row, keyed by its fingerprint and start, unless one is kept already: a
  // repeated notification of the same firing keeps the first. Durable (synchronous=FULL). An alert
  // without a parseable startsAt has no row to keep it on (nothing is written).
  Result<void> keep_firing_record(const Alert& alert, const std::string& record);
  // firing_record returns what keep_firing_record kept for the alert (same fingerprint and start).
  Result<std::optional<std::string>> firing_record(const Alert& alert);

  // prune deletes delivered rows and ended history older than before_ms, and sends older than
  // sends_before_ms (failed and pending rows stay).
  Result<void> prune(std::int64_t before_ms, std::int64_t sends_before_ms);

 private:
  Outbox(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Result<void> exec(const char* sql);
  // queue_deliveries inserts a pending delivery of row `id` per channel (inside the caller's
  // transaction, under mutex_); false on a database error.
  bool queue_deliveries(std::int64_t id, const std::vector<std::string>& channels, std::int64_t now_ms);
  // durable switches between synchronous=FULL (true: fsync at commit) and NORMAL.
  void durable(bool on);
  Error db_error(const std::string& what) const;

  std::mutex mutex_;
  bool durable_ = true;  // the connection's current synchronous setting is FULL
  sqlite3* db_;
  std::string path_;
};

}  // namespace inferscope::relay
