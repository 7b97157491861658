// The `--db` of every command, opened one way: a database that cannot be opened is bad
// input (exit 2) with the reason, whichever command names it, and the commands that
// only read runs never create a file or write a schema into someone else's.
#pragma once

#include <memory>
#include <string>

#include "storage/database.h"

namespace stipple::cli {

enum class DatabaseUse {
  Read,   // runs, front, export: the file must be a Stipple database already
  Write,  // tune: created when missing
};

/// Opens `path` for `use`. Throws UserError ("no database x.db", "cannot open the
/// database 'x.db': it is not a Stipple database ...").
std::unique_ptr<storage::Database> open_database(const std::string& path, DatabaseUse use);

/// The database as a command to copy names it: " --db PATH", or "" for the default
/// (stipple.db), so that a hint printed for one database does not send its reader to another.
std::string db_option(const std::string& path);

}  // namespace stipple::cli
