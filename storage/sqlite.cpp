#include "storage/sqlite.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include "storage/database.h"

namespace stipple::storage {
namespace {

// Statements are written over several lines in the sources; one line reads better in an
// error message.
std::string one_line(std::string_view sql) {
  std::string out;
  bool space = false;
  for (char c : sql) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// The errno of the latest failed system call on the connection's WAL (or rollback journal)
// file, else its database file, else the connection's; 0 if none says. The files keep
// theirs (SQLITE_FCNTL_LAST_ERRNO): sqlite3_system_errno is only set for some codes (never
// for SQLITE_FULL) and reads errno after later calls may have changed it.
int last_os_errno(sqlite3* db) {
  int e = 0;
  sqlite3_file* journal = nullptr;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &journal) == SQLITE_OK &&
      journal != nullptr && journal->pMethods != nullptr &&
      journal->pMethods->xFileControl(journal, SQLITE_FCNTL_LAST_ERRNO, &e) == SQLITE_OK &&
      e != 0) {
    return e;
  }
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_LAST_ERRNO, &e) == SQLITE_OK && e != 0) {
    return e;
  }
  return sqlite3_system_errno(db);
}

// SQLite's words for a failed system call ("disk I/O error", "database or disk is full",
// "attempt to write a readonly database") do not say which: the OS's reason does ("Operation
// not permitted" for an immutable file, "No space left on device"). Only for the codes that
// come from a system call, as a file's errno may be left over from an earlier failure.
std::string with_os_reason(sqlite3* db, int rc, std::string message) {
  if (db == nullptr) return message;
  const int primary = rc & 0xff;
  if (primary != SQLITE_IOERR && primary != SQLITE_FULL && primary != SQLITE_CANTOPEN &&
      primary != SQLITE_READONLY && primary != SQLITE_PERM) {
    return message;
  }
  int os_errno = last_os_errno(db);
  // The unix VFS answers a write that ENOSPC cut short with SQLITE_FULL and clears the
  // file's errno ("not a system error"); the other SQLITE_FULL, a max_page_count reached,
  // is never set here.
  if (os_errno == 0 && primary == SQLITE_FULL) os_errno = ENOSPC;
  if (os_errno != 0) message += " (" + std::string(std::strerror(os_errno)) + ")";
  return message;
}

}  // namespace

StorageError::StorageError(const std::string& message, std::string sql, int code)
    : std::runtime_error(sql.empty() ? message : message + " [SQL: " + sql + "]"),
      message_(message),
      sql_(std::move(sql)),
      code_(code) {}

void throw_sqlite_error(sqlite3* db, int rc, std::string_view sql) {
  // The connection's message describes the latest failure; a bare code is all there is
  // when the connection itself could not be made.
  // The extended code tells an I/O error's kind (778: a write) where rc may be the primary.
  if (db != nullptr) rc = sqlite3_extended_errcode(db);
  std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  throw StorageError("SQLite error " + std::to_string(rc) + ": " + with_os_reason(db, rc, message),
                     one_line(sql), rc);
}

void exec(sqlite3* db, std::string_view sql) {
  std::string text(sql);
  const int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr);
  // sqlite3_exec leaves its error on the connection, where throw_sqlite_error reads it.
  if (rc != SQLITE_OK) throw_sqlite_error(db, rc, sql);
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db), sql_(sql) {
  int rc = sqlite3_prepare_v2(db_, sql_.data(), static_cast<int>(sql_.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt_);
    throw_sqlite_error(db_, rc, sql_);
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind_int(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, sql_);
  return *this;
}

Statement& Statement::bind_double(int index, double value) {
  // SQLite turns NaN into NULL on its own; saying so here keeps the rule in one place.
  int rc = std::isnan(value) ? sqlite3_bind_null(stmt_, index)
                             : sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, sql_);
  return *this;
}

Statement& Statement::bind_text(int index, std::string_view value) {
  int rc =
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, sql_);
  return *this;
}

Statement& Statement::bind_blob(int index, std::string_view bytes) {
  int rc = sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, sql_);
  return *this;
}

Statement& Statement::bind_null(int index) {
  int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, sql_);
  return *this;
}

Statement& Statement::bind_optional_int(int index, const std::optional<int64_t>& value) {
  return value ? bind_int(index, *value) : bind_null(index);
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw_sqlite_error(db_, rc, sql_);
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  // sqlite3_reset repeats the last step's error, which step() has already thrown.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::column_int(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::column_double(int column) const {
  if (column_is_null(column)) return std::numeric_limits<double>::quiet_NaN();
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::column_text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::string Statement::column_blob(int column) const {
  const void* bytes = sqlite3_column_blob(stmt_, column);
  if (bytes == nullptr) return {};
  return std::string(static_cast<const char*>(bytes),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

bool Statement::column_is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::optional<int64_t> Statement::column_optional_int(int column) const {
  if (column_is_null(column)) return std::nullopt;
  return column_int(column);
}

Transaction::Transaction(sqlite3* db, Kind kind) : db_(db) {
  exec(db_, kind == Kind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN");
  open_ = true;
}

Transaction::~Transaction() {
  // Never throws: a failed rollback (e.g. SQLite already rolled back on its own) leaves
  // the connection outside a transaction either way.
  if (open_ && sqlite3_get_autocommit(db_) == 0)
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  exec(db_, "COMMIT");
  open_ = false;
}

}  // namespace stipple::storage
