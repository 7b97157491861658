// Opening a database (connection settings, migrations) and the catalogue of what is
// tuned: pipelines and image sets.
#include "storage/database.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <tuple>

#include "compiler_core/support/content_hash.h"
#include "storage/migrations.h"
#include "storage/sqlite.h"

namespace stipple::storage {
namespace {

bool is_split(const std::string& split) { return split == "train" || split == "test"; }

// Image hashes are compared as text, so one spelling (lowercase) is stored.
std::string normalised_sha256(const std::string& hex) {
  bool valid = hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](unsigned char c) {
                 return std::isxdigit(c) != 0;
               });
  if (!valid) throw StorageError("an image's sha256 must be 64 hex digits, not '" + hex + "'");
  std::string lower = hex;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

// The order in which a set's images are matched with its stored rows: by (split, sha256),
// so a set given in any order finds the same rows.
bool content_less(const ImageRecord& a, const ImageRecord& b) {
  return std::tie(a.split, a.sha256) < std::tie(b.split, b.sha256);
}

}  // namespace

Database::Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

Database::~Database() {
  // Every Statement is finalised by its destructor, so the close succeeds; the last
  // connection to close checkpoints the WAL into the main file.
  sqlite3_close_v2(db_);
}

std::unique_ptr<Database> Database::open(const std::string& path, const OpenOptions& options) {
  sqlite3* raw = nullptr;
  const int create = options.existing_only ? 0 : SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | create | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  // The handle is owned from here on, even when the open failed (SQLite allocates one to
  // carry the message).
  std::unique_ptr<Database> db(new Database(raw, path));
  try {
    if (rc != SQLITE_OK) throw_sqlite_error(raw, rc, "");
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, options.busy_timeout_ms);
    // A file from a newer Stipple is refused before anything (even the journal mode) in
    // it is changed; migrate() checks again under the write lock.
    const int version = user_version(raw);
    check_not_newer(raw, version);
    if (options.existing_only && version == 0) {
      throw StorageError(
          "it is not a Stipple database (no schema: an empty file, or another "
          "program's)");
    }
    // Per-connection settings, outside any transaction (where SQLite ignores them).
    exec(raw, "PRAGMA foreign_keys = ON");
    std::string mode;
    {
      Statement wal(raw, "PRAGMA journal_mode = WAL");
      if (wal.step()) mode = wal.column_text(0);
    }
    if (mode != "wal") {
      throw StorageError("WAL journal mode could not be enabled (journal_mode is '" + mode + "')");
    }
    exec(raw, "PRAGMA synchronous = FULL");
    db->schema_version_ = migrate(raw);
  } catch (const StorageError& e) {
    throw StorageError("cannot open the database '" + path + "': " + e.message(), e.sql(),
                       e.code());
  }
  return db;
}

std::string Database::pragma(const std::string& name) {
  // PRAGMA names cannot be bound as parameters, so only plain identifiers are accepted.
  bool identifier = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '_';
  });
  if (!identifier) throw StorageError("'" + name + "' is not a PRAGMA name");
  std::lock_guard lock(mutex_);
  Statement stmt(db_, "PRAGMA " + name);
  return stmt.step() ? stmt.column_text(0) : std::string();
}

int64_t Database::put_pipeline(const std::string& name, const std::string& ir_hash,
                               const std::string& source) {
  if (ir_hash.empty()) throw StorageError("a pipeline needs its IR hash");
  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  Statement insert(db_, R"sql(
    INSERT INTO pipelines (name, ir_hash, source) VALUES (?, ?, ?)
    ON CONFLICT (ir_hash) DO NOTHING)sql");
  insert.bind_text(1, name).bind_text(2, ir_hash).bind_text(3, source).run();
  Statement find(db_, "SELECT id FROM pipelines WHERE ir_hash = ?");
  find.bind_text(1, ir_hash).step();
  int64_t id = find.column_int(0);
  txn.commit();
  return id;
}

