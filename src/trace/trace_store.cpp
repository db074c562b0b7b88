// SQLite trace store. Spans go into `spans` as they arrive (a root usually ends, and so arrives,
// last); a trace gets its `traces` row, and the keep-or-drop decision, when its root arrives.
// synchronous=NORMAL: a crash may lose the last traces, which are samples, not records.
#include "trace/trace_store.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>

namespace inferscope::trace {
namespace {

using nlohmann::json;
using common::SqliteStatement;
using common::SqliteTransaction;

// auto_vacuum must precede the first table; on an existing file it is a no-op, which is fine:
// the file was created by this code with it set.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS traces(
  trace_id TEXT PRIMARY KEY,
  job TEXT NOT NULL,
  model TEXT NOT NULL,
  name TEXT NOT NULL,
  root_span_id TEXT NOT NULL,
  root_rank INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  duration_ns INTEGER NOT NULL,
  error INTEGER NOT NULL,
  window_index INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS traces_window ON traces(job, model, window_index, error, duration_ns);
CREATE INDEX IF NOT EXISTS traces_start ON traces(start_ns);
CREATE INDEX IF NOT EXISTS traces_duration ON traces(duration_ns);
CREATE TABLE IF NOT EXISTS spans(
  trace_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  parent_span_id TEXT NOT NULL,
  name TEXT NOT NULL,
  kind INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL,
  status INTEGER NOT NULL,
  status_message TEXT NOT NULL,
  flags INTEGER NOT NULL,
  service TEXT NOT NULL,
  stage TEXT,
  attributes TEXT NOT NULL,
  received_ns INTEGER NOT NULL,
  PRIMARY KEY(trace_id, span_id));
CREATE INDEX IF NOT EXISTS spans_received ON spans(received_ns);
)sql";

constexpr std::uint32_t kRemoteParentFlags = 0x300;  // OTLP: has-is-remote + is-remote
constexpr std::size_t kDroppedMemory = 4096;

std::string attributes_text(const std::vector<Attribute>& attributes) {
  return attributes_json(attributes).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::vector<Attribute> attributes_from(const std::string& text) {
  std::vector<Attribute> out;
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return out;
  for (const auto& [key, v] : j.items()) {
    if (v.is_string()) {
      out.push_back({key, v.get<std::string>()});
    } else if (v.is_boolean()) {
      out.push_back({key, v.get<bool>()});
    } else if (v.is_number_integer()) {
      out.push_back({key, v.get<std::int64_t>()});
    } else if (v.is_number_float()) {
      out.push_back({key, v.get<double>()});
    } else if (v.is_array()) {
      StringList list;
      for (const json& item : v) {
        if (item.is_string()) list.push_back(item.get<std::string>());
      }
      out.push_back({key, std::move(list)});
    }
  }
  return out;
}

const std::string* string_attribute(const Span& span, std::string_view key) {
  const AttributeValue* v = span.attribute(key);
  return v == nullptr ? nullptr : std::get_if<std::string>(v);
}

// failed: the root's status is ERROR, its HTTP answer was 5xx, or it names an error.type.
bool failed(const Span& root) {
  if (root.status.code == StatusCode::kError) return true;
  if (root.attribute("error.type") != nullptr) return true;
  if (const AttributeValue* v = root.attribute("http.response.status_code")) {
    if (const auto* code = std::get_if<std::int64_t>(v)) return *code >= 500;
    if (const auto* text = std::get_if<std::string>(v)) return text->size() == 3 && (*text)[0] == '5';
  }
  return false;
}

std::string model_of(const Span& root) {
  if (const std::string* m = string_attribute(root, "gen_ai.request.model")) return *m;
  if (const std::string* m = string_attribute(root, "gen_ai.response.model")) return *m;
  return {};
}

template <std::size_t N>
bool from_hex(std::string_view text, std::array<std::uint8_t, N>& out) {
  out.fill(0);
  if (text.empty()) return true;
  if (text.size() != 2 * N) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < N; ++i) {
    const int hi = nibble(text[2 * i]), lo = nibble(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return true;
}

std::int64_t as_db(std::uint64_t v) { return static_cast<std::int64_t>(std::min<std::uint64_t>(v, INT64_MAX)); }

struct RootCandidate {
  std::string trace_id;
  const Span* span;
  std::string service;
  int rank;  // 2: no parent, 1: remote parent
};

// delete_trace removes a trace's spans and row (inside the caller's transaction).
bool delete_trace(sqlite3* db, const std::string& trace_id) {
  SqliteStatement spans(db, "DELETE FROM spans WHERE trace_id = ?1");
  spans.bind(1, trace_id);
  if (spans.step() != SQLITE_DONE) return false;
  SqliteStatement row(db, "DELETE FROM traces WHERE trace_id = ?1");
  row.bind(1, trace_id);
  return row.step() == SQLITE_DONE;
}

// delete_where removes the traces matching `where` (an SQL condition on traces with ?1 bound to
// `value`) and their spans; returns how many, or -1 on a database error.
std::int64_t delete_where(sqlite3* db, const std::string& where, std::int64_t value) {
  SqliteStatement count(db, ("SELECT COUNT(*) FROM traces WHERE " + where).c_str());
  count.bind(1, value);
  if (count.step() != SQLITE_ROW) return -1;
  const std::int64_t n = count.int_at(0);
  if (n == 0) return 0;
  SqliteStatement spans(db, ("DELETE FROM spans WHERE trace_id IN (SELECT trace_id FROM traces WHERE " + where + ")").c_str());
  spans.bind(1, value);
  if (spans.step() != SQLITE_DONE) return -1;
  SqliteStatement rows(db, ("DELETE FROM traces WHERE " + where).c_str());
  rows.bind(1, value);
  if (rows.step() != SQLITE_DONE) return -1;
  return n;
}

}  // namespace

json attributes_json(const std::vector<Attribute>& attributes) {
  json out = json::object();
  for (const Attribute& a : attributes) {
    out[a.key.view()] = std::visit([](const auto& v) { return json(v); }, a.value);
  }
  return out;
}

Result<std::unique_ptr<TraceStore>> TraceStore::open(TraceStoreOptions options) {
  if (options.slowest_per_window < 0) return make_error("trace store: slowest_per_window must not be negative");
  if (!(options.max_mb > 0)) return make_error("trace store: max_mb must be positive");
  auto db = common::open_sqlite({.path = options.path,
                                 .what = "trace store",
                                 .pragmas = {"PRAGMA auto_vacuum=INCREMENTAL", "PRAGMA journal_mode=WAL",
                                             "PRAGMA synchronous=NORMAL"},
                                 .schema = kSchema});
  if (!db) return db.error();
  return std::unique_ptr<TraceStore>(new TraceStore(std::move(*db), std::move(options)));
}

Error TraceStore::db_error(const std::string& what) const {
  return make_error("cannot " + what + " in trace store " + options_.path + ": " + sqlite3_errmsg(db_.get()));
}

void TraceStore::remember_dropped(const std::string& trace_id) {
  if (!dropped_.insert(trace_id).second) return;
  dropped_order_.push_back(trace_id);
  if (dropped_order_.size() > kDroppedMemory) {
    dropped_.erase(dropped_order_.front());
    dropped_order_.pop_front();
  }
}

Result<AddOutcome> TraceStore::add(const ExportRequest& request, std::uint64_t now_unix_ns) {
  std::lock_guard lock(mutex_);
  sqlite3* db = db_.get();
  SqliteTransaction tx(db);
  if (!tx.began()) return db_error("begin a transaction");
  AddOutcome outcome;
  // Roots first: a trace not kept then costs no span writes (its spans usually come with it).
  std::vector<RootCandidate> roots;
  for (const ResourceSpans& resource : request.resources) {
    for (const ScopeSpans& scope : resource.scopes) {
      for (const Span& span : scope.spans) {
        const int rank = span.is_root() ? 2 : (span.flags & kRemoteParentFlags) == kRemoteParentFlags ? 1 : 0;
        if (rank > 0) roots.push_back({to_hex(span.trace_id), &span, std::string(resource.service_name()), rank});
      }
    }
  }
  for (const RootCandidate& root : roots) {
    const Span& span = *root.span;
    const std::string model = model_of(span);
    const bool error = failed(span);
    const std::uint64_t duration = span.end_unix_ns > span.start_unix_ns ? span.end_unix_ns - span.start_unix_ns : 0;
    const auto window = static_cast<std::int64_t>(span.start_unix_ns / kTraceWindowNs);
    SqliteStatement existing(db, "SELECT root_rank FROM traces WHERE trace_id = ?1");
    existing.bind(1, root.trace_id);
    const int step = existing.step();
    if (step == SQLITE_ROW) {
      if (existing.int_at(0) >= root.rank) continue;
    } else if (step != SQLITE_DONE) {
      return db_error("look up a trace");
    } else if (!error) {
      // Both queries below read this trace's (job, model, window) cell.
      const auto bind_window = [&](SqliteStatement& statement) {
        statement.bind(1, root.service);
        statement.bind(2, model);
        statement.bind(3, window);
      };
      SqliteStatement window_rows(db,
                                  "SELECT COUNT(*), MIN(duration_ns) FROM traces WHERE job = ?1 AND model = ?2 AND "
                                  "window_index = ?3 AND error = 0");
      bind_window(window_rows);
      if (window_rows.step() != SQLITE_ROW) return db_error("count a window's traces");
      if (window_rows.int_at(0) >= options_.slowest_per_window) {
        if (options_.slowest_per_window == 0 || static_cast<std::uint64_t>(window_rows.int_at(1)) >= duration) {
          if (!delete_trace(db, root.trace_id)) return db_error("drop a trace");
          remember_dropped(root.trace_id);
          ++outcome.not_slowest;
          continue;
        }
        SqliteStatement fastest(db,
                                "SELECT trace_id FROM traces WHERE job = ?1 AND model = ?2 AND window_index = ?3 AND "
                                "error = 0 ORDER BY duration_ns ASC LIMIT 1");
        bind_window(fastest);
        if (fastest.step() != SQLITE_ROW) return db_error("find a window's fastest trace");
        const std::string evicted = fastest.text_at(0);
        if (!delete_trace(db, evicted)) return db_error("evict a trace");
        remember_dropped(evicted);
        ++outcome.evicted;
      }
    }
    SqliteStatement upsert(db,
                           "INSERT OR REPLACE INTO traces(trace_id, job, model, name, root_span_id, root_rank, start_ns, "
                           "duration_ns, error, window_index) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    upsert.bind(1, root.trace_id);
    upsert.bind(2, root.service);
    upsert.bind(3, model);
    upsert.bind(4, span.name);
    upsert.bind(5, to_hex(span.span_id));
    upsert.bind(6, static_cast<std::int64_t>(root.rank));
    upsert.bind(7, as_db(span.start_unix_ns));
    upsert.bind(8, as_db(duration));
    upsert.bind(9, static_cast<std::int64_t>(error ? 1 : 0));
    upsert.bind(10, window);
    if (upsert.step() != SQLITE_DONE) return db_error("store a trace");
    if (step == SQLITE_DONE) ++outcome.stored;
  }
  SqliteStatement insert(db,
                         "INSERT OR REPLACE INTO spans(trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns, "
                         "status, status_message, flags, service, stage, attributes, received_ns) "
                         "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
  if (!insert.ok()) return db_error("prepare the span insert");
  for (const ResourceSpans& resource : request.resources) {
    const std::string service(resource.service_name());
    for (const ScopeSpans& scope : resource.scopes) {
      for (const Span& span : scope.spans) {
        const std::string trace_id = to_hex(span.trace_id);
        if (dropped_.contains(trace_id)) continue;
        insert.reset();
        insert.bind(1, trace_id);
        insert.bind(2, to_hex(span.span_id));
        insert.bind(3, span.is_root() ? std::string() : to_hex(span.parent_span_id));
        insert.bind(4, span.name);
        insert.bind(5, static_cast<std::int64_t>(span.kind));
        insert.bind(6, as_db(span.start_unix_ns));
        insert.bind(7, as_db(span.end_unix_ns));
        insert.bind(8, static_cast<std::int64_t>(span.status.code));
        insert.bind(9, span.status.message);
        insert.bind(10, static_cast<std::int64_t>(span.flags));
        insert.bind(11, service);
        if (const std::string* stage = string_attribute(span, "inferscope.stage")) {
          insert.bind(12, *stage);
        } else {
          insert.bind_null(12);
        }
        insert.bind(13, attributes_text(span.attributes));
        insert.bind(14, as_db(now_unix_ns));
        if (insert.step() != SQLITE_DONE) return db_error("store a span");
        ++outcome.spans;
      }
    }
  }
  if (!tx.commit()) return db_error("commit spans");
  return outcome;
}

Result<std::vector<TraceSummary>> TraceStore::list(const TraceQuery& query) {
  std::lock_guard lock(mutex_);
  sqlite3* db = db_.get();
  std::string sql =
      "SELECT trace_id, job, model, name, root_span_id, start_ns, duration_ns, error FROM traces "
      "WHERE duration_ns >= ?1 AND start_ns >= ?2";
  if (query.job) sql += " AND job = ?3";
  if (query.model) sql += " AND model = ?4";
  sql += " ORDER BY duration_ns DESC, trace_id LIMIT ?5";
  SqliteStatement rows(db, sql.c_str());
  if (!rows.ok()) return db_error("prepare the trace query");
  rows.bind(1, as_db(query.min_duration_ns));
  rows.bind(2, as_db(query.since_unix_ns));
  if (query.job) rows.bind(3, *query.job);
  if (query.model) rows.bind(4, *query.model);
  rows.bind(5, static_cast<std::int64_t>(query.limit));
  SqliteStatement stages(db,
                         "SELECT stage, SUM(end_ns - start_ns) FROM spans WHERE trace_id = ?1 AND parent_span_id = ?2 "
                         "AND stage IS NOT NULL GROUP BY stage");
  std::vector<TraceSummary> out;
  int rc = SQLITE_ROW;
  while ((rc = rows.step()) == SQLITE_ROW) {
    TraceSummary t{.trace_id = rows.text_at(0),
                   .job = rows.text_at(1),
                   .model = rows.text_at(2),
                   .name = rows.text_at(3),
                   .start_unix_ns = static_cast<std::uint64_t>(rows.int_at(5)),
                   .duration_ns = static_cast<std::uint64_t>(rows.int_at(6)),
                   .error = rows.int_at(7) != 0};
    stages.reset();
    stages.bind(1, t.trace_id);
    stages.bind(2, rows.text_at(4));
    int s = SQLITE_ROW;
    while ((s = stages.step()) == SQLITE_ROW) t.stages[stages.text_at(0)] = static_cast<double>(stages.int_at(1)) / 1e9;
    if (s != SQLITE_DONE) return db_error("read a trace's stages");
    out.push_back(std::move(t));
  }
  if (rc != SQLITE_DONE) return db_error("list traces");
  return out;
}

Result<std::optional<std::vector<StoredSpan>>> TraceStore::spans(const TraceId& trace_id) {
  std::lock_guard lock(mutex_);
  SqliteStatement rows(db_.get(),
                       "SELECT span_id, parent_span_id, name, kind, start_ns, end_ns, status, status_message, flags, "
                       "service, attributes FROM spans WHERE trace_id = ?1 ORDER BY start_ns, span_id");
  if (!rows.ok()) return db_error("prepare the span query");
  rows.bind(1, to_hex(trace_id));
  std::vector<StoredSpan> out;
  int rc = SQLITE_ROW;
  while ((rc = rows.step()) == SQLITE_ROW) {
    StoredSpan s;
    s.span.trace_id = trace_id;
    from_hex(rows.text_at(0), s.span.span_id);
    from_hex(rows.text_at(1), s.span.parent_span_id);
    s.span.name = rows.text_at(2);
    s.span.kind = static_cast<SpanKind>(rows.int_at(3));
    s.span.start_unix_ns = static_cast<std::uint64_t>(rows.int_at(4));
    s.span.end_unix_ns = static_cast<std::uint64_t>(rows.int_at(5));
    s.span.status.code = static_cast<StatusCode>(rows.int_at(6));
    s.span.status.message = rows.text_at(7);
    s.span.flags = static_cast<std::uint32_t>(rows.int_at(8));
    s.service = rows.text_at(9);
    s.span.attributes = attributes_from(rows.text_at(10));
    out.push_back(std::move(s));
  }
  if (rc != SQLITE_DONE) return db_error("read a trace's spans");
  if (out.empty()) return std::optional<std::vector<StoredSpan>>();
  return std::optional<std::vector<StoredSpan>>(std::move(out));
}

std::uint64_t TraceStore::used_bytes_locked() {
  auto pragma = [this](const char* sql) {
    SqliteStatement s(db_.get(), sql);
    return s.step() == SQLITE_ROW ? s.int_at(0) : 0;
  };
  const std::int64_t pages = pragma("PRAGMA page_count") - pragma("PRAGMA freelist_count");
  return static_cast<std::uint64_t>(std::max<std::int64_t>(pages, 0) * pragma("PRAGMA page_size"));
}

Result<std::uint64_t> TraceStore::used_bytes() {
  std::lock_guard lock(mutex_);
  return used_bytes_locked();
}

Result<PruneOutcome> TraceStore::prune(std::uint64_t now_unix_ns) {
  std::lock_guard lock(mutex_);
  sqlite3* db = db_.get();
  PruneOutcome outcome;
  {
    SqliteTransaction tx(db);
    if (!tx.began()) return db_error("begin a transaction");
    const auto retention_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(options_.retention).count());
    const std::uint64_t cutoff = now_unix_ns > retention_ns ? now_unix_ns - retention_ns : 0;
    const std::int64_t old = delete_where(db, "start_ns < ?1", as_db(cutoff));
    if (old < 0) return db_error("prune by retention");
    outcome.retention = static_cast<std::size_t>(old);
    const auto grace_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(options_.orphan_grace).count());
    SqliteStatement orphans(db,
                            "DELETE FROM spans WHERE received_ns < ?1 AND NOT EXISTS "
                            "(SELECT 1 FROM traces WHERE traces.trace_id = spans.trace_id)");
    orphans.bind(1, as_db(now_unix_ns > grace_ns ? now_unix_ns - grace_ns : 0));
    if (orphans.step() != SQLITE_DONE) return db_error("prune spans without a root");
    const auto max_bytes = static_cast<std::uint64_t>(options_.max_mb * 1024 * 1024);
    while (used_bytes_locked() > max_bytes) {
      SqliteStatement oldest(db, "SELECT MIN(window_index) FROM traces");
      if (oldest.step() != SQLITE_ROW) return db_error("find the oldest window");
      if (oldest.null_at(0)) {
        // Only spans still waiting for their root are left: they go too.
        if (sqlite3_exec(db, "DELETE FROM spans", nullptr, nullptr, nullptr) != SQLITE_OK) return db_error("prune spans");
        break;
      }
      const std::int64_t n = delete_where(db, "window_index = ?1", oldest.int_at(0));
      if (n < 0) return db_error("prune by max_mb");
      outcome.max_mb += static_cast<std::size_t>(n);
    }
    if (!tx.commit()) return db_error("commit a prune");
  }
  // Freed pages go back to the file system (auto_vacuum=INCREMENTAL), so max_mb bounds the disk.
  sqlite3_exec(db, "PRAGMA incremental_vacuum", nullptr, nullptr, nullptr);
  return outcome;
}

}  // namespace inferscope::trace
