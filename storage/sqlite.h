// Thin RAII wrappers over the sqlite3 C API, private to storage/: a prepared statement,
// a transaction, and the error helper every call goes through. Nothing here knows the
// schema. Every failure throws StorageError with SQLite's message and the SQL.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stipple::storage {

/// Throws StorageError for a failed SQLite call: `rc` and the connection's message, plus
/// the statement's SQL when there is one.
[[noreturn]] void throw_sqlite_error(sqlite3* db, int rc, std::string_view sql);

/// Runs one or more statements that return no rows (schema steps, BEGIN, COMMIT).
void exec(sqlite3* db, std::string_view sql);

/// A prepared statement, finalised on destruction, so an exception between prepare and
/// finalise leaks nothing. Parameter and column indices are as in SQLite: parameters from
/// 1, columns from 0.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind_int(int index, int64_t value);
  /// NaN is stored as NULL (SQLite does that itself); infinities are stored as they are.
  Statement& bind_double(int index, double value);
  Statement& bind_text(int index, std::string_view value);
  Statement& bind_null(int index);
  Statement& bind_blob(int index, std::string_view bytes);
  Statement& bind_optional_int(int index, const std::optional<int64_t>& value);

  /// Steps once: true when a row is ready, false when the statement is done.
  bool step();
  /// Steps a statement that returns no rows, then resets it for the next bindings.
  void run();
  /// Makes the statement ready to run again and clears its bindings.
  void reset();

  int64_t column_int(int column) const;
  /// NULL reads as NaN: a REAL column is NULL exactly when a NaN was stored.
  double column_double(int column) const;
  /// NULL reads as "".
  std::string column_text(int column) const;
  /// The bytes of a BLOB column; NULL reads as "".
  std::string column_blob(int column) const;
  bool column_is_null(int column) const;
  std::optional<int64_t> column_optional_int(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

/// A transaction rolled back on destruction unless commit() was called, so an exception
/// anywhere in a batch leaves nothing of it behind. Writes begin with BEGIN IMMEDIATE: the
/// write lock is taken at the start (waiting up to the busy timeout), never upgraded
/// midway, which is where deferred transactions fail with SQLITE_BUSY in WAL mode.
class Transaction {
 public:
  enum class Kind { kRead, kWrite };
  Transaction(sqlite3* db, Kind kind);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void commit();

 private:
  sqlite3* db_;
  bool open_ = false;
};

}  // namespace stipple::storage
