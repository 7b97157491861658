#include "client/open_database.h"

#include <filesystem>

#include "compiler_core/ir/error.h"

namespace stipple::cli {

std::unique_ptr<storage::Database> open_database(const std::string& path, DatabaseUse use) {
  storage::OpenOptions options;
  options.existing_only = use == DatabaseUse::Read;
  std::error_code ec;
  if (use == DatabaseUse::Read && !std::filesystem::exists(path, ec)) {
    throw UserError("no database " + path);
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw UserError("cannot open the database '" + path + "': it is a directory");
  }
  try {
    return storage::Database::open(path, options);
  } catch (const storage::StorageError& e) {
    throw UserError(e.message());  // the file the user named: bad input, not a failure
  }
}

std::string db_option(const std::string& path) {
  return path == "stipple.db" ? "" : " --db " + path;
}

}  // namespace stipple::cli
