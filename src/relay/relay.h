// File: relay.h
// Relay: receives Alertmanager v4 webhooks, stores each notification in a durable SQLite outbox
// and delivers it to chat robots, webhooks and email with retries, rate limits and merging.
// Example:
//   auto relay = Relay::open(config, registry);  if (!relay) { die(relay.error().message); }
//   (*relay)->start();  WebhookReply r = (*relay)->handle_webhook(body);  ...  (*relay)->stop();
// Thread-safe: handle_webhook and the queries may be called from any thread while the workers
// run. handle_webhook never throws and answers 200 only after the notification is committed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/common/result.h>
#include <inferscope/metrics/registry.h>

#include "relay/document.h"
#include "relay/notification.h"
#include "relay/relay_config.h"

namespace inferscope::relay {

// WebhookReply is the HTTP answer to one webhook POST; the body is JSON
// (Content-Type: application/json): {"status":"stored"|"duplicate"|"ignored"} or an OpenAI-format
// error {"error":{"message","type","param","code"}}.
struct WebhookReply {
  int status = 200;
  std::string body;
};

// RelayEvent is one line-worthy event (delivered, retried, failed, watchdog), for `up`'s log.
struct RelayEvent {
  // "delivered" | "retried" | "failed" | "watchdog_missing" | "watchdog_restored" for alerts;
  // "report_sent" | "report_retried" | "report_failed" for documents (text is then the whole line:
  // "report sent to oncall (5120 bytes)", "report failed: channel oncall after 16 attempts: ...").
  std::string kind;
  std::string channel;  // channel name, or empty
  std::string text;     // one line, no secrets (e.g. "3 notification(s) [FIRING] HighLatency")
};

// FiringDiagnosis is what diagnose attaches to a firing notification: the Markdown shown, and the
// record (opaque to the relay) handed back to `recovered` when the alert resolves.
struct FiringDiagnosis {
  std::string markdown;
  std::string record;
};

// RelayOptions are the process-level hooks; all optional.
struct RelayOptions {
  // wall_clock returns the current time; persisted times (back-off, history, watchdog) use it.
  // Tests inject a hand-moved clock.
  std::function<std::chrono::system_clock::time_point()> wall_clock{};
  // diagnose returns a short Markdown diagnosis for a firing notification (the doctor's
  // diagnose_alert) and a record of it; empty or unset: only each alert's runbook annotation is
  // shown. Called on a delivery thread, once per notification (the result is shared by its
  // channels and retries), so it may block on Prometheus for a bounded time; exceptions are caught
  // (no diagnosis). The record is kept in the outbox on each firing alert's history row until the
  // alert resolves (the first firing notification's record wins over repeats).
  std::function<FiringDiagnosis(const Notification&)> diagnose{};
  // recovered returns the Markdown of a resolved notification: what recovered, from
  // records[i], the record kept when alerts[i] fired ("" when none was kept). Called like
  // diagnose, never with a firing notification; unset or returning "": no diagnosis part.
  std::function<std::string(const Notification&, const std::vector<std::string>& records)> recovered{};
  // on_event receives each delivery/watchdog event (called on worker threads; must be quick).
  std::function<void(const RelayEvent&)> on_event{};
  std::uint64_t jitter_seed = 0;  // 0 = random
};

// ChannelStatus is one channel's outbox state.
struct ChannelStatus {
  std::string name;
  std::string kind;
  std::int64_t pending = 0;    // deliveries not yet done (waiting, backing off or rate-limited)
  std::int64_t failed = 0;     // deliveries given up after max_attempts (kept in the database)
  std::int64_t delivered = 0;  // delivered rows still within history_retention
  std::string last_error;      // of the most recent failed attempt, if any
};

// RelayStatus summarises the relay for `up --status` and GET /api/status.
struct RelayStatus {
  std::vector<ChannelStatus> channels;
  std::optional<std::chrono::system_clock::time_point> watchdog_last_seen;
  bool watchdog_alarm_raised = false;
};

// Relay owns the outbox, one delivery thread per channel and one watchdog thread.
class Relay {
 public:
  // open resolves every secret, opens (or creates) the SQLite outbox in WAL mode and registers
  // the relay's metrics in `registry` (which must outlive the Relay). Fails with a message naming
  // the channel and the missing env var/file, or the database path. Starts no thread.
  static Result<std::unique_ptr<Relay>> open(RelayConfig config, metrics::Registry& registry,
                                             RelayOptions options = {});
  ~Relay();  // stop()s
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  // handle_webhook parses one Alertmanager v4 webhook body and stores it durably before
  // answering: 200 stored/duplicate/ignored (watchdog only), 400 malformed payload (Alertmanager
  // does not retry 4xx), 503 when the outbox cannot be written (Alertmanager retries 5xx).
  WebhookReply handle_webhook(std::string_view body);

  // start launches the delivery and watchdog threads; undelivered notifications left in the
  // database by an earlier run are sent. Idempotent.
  void start();
  // stop wakes and joins every thread; an attempt in flight finishes first (bounded by
  // request_timeout). Pending notifications stay in the database. Idempotent.
  void stop();

  // deliver_due runs one synchronous delivery pass over every channel at wall_clock() (tests
  // use it instead of start()): sends what is due and allowed by the rate limits; returns the
  // number of messages sent (successfully or not).
  int deliver_due();
  // enqueue_document stores a document (a report) durably in the outbox for each named channel
  // before returning; the delivery threads send it like an alert (alone, never merged: robots get
  // its Markdown cut to their limit, the webhook and email the HTML too), with the same rate
  // limits, back-off and max_attempts, counted in inferscope_notifications_total. Errors: an
  // unknown channel (the message lists the configured ones), no channel, the database.
  Result<void> enqueue_document(const Document& document, const std::vector<std::string>& channels);
  // check_watchdog runs one watchdog check at wall_clock() (what the watchdog thread does).
  void check_watchdog();

  // alerts_fired_between returns the alerts whose firing interval overlaps [from, to), oldest
  // first, from the history table (the report reads it). Errors name the database.
  Result<std::vector<FiredAlert>> alerts_fired_between(std::chrono::system_clock::time_point from,
                                                       std::chrono::system_clock::time_point to);
  // status reads the outbox state per channel.
  Result<RelayStatus> status();

  class Impl;

 private:
  explicit Relay(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferscope::relay
