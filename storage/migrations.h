// The schema as an ordered list of migration steps. Step N takes a database from
// PRAGMA user_version N - 1 to N; a new version of the schema is a new step appended to
// the list (steps already released are never edited) and kSchemaVersion raised with it.
#pragma once

#include <sqlite3.h>

#include <span>

#include "storage/database.h"

namespace stipple::storage {

struct Migration {
  int version;              // user_version after this step
  const char* description;  // one line, for error messages
  const char* sql;
};

/// The steps, in order; migrations()[i].version == i + 1 and the last is kSchemaVersion.
std::span<const Migration> migrations();

/// The database's PRAGMA user_version (0 for a new file).
int user_version(sqlite3* db);

/// Throws StorageError, naming the file and both versions, when `version` (a file's
/// user_version) is newer than kSchemaVersion.
void check_not_newer(sqlite3* db, int version);

/// Applies the steps after the database's version up to `target_version`, all in one
/// BEGIN IMMEDIATE transaction (a failure leaves the file at its old version), and
/// returns the version reached. Throws StorageError when the file's version is newer
/// than kSchemaVersion. Tests pass a smaller target to make an old database.
int migrate(sqlite3* db, int target_version = kSchemaVersion);

}  // namespace stipple::storage
