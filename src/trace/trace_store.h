// File: trace_store.h
// TraceStore: up's bounded store of received traces in one SQLite file under the state dir. Per
// job, model and 5-minute window (of the root span's start) it keeps the `slowest_per_window`
// slowest traces and every failed one; spans of a trace may arrive before or after its root.
// prune() applies `retention` and then `max_mb` (oldest windows first). Example:
//   auto store = TraceStore::open({.path = "traces.db"});
//   store->add(decoded_request, now_ns);  store->list({.job = "serve", .limit = 10});
// Thread-safe: one connection behind a mutex; each call is one short transaction (the receiver's
// writer thread adds and prunes, the query routes read).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <inferscope/common/result.h>

#include "common/sqlite_db.h"
#include "trace/otlp.h"

namespace inferscope::trace {

inline constexpr std::uint64_t kTraceWindowNs = 300'000'000'000ULL;  // 5 minutes

struct TraceStoreOptions {
  std::string path = {};
  int slowest_per_window = 100;  // non-failed traces kept per (job, model, window)
  std::chrono::milliseconds retention{std::chrono::hours(24)};
  double max_mb = 256;  // the file's used pages; oldest windows go first beyond it
  // Spans whose trace has no root yet are kept this long for it to arrive.
  std::chrono::milliseconds orphan_grace{std::chrono::minutes(2)};
};

// TraceSummary is one stored trace, as GET /api/traces lists it.
struct TraceSummary {
  std::string trace_id;  // 32 lowercase hex
  std::string job;       // service.name of the root span's resource
  std::string model;     // gen_ai.request.model, else gen_ai.response.model, else ""
  std::string name;      // root span name
  std::uint64_t start_unix_ns = 0;
  std::uint64_t duration_ns = 0;
  bool error = false;
  std::map<std::string, double> stages = {};  // the root's direct children by inferscope.stage, seconds
};

// StoredSpan is one span as stored, with its resource's service.name.
struct StoredSpan {
  Span span;
  std::string service;
};

struct TraceQuery {
  std::optional<std::string> job = {};
  std::optional<std::string> model = {};
  std::uint64_t min_duration_ns = 0;
  std::uint64_t since_unix_ns = 0;  // roots starting at or after
  int limit = 50;
};

// AddOutcome counts what one add() did with the traces whose root it carried.
struct AddOutcome {
  std::size_t spans = 0;        // spans written
  std::size_t stored = 0;       // traces kept
  std::size_t not_slowest = 0;  // traces not kept: faster than every kept one of their full window
  std::size_t evicted = 0;      // kept traces removed to make room for a slower one
};

// PruneOutcome counts the traces prune() removed, by rule.
struct PruneOutcome {
  std::size_t retention = 0;
  std::size_t max_mb = 0;
};

class TraceStore {
 public:
  static Result<std::unique_ptr<TraceStore>> open(TraceStoreOptions options);

  // add stores the spans of `request` received at now_unix_ns and decides, for each root among
  // them, whether its trace is kept. A root is a span without parent or, while the trace has none
  // such, one whose parent is remote (a service continuing an outside caller's trace).
  Result<AddOutcome> add(const ExportRequest& request, std::uint64_t now_unix_ns);
  // list returns stored traces matching `query`, slowest first.
  Result<std::vector<TraceSummary>> list(const TraceQuery& query);
  // spans returns every span of a stored trace, by start time; nullopt for an unknown trace.
  Result<std::optional<std::vector<StoredSpan>>> spans(const TraceId& trace_id);
  // prune removes traces started before now - retention, orphan spans past their grace, then the
  // oldest windows while the file's used size exceeds max_mb; freed pages are given back.
  Result<PruneOutcome> prune(std::uint64_t now_unix_ns);
  // used_bytes is the size of the file's pages in use (what max_mb bounds).
  Result<std::uint64_t> used_bytes();

  ~TraceStore() = default;
  TraceStore(const TraceStore&) = delete;
  TraceStore& operator=(const TraceStore&) = delete;

 private:
  TraceStore(common::SqliteHandle db, TraceStoreOptions options) : db_(std::move(db)), options_(std::move(options)) {}
  Error db_error(const std::string& what) const;
  std::uint64_t used_bytes_locked();
  // remember_dropped notes a trace not kept, so that its late spans are not stored (bounded).
  void remember_dropped(const std::string& trace_id);

  std::mutex mutex_;
  common::SqliteHandle db_;
  const TraceStoreOptions options_;
  std::unordered_set<std::string> dropped_;
  std::deque<std::string> dropped_order_;
};

// attributes_json is the JSON object the store keeps a span's attributes as, and the one the
// trace routes answer with: one key per attribute, the value in its own JSON type.
nlohmann::json attributes_json(const std::vector<Attribute>& attributes);

}  // namespace inferscope::trace
