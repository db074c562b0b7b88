// File: sqlite_db.h
// The one way inferscope opens and migrates a SQLite file (the relay's outbox, up's trace store):
// open or create, busy timeout, pragmas (WAL), schema of CREATE ... IF NOT EXISTS statements, then
// additive migrations whose "duplicate column" errors are expected; plus a prepared statement and
// a BEGIN IMMEDIATE transaction that rolls back unless committed. Example:
//   auto db = open_sqlite({.path = "traces.db", .what = "trace store", .schema = kSchema});
//   SqliteStatement s(db->get(), "SELECT 1"); s.step();
// Separate target `inferscope_sqlite` (links SQLite); a connection is as thread-safe as SQLite's
// FULLMUTEX mode, a statement or transaction belongs to one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <inferscope/common/result.h>

struct sqlite3;
struct sqlite3_stmt;

namespace inferscope::common {

// SqliteCloser closes a connection (sqlite3_close_v2).
struct SqliteCloser {
  void operator()(sqlite3* db) const noexcept;
};
using SqliteHandle = std::unique_ptr<sqlite3, SqliteCloser>;

struct SqliteOpenOptions {
  std::string path = {};
  std::string what = {};  // names the file in errors: "relay outbox", "trace store"
  std::chrono::milliseconds busy_timeout{std::chrono::seconds(2)};
  bool read_only = false;                 // open an existing file for queries; creates nothing, runs nothing below
  std::vector<std::string> pragmas = {};      // run first, in order (e.g. "PRAGMA journal_mode=WAL")
  std::string schema = {};                    // CREATE ... IF NOT EXISTS statements
  std::vector<std::string> migrations = {};   // additive ALTERs of older files; their errors are ignored
};

// open_sqlite opens the file as `options` say. Errors: "cannot open <what> <path>: <SQLite's message>".
Result<SqliteHandle> open_sqlite(const SqliteOpenOptions& options);

// sqlite_exec runs `sql` (one or more statements); errors name `what`, `path` and the statement's start.
Result<void> sqlite_exec(sqlite3* db, const std::string& sql, const std::string& what, const std::string& path);

// SqliteStatement owns one prepared statement; bind() indices start at 1.
class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, const char* sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  bool ok() const { return rc_ == 0; }
  void bind(int i, std::int64_t v);
  void bind(int i, const std::string& v);
  void bind_null(int i);
  int step();  // SQLite's result code (SQLITE_ROW, SQLITE_DONE, ...)
  void reset();
  std::int64_t int_at(int i);
  bool null_at(int i);
  std::string text_at(int i);

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = 1;
};

// SqliteTransaction begins IMMEDIATE and rolls back unless commit() succeeded.
class SqliteTransaction {
 public:
  explicit SqliteTransaction(sqlite3* db);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  bool began() const { return rc_ == 0; }
  bool commit();

 private:
  sqlite3* db_;
  int rc_;
  bool done_ = false;
};

}  // namespace inferscope::common
