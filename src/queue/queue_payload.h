// File: queue_payload.h
// Parsers of what queue systems store in Redis: RQ's timestamps, Celery's task messages and worker
// events (kombu's JSON envelope), Redis stream entry IDs, and the check that a key may become a
// label value. All input comes from Redis, i.e. from outside: parsers never throw, never crash, and
// refuse rather than guess (fuzz targets: fuzz/rq_payload_fuzz.cpp, fuzz/celery_payload_fuzz.cpp).
// Example: auto t = parse_rq_timestamp("2026-12-01T16:07:04.146997Z");  // 1796141224.146997
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <inferscope/common/result.h>

namespace inferscope::queue {

// kMaxPayloadBytes bounds what a parser reads: a longer value is refused ("huge value") unread.
inline constexpr std::size_t kMaxPayloadBytes = 1 << 20;

// parse_rq_timestamp converts RQ's UTC timestamp "YYYY-MM-DDTHH:MM:SS[.ffffff]Z" (RQ 1.13 writes
// microseconds; older versions none) into Unix seconds. nullopt for anything else, including
// out-of-range fields, years before 1970 or after 9999, and trailing text.
std::optional<double> parse_rq_timestamp(std::string_view text) noexcept;

// CeleryMessage is what the collector uses of a Celery (protocol 2) task message.
struct CeleryMessage {
  std::string id{};    // headers.id
  std::string task{};  // headers.task
  // headers.inferscope_enqueued_at: Unix seconds, set by producers that opt in (Celery itself
  // records no enqueue time); nullopt when absent.
  std::optional<double> enqueued_at{};
};

// parse_celery_message parses the JSON envelope kombu stores in a queue list. Errors ("cannot
// parse celery message: <why>") for non-JSON, a non-object, missing headers.id or a non-numeric
// inferscope_enqueued_at; the body (the task's arguments) is never decoded.
Result<CeleryMessage> parse_celery_message(std::string_view json) noexcept;

// CeleryWorkerEvent is a worker-online, worker-heartbeat or worker-offline event.
struct CeleryWorkerEvent {
  std::string type{};      // "worker-heartbeat", "worker-online", "worker-offline"
  std::string hostname{};  // "celery@host"
  double timestamp = 0;    // Unix seconds, the worker's clock
  double freq = 2.0;       // seconds between heartbeats
  long long active = 0;    // tasks executing now
  long long processed = 0; // tasks done since the worker started
};

// parse_celery_event parses a message published on /<db>.celeryev/worker.*: kombu's envelope
// whose body is the event JSON, base64-encoded when properties.body_encoding says so. Errors for
// anything else, including events of other types (task-*) and a missing hostname or timestamp.
Result<CeleryWorkerEvent> parse_celery_event(std::string_view envelope) noexcept;

// StreamId is a Redis stream entry ID "<ms>-<seq>".
struct StreamId {
  std::uint64_t ms = 0;
  std::uint64_t seq = 0;
};

// parse_stream_id parses "<ms>-<seq>" (both decimal); nullopt otherwise.
std::optional<StreamId> parse_stream_id(std::string_view text) noexcept;

// is_label_safe says whether a key or name may be a label value: 1..200 bytes of valid UTF-8
// without control characters. Binary keys (Celery's priority sub-queues are folded into their
// base queue before this check) are skipped and counted instead.
bool is_label_safe(std::string_view text) noexcept;

// base64_decode decodes the standard alphabet with optional padding (and ignores CR/LF); nullopt
// on any other character or a truncated quantum.
std::optional<std::string> base64_decode(std::string_view text) noexcept;

}  // namespace inferscope::queue
