#include "common/sqlite_db.h"

#include <sqlite3.h>

namespace inferscope::common {

void SqliteCloser::operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }

Result<void> sqlite_exec(sqlite3* db, const std::string& sql, const std::string& what, const std::string& path) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    Error e = make_error("cannot run '" + sql.substr(0, 40) + "' in " + what + " " + path + ": " +
                         (message != nullptr ? message : sqlite3_errmsg(db)));
    sqlite3_free(message);
    return e;
  }
  return {};
}

Result<SqliteHandle> open_sqlite(const SqliteOpenOptions& options) {
  sqlite3* raw = nullptr;
  const int flags = (options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                    SQLITE_OPEN_FULLMUTEX;
  const int rc = sqlite3_open_v2(options.path.c_str(), &raw, flags, nullptr);
  SqliteHandle db(raw);
  if (rc != SQLITE_OK) {
    return make_error("cannot open " + options.what + " " + options.path + (options.read_only ? " for reading" : "") +
                      ": " + (raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_busy_timeout(db.get(), static_cast<int>(options.busy_timeout.count()));
  if (options.read_only) return db;
  for (const std::string& pragma : options.pragmas) {
    if (auto r = sqlite_exec(db.get(), pragma, options.what, options.path); !r) return r.error();
  }
  if (!options.schema.empty()) {
    if (auto r = sqlite_exec(db.get(), options.schema, options.what, options.path); !r) return r.error();
  }
  // An older file gains the new columns; on a current one "duplicate column" is expected.
  for (const std::string& migration : options.migrations) sqlite3_exec(db.get(), migration.c_str(), nullptr, nullptr, nullptr);
  return db;
}

SqliteStatement::SqliteStatement(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }
void SqliteStatement::bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
void SqliteStatement::bind(int i, const std::string& v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}
void SqliteStatement::bind_null(int i) { sqlite3_bind_null(stmt_, i); }
int SqliteStatement::step() { return sqlite3_step(stmt_); }
void SqliteStatement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}
std::int64_t SqliteStatement::int_at(int i) { return sqlite3_column_int64(stmt_, i); }
bool SqliteStatement::null_at(int i) { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
std::string SqliteStatement::text_at(int i) {
  const auto* p = sqlite3_column_text(stmt_, i);
  return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, i));
}

SqliteTransaction::SqliteTransaction(sqlite3* db) : db_(db) {
  rc_ = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
}
SqliteTransaction::~SqliteTransaction() {
  if (rc_ == SQLITE_OK && !done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}
bool SqliteTransaction::commit() {
  done_ = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK;
  return done_;
}

}  // namespace inferscope::common