std::optional<PipelineRecord> Database::pipeline(int64_t id) {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, "SELECT id, name, ir_hash, source, created_at FROM pipelines WHERE id = ?");
  if (!stmt.bind_int(1, id).step()) return std::nullopt;
  return PipelineRecord{stmt.column_int(0), stmt.column_text(1), stmt.column_text(2),
                        stmt.column_text(3), stmt.column_text(4)};
}

int64_t Database::put_dataset(const std::string& name, std::vector<ImageRecord>& images) {
  // The records are only changed once the transaction has committed.
  std::vector<ImageRecord> sorted = images;
  for (ImageRecord& image : sorted) {
    if (!is_split(image.split)) {
      throw StorageError("an image's split must be 'train' or 'test', not '" + image.split + "'");
    }
    image.sha256 = normalised_sha256(image.sha256);
  }
  std::vector<size_t> order(sorted.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return content_less(sorted[a], sorted[b]); });

  // The content hash covers (split, sha256) of every image in a fixed order: names and
  // paths do not change what a measurement on the set means.
  Sha256 hash;
  for (size_t i : order) hash.update(sorted[i].split + " " + sorted[i].sha256 + "\n");
  std::string content_hash = hash.hex_digest();

  std::lock_guard lock(mutex_);
  Transaction txn(db_, Transaction::Kind::kWrite);
  int64_t dataset_id = 0;
  Statement find(db_, "SELECT id FROM datasets WHERE content_hash = ?");
  if (find.bind_text(1, content_hash).step()) {
    dataset_id = find.column_int(0);
    Statement rows(db_, R"sql(
      SELECT id FROM images WHERE dataset_id = ? ORDER BY split, sha256, id)sql");
    rows.bind_int(1, dataset_id);
    Statement move(db_, "UPDATE images SET path = ? WHERE id = ?");
    for (size_t i : order) {
      if (!rows.step()) {
        throw StorageError("dataset " + std::to_string(dataset_id) +
                           " has fewer images than its content hash says");
      }
      sorted[i].id = rows.column_int(0);
      move.bind_text(1, sorted[i].path).bind_int(2, sorted[i].id).run();
    }
  } else {
    Statement insert(db_, "INSERT INTO datasets (name, content_hash) VALUES (?, ?)");
    insert.bind_text(1, name).bind_text(2, content_hash).run();
    dataset_id = sqlite3_last_insert_rowid(db_);
    Statement add(db_, R"sql(
      INSERT INTO images (dataset_id, path, sha256, width, height, split)
      VALUES (?, ?, ?, ?, ?, ?))sql");
    for (ImageRecord& image : sorted) {
      add.bind_int(1, dataset_id)
          .bind_text(2, image.path)
          .bind_text(3, image.sha256)
          .bind_int(4, image.width)
          .bind_int(5, image.height)
          .bind_text(6, image.split)
          .run();
      image.id = sqlite3_last_insert_rowid(db_);
    }
  }
  txn.commit();
  images = std::move(sorted);
  return dataset_id;
}

std::optional<DatasetRecord> Database::dataset(int64_t id) {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, "SELECT id, name, content_hash, created_at FROM datasets WHERE id = ?");
  if (!stmt.bind_int(1, id).step()) return std::nullopt;
  return DatasetRecord{stmt.column_int(0), stmt.column_text(1), stmt.column_text(2),
                       stmt.column_text(3)};
}

std::vector<ImageRecord> Database::dataset_images(int64_t dataset_id, const std::string& split) {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, R"sql(
    SELECT id, path, sha256, width, height, split FROM images
    WHERE dataset_id = ?1 AND (?2 = '' OR split = ?2) ORDER BY id)sql");
  stmt.bind_int(1, dataset_id).bind_text(2, split);
  std::vector<ImageRecord> images;
  while (stmt.step()) {
    images.push_back({stmt.column_int(0), stmt.column_text(1), stmt.column_text(2),
                      static_cast<int>(stmt.column_int(3)), static_cast<int>(stmt.column_int(4)),
                      stmt.column_text(5)});
  }
  return images;
}

}  // namespace stipple::storage
