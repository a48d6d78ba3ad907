// profile_db.cpp - opening, validating and migrating the profile database, and
// the writes: Merge and epochs. The read-only queries are in
// profile_db_query.cpp; the SQLite helpers both use are in profile_db_sql.h.
//
// Every write is one BEGIN IMMEDIATE transaction: it takes the write lock
// before reading anything, so it never has to upgrade a read lock (which in
// WAL mode fails at once with SQLITE_BUSY_SNAPSHOT, busy timeout or not), and
// either commits whole or is rolled back whole.
#include "libprofile/store/profile_db.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <limits>
#include <tuple>

#include "libprofile/base/cgroup_label.h"
#include "libprofile/base/saturating.h"
#include "libprofile/store/profile_db_schema.h"
#include "libprofile/store/profile_db_sql.h"
#include "libprofile/store/stack_codec.h"
#include "libprofile/store/stat_names.h"

namespace lcpi {

namespace {

constexpr int kDefaultBusyTimeoutMs = 5000;
// The WAL is truncated back to this size after checkpoints, and to zero at
// close, so a long-running daemon does not leave a huge -wal file behind.
constexpr const char* kJournalSizeLimit = "PRAGMA journal_size_limit = 67108864";

constexpr int64_t kMaxValue = std::numeric_limits<int64_t>::max();

int64_t Now() { return static_cast<int64_t>(std::time(nullptr)); }

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A path as a "file:" URI: only unreserved bytes stay as they are, so "?",
// "#" and "%" in a file name cannot turn into URI syntax.
std::string FileUri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
        c == '-' || c == '_' || c == '.' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      uri += hex;
    }
  }
  return uri;
}

// The statements of the write path, prepared once per connection.
constexpr const char kSqlEpochExists[] = "SELECT 1 FROM epochs WHERE id = ?1";
constexpr const char kSqlUpsertImage[] =
    "INSERT INTO images (identity, path, kind, first_seen) VALUES (?1, ?2, ?3, ?4) "
    "ON CONFLICT (identity) DO UPDATE SET path = excluded.path "
    "WHERE excluded.path <> '' AND path <> excluded.path";
constexpr const char kSqlImageId[] = "SELECT id FROM images WHERE identity = ?1";
constexpr const char kSqlUpsertEvent[] =
    "INSERT INTO events (name, used, period) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (name) DO UPDATE SET used = excluded.used, period = excluded.period "
    "WHERE used <> excluded.used OR period <> excluded.period";
constexpr const char kSqlEventId[] = "SELECT id FROM events WHERE name = ?1";
constexpr const char kSqlUpsertEpochEvent[] =
    "INSERT INTO epoch_events (epoch_id, event_id, used, period, time_enabled, time_running, "
    "precise) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
    "ON CONFLICT (epoch_id, event_id) DO UPDATE SET used = excluded.used, period = "
    "excluded.period, "
    "time_enabled = time_enabled + excluded.time_enabled, "
    "time_running = time_running + excluded.time_running, precise = excluded.precise";
constexpr const char kSqlUpsertCount[] =
    "INSERT INTO counts (epoch_id, image_id, event_id, image_offset, count) "
    "VALUES (?1, ?2, ?3, ?4, ?5) "
    "ON CONFLICT (epoch_id, image_id, event_id, image_offset) "
    "DO UPDATE SET count = count + excluded.count";
constexpr const char kSqlUpsertProcess[] =
    "INSERT INTO process_counts (epoch_id, pid, comm, cgroup_id, image_id, event_id, count) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
    "ON CONFLICT (epoch_id, pid, comm, cgroup_id, image_id, event_id) "
    "DO UPDATE SET count = count + excluded.count";
constexpr const char kSqlInsertCgroup[] =
    "INSERT INTO cgroups (path) VALUES (?1) ON CONFLICT (path) DO NOTHING";
constexpr const char kSqlCgroupId[] = "SELECT id FROM cgroups WHERE path = ?1";
constexpr const char kSqlEpochStat[] = "SELECT value FROM stats WHERE epoch_id = ?1 AND name = ?2";
constexpr const char kSqlUpsertStat[] =
    "INSERT INTO stats (epoch_id, name, value) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (epoch_id, name) DO UPDATE SET value = value + excluded.value";
constexpr const char kSqlInsertSymbol[] =
    "INSERT INTO symbols (image_id, image_offset, size, name) VALUES (?1, ?2, ?3, ?4) "
    "ON CONFLICT DO NOTHING";
constexpr const char kSqlNewestEpoch[] = "SELECT max(id) FROM epochs";
constexpr const char kSqlInsertEpoch[] =
    "INSERT INTO epochs (tag, started, kind) VALUES (?1, ?2, ?3)";
constexpr const char kSqlEndEpochs[] = "UPDATE epochs SET ended = ?1 WHERE ended IS NULL";
constexpr const char kSqlTagExists[] = "SELECT 1 FROM epochs WHERE tag = ?1";

// Checks a batch before any write. What is wrong with the batch as a whole
// (its epoch, its events, a row naming an image or event it does not hold:
// lcpid's own mistakes) refuses it, so it changes nothing and says why. A
// row whose values the store cannot hold (above INT64_MAX: a hostile JIT map
// can say anything) marks its image in `quarantine`: only that image's rows
// are set aside.
Expected<void> ValidateBatch(const MergeBatch& b, std::vector<bool>* quarantine) {
  auto bad = [](const std::string& why) { return Error(Errc::kInvalidArgument, "merge: " + why); };
  auto too_big = [](uint64_t v) { return v > static_cast<uint64_t>(kMaxValue); };
  if (b.epoch <= 0) return bad("epoch " + std::to_string(b.epoch) + " is not an epoch id");
  quarantine->assign(b.images.size(), false);
  for (size_t i = 0; i < b.images.size(); ++i) {
    if (b.images[i].identity.empty()) (*quarantine)[i] = true;
  }
  for (const EventRecord& ev : b.events) {
    if (ev.name.empty()) return bad("an event has an empty name");
    if (too_big(ev.period)) return bad("event " + ev.name + ": period too large");
  }
  auto check_refs = [&](uint32_t image, uint32_t event) {
    return image < b.images.size() && event < b.events.size();
  };
  for (const CountRow& c : b.counts) {
    if (!check_refs(c.image, c.event))
      return bad("a count names an image or event not in the batch");
    if (too_big(c.offset) || too_big(c.count)) (*quarantine)[c.image] = true;
  }
  for (const ProcessRow& p : b.processes) {
    if (!check_refs(p.image, p.event))
      return bad("a process row names an image or event not in the batch");
    if (too_big(p.count)) (*quarantine)[p.image] = true;
  }
  for (const SymbolRow& s : b.symbols) {
    if (s.image >= b.images.size())
      return bad("symbol " + s.name + " names an image not in the batch");
    if (too_big(s.offset) || too_big(s.size)) (*quarantine)[s.image] = true;
  }
  for (const StackRow& st : b.stacks) {
    if (st.frames.empty() || st.frames.size() > kMaxStoredStackFrames)
      return bad("a call stack has no frames or more than " +
                 std::to_string(kMaxStoredStackFrames));
    for (const auto& [image, offset] : st.frames)
      if (image >= b.images.size()) return bad("a call stack names an image not in the batch");
    if (too_big(st.count)) return bad("a call stack's count is too large");
  }
  for (const auto& [name, value] : b.stats) {
    if (name.empty()) return bad("a statistic has an empty name");
    (void)value;
  }
  return {};
}

// What the rows of the quarantined images amount to.
MergeReport CountQuarantined(const MergeBatch& b, const std::vector<bool>& quarantine) {
  MergeReport r;
  for (bool q : quarantine) r.quarantined_images += q;
  if (r.quarantined_images == 0) return r;
  for (const CountRow& c : b.counts) {
    if (!quarantine[c.image]) continue;
    r.quarantined_rows++;
    // Saturating at what a statistic holds: the count that made it bad may
    // be the largest value.
    r.quarantined_samples =
        std::min(SaturatingAdd(r.quarantined_samples, c.count), static_cast<uint64_t>(kMaxValue));
  }
  for (const ProcessRow& p : b.processes) r.quarantined_rows += quarantine[p.image];
  for (const SymbolRow& s : b.symbols) r.quarantined_rows += quarantine[s.image];
  return r;
}

}  // namespace

// ---------------------------------------------------------------- opening

ProfileDb::ProfileDb(sqlite3* db, std::string path, DbMode mode)
    : db_(db), path_(std::move(path)), mode_(mode) {}

ProfileDb::~ProfileDb() {
  for (auto& [sql, stmt] : stmts_) sqlite3_finalize(stmt);
  // Rolls back an open transaction; with PERSIST_WAL the -wal and -shm stay.
  sqlite3_close(db_);
}

int ProfileDb::LatestSchemaVersion() { return schema::kMigrationCount; }

void ProfileDb::SetBusyTimeout(std::chrono::milliseconds timeout) {
  sqlite3_busy_timeout(db_, static_cast<int>(std::clamp<int64_t>(timeout.count(), 0, INT32_MAX)));
}

Expected<std::unique_ptr<ProfileDb>> ProfileDb::Open(const std::string& path, DbMode mode) {
  if (path.empty()) return Error(Errc::kInvalidArgument, "profile database: empty path");
  if (mode == DbMode::kReadOnly) {
    // SQLite would say "unable to open"; say what the user can act on.
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return ErrnoError(path, errno);
    if (!S_ISREG(st.st_mode)) return Error(Errc::kNotADatabase, path + ": not a regular file");
  }
  // A read-only open needs the -shm file of a WAL database; a user who cannot
  // create it (root-owned directory, daemon stopped, -shm gone) can still
  // read a quiescent database as immutable. Any other failure is final.
  for (bool immutable : {false, true}) {
    if (immutable && mode != DbMode::kReadOnly) break;
    int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
    flags |= mode == DbMode::kReadWrite ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                                        : SQLITE_OPEN_READONLY;
    // Only the immutable open uses a URI: a plain path must not be parsed as one.
    std::string name = path;
    if (immutable) {
      flags |= SQLITE_OPEN_URI;
      name = FileUri(path) + "?immutable=1";
    }
    sqlite3* raw = nullptr;
    int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
    std::unique_ptr<ProfileDb> db(new ProfileDb(raw, path, mode));  // closes raw on every path
    if (rc != SQLITE_OK) {
      if (raw == nullptr) return Error(Errc::kIo, path + ": out of memory opening the database");
      return db->SqlError(rc, "cannot open");
    }
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, kDefaultBusyTimeoutMs);
    Expected<void> ok = db->Validate();
    if (!ok) {
      int primary = db->last_rc_ & 0xff;
      if (!immutable && mode == DbMode::kReadOnly &&
          (primary == SQLITE_CANTOPEN || db->last_rc_ == SQLITE_READONLY_CANTINIT ||
           db->last_rc_ == SQLITE_READONLY_DIRECTORY)) {
        continue;
      }
      return ok.error();
    }
    if (mode == DbMode::kReadWrite) {
      ok = db->Configure();
      if (!ok) return ok.error();
    }
    return db;
  }
  return Error(Errc::kIo, path + ": cannot open");  // not reached
}

// Reads the header fields that tell whose database this is, before anything
// is written: a foreign database must be left exactly as it was.
Expected<void> ProfileDb::Validate() {
  int64_t app_id = 0, version = 0, objects = 0;
  struct {
    const char* sql;
    int64_t* out;
  } reads[] = {{"PRAGMA application_id", &app_id},
               {"PRAGMA user_version", &version},
               {"SELECT count(*) FROM sqlite_schema", &objects}};
  for (auto& r : reads) {
    auto stmt = Prepare(r.sql);
    if (!stmt) return stmt.error();
    sql::Reset reset(*stmt);
    int rc = sqlite3_step(*stmt);
    if (rc != SQLITE_ROW) return SqlError(rc, "cannot read the database header");
    *r.out = sqlite3_column_int64(*stmt, 0);
  }
  const int latest = LatestSchemaVersion();
  if (app_id == 0 && version == 0 && objects == 0) {
    // An empty file or an empty SQLite database: ours to initialise.
    if (mode_ == DbMode::kReadOnly) {
      return Error(Errc::kNotADatabase,
                   path_ + ": empty, not yet an lcpi database (lcpid creates it)");
    }
    return {};  // Migrate creates the schema
  }
  if (app_id != kProfileDbApplicationId) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%08" PRIx32, static_cast<uint32_t>(app_id));
    return Error(Errc::kNotADatabase, path_ +
                                          ": a SQLite database of another application "
                                          "(application_id " +
                                          buf + "), not an lcpi one");
  }
  if (version > latest) {
    return Error(Errc::kNewerSchema, path_ + ": schema version " + std::to_string(version) +
                                         " was written by a newer lcpi (this one knows up to " +
                                         std::to_string(latest) + "): upgrade lcpi");
  }
  if (mode_ == DbMode::kReadOnly && version < latest) {
    return Error(Errc::kUnsupported, path_ + ": schema version " + std::to_string(version) +
                                         " is older than this lcpi's " + std::to_string(latest) +
                                         ": run lcpid (or open it read-write) to upgrade it");
  }
  return {};
}

// Connection settings of a writer, then the pending migrations.
Expected<void> ProfileDb::Configure() {
  // A new database returns freed pages to the file system (retention drops
  // old windows): auto_vacuum can be chosen freely only before the first
  // table exists. Older databases switch with EnableIncrementalVacuum.
  {
    auto objects = Prepare("SELECT count(*) FROM sqlite_schema");
    if (!objects) return objects.error();
    sql::Reset reset(*objects);
    int rc = sqlite3_step(*objects);
    if (rc != SQLITE_ROW) return SqlError(rc, "cannot read the schema");
    if (sqlite3_column_int64(*objects, 0) == 0) {
      if (auto ok = Exec("PRAGMA auto_vacuum = INCREMENTAL", "cannot set auto_vacuum"); !ok)
        return ok;
    }
  }
  // WAL: readers never block the daemon and the daemon never blocks readers.
  // journal_mode is stored in the file, so change it only when needed: the
  // change needs an exclusive lock.
  auto mode = Prepare("PRAGMA journal_mode");
  if (!mode) return mode.error();
  std::string current;
  {
    sql::Reset reset(*mode);
    int rc = sqlite3_step(*mode);
    if (rc != SQLITE_ROW) return SqlError(rc, "cannot read the journal mode");
    current = sql::ColumnText(*mode, 0);
  }
  if (current != "wal") {
    auto set = Prepare("PRAGMA journal_mode = WAL");
    if (!set) return set.error();
    sql::Reset reset(*set);
    int rc = sqlite3_step(*set);
    if (rc != SQLITE_ROW) return SqlError(rc, "cannot switch to WAL mode");
    if (sql::ColumnText(*set, 0) != "wal") {
      return Error(Errc::kIo, path_ +
                                  ": cannot switch to WAL mode (the file system may not "
                                  "support shared memory)");
    }
  }
  // FULL: a committed flush survives a power cut too; flushes are minutes apart.
  if (auto ok = Exec("PRAGMA synchronous = FULL", "cannot set synchronous"); !ok) return ok;
  if (auto ok = Exec("PRAGMA foreign_keys = ON", "cannot enable foreign keys"); !ok) return ok;
  if (auto ok = Exec(kJournalSizeLimit, "cannot set the journal size limit"); !ok) return ok;
  // Keep -wal and -shm after the last close, so users who cannot create files
  // next to the database can still open it read-only (see Open).
  int persist = 1;
  sqlite3_file_control(db_, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
  return Migrate();
}

Expected<int64_t> ProfileDb::ReadSchemaVersion() {
  auto stmt = Prepare("PRAGMA user_version");
  if (!stmt) return stmt.error();
  sql::Reset reset(*stmt);
  int rc = sqlite3_step(*stmt);
  if (rc != SQLITE_ROW) return SqlError(rc, "cannot read the schema version");
  return sqlite3_column_int64(*stmt, 0);
}

Expected<void> ProfileDb::Migrate() {
  const int latest = LatestSchemaVersion();
  auto version = ReadSchemaVersion();
  if (!version) return version.error();
  if (*version >= latest) return {};
  // A migration that rebuilds a table (the only way SQLite changes a CHECK)
  // drops the old one, which foreign keys would refuse while rows refer to
  // it; the pragma is ignored inside a transaction, so it is set around it.
  if (auto ok = Exec("PRAGMA foreign_keys = OFF", "cannot disable foreign keys"); !ok) return ok;
  Expected<void> migrated = MigrateLocked(latest);
  if (auto ok = Exec("PRAGMA foreign_keys = ON", "cannot enable foreign keys"); !ok) return ok;
  return migrated;
}

Expected<void> ProfileDb::MigrateLocked(int latest) {
  if (auto ok = BeginWrite("cannot start the schema migration"); !ok) return ok;
  // Another process may have migrated between our check and our lock.
  auto version = ReadSchemaVersion();
  if (!version) {
    Rollback();
    return version.error();
  }
  for (int i = 0; i < schema::kMigrationCount; ++i) {
    const schema::Migration& m = schema::kMigrations[i];
    if (m.version <= *version) continue;
    char* msg = nullptr;
    int rc = sqlite3_exec(db_, m.sql, nullptr, nullptr, &msg);
    sqlite3_free(msg);  // the same text is in sqlite3_errmsg, which SqlError reads
    if (rc != SQLITE_OK) {
      Error e = SqlError(rc, std::string("schema migration ") + m.name + " failed");
      Rollback();
      return e;
    }
  }
  // A rebuilt table must still hold only rows that refer to existing ones.
  {
    auto check = Prepare("PRAGMA foreign_key_check");
    if (!check) {
      Rollback();
      return check.error();
    }
    sql::Reset reset(*check);
    int rc = sqlite3_step(*check);
    if (rc != SQLITE_DONE) {
      Error e =
          rc == SQLITE_ROW
              ? Error(Errc::kCorrupt, path_ + ": schema migration left rows of " +
                                          sql::ColumnText(*check, 0) + " referring to missing ones")
              : SqlError(rc, "foreign key check failed");
      Rollback();
      return e;
    }
  }
  if (*version < latest) {
    // The values are our own integers, not input; PRAGMAs cannot take parameters.
    std::string set = "PRAGMA user_version = " + std::to_string(latest) +
                      "; PRAGMA application_id = " + std::to_string(kProfileDbApplicationId);
    if (auto ok = Exec(set.c_str(), "cannot set the schema version"); !ok) {
      Rollback();
      return ok;
    }
  }
  return Commit("cannot commit the schema migration");
}

// ---------------------------------------------------------------- helpers

Expected<void> ProfileDb::Exec(const char* sql_text, const char* what) {
  int rc = sqlite3_exec(db_, sql_text, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqlError(rc, what);
  return {};
}

Expected<int64_t> ProfileDb::EpochStat(int64_t epoch, const char* name) {
  auto stmt = Prepare(kSqlEpochStat);
  if (!stmt) return stmt.error();
  const std::string key = name;  // bound without a copy: it must outlive the step
  sql::Reset reset(*stmt);
  sql::Bind(*stmt, 1, epoch);
  sql::Bind(*stmt, 2, key);
  int rc = sqlite3_step(*stmt);
  if (rc == SQLITE_DONE) return int64_t{0};
  if (rc != SQLITE_ROW) return SqlError(rc, std::string("cannot read the statistic ") + name);
  return sqlite3_column_int64(*stmt, 0);
}

Expected<sqlite3_stmt*> ProfileDb::Prepare(const char* sql_text) {
  auto it = stmts_.find(sql_text);
  if (it != stmts_.end()) return it->second;
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql_text, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqlError(rc, "cannot prepare a statement");
  }
  stmts_.emplace(sql_text, stmt);
  return stmt;
}

Expected<void> ProfileDb::BeginWrite(const char* what) {
  if (mode_ == DbMode::kReadOnly) {
    return Error(Errc::kPermission, path_ + ": opened read-only, cannot write");
  }
  if (in_snapshot_) {
    return Error(Errc::kInvalidArgument, path_ + ": cannot write inside a read snapshot");
  }
  return Exec("BEGIN IMMEDIATE", what);
}

Expected<void> ProfileDb::Commit(const char* what) {
  int rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK) return {};
  Error e = SqlError(rc, what);
  Rollback();
  return e;
}

void ProfileDb::Rollback() {
  // SQLite rolls some failures (SQLITE_FULL, SQLITE_IOERR, ...) back itself.
  if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

// Maps a SQLite result to the Errc that tells the caller what to do next.
Error ProfileDb::SqlError(int rc, const std::string& what) {
  last_rc_ = rc;
  std::string msg = path_ + ": " + what + ": " + (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
  int sys = db_ ? sqlite3_system_errno(db_) : 0;
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Error(Errc::kBusy, msg + " (another process holds the database lock)");
    case SQLITE_FULL:
      return Error(Errc::kFull, msg);
    case SQLITE_NOTADB:
      return Error(Errc::kNotADatabase, msg);
    case SQLITE_CORRUPT:
      return Error(Errc::kCorrupt, msg);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return Error(Errc::kPermission, msg);
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
      return Error(Errc::kInvalidArgument, msg);
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
      if (sys == ENOSPC || sys == EDQUOT) return Error(Errc::kFull, msg);
      if (sys == ENOENT) return Error(Errc::kNotFound, msg);
      if (sys == EACCES || sys == EPERM || sys == EROFS) return Error(Errc::kPermission, msg);
      return Error(Errc::kIo, msg);
    default:
      return Error(Errc::kIo, msg);
  }
}

// ---------------------------------------------------------------- writes

Expected<void> ProfileDb::Merge(const MergeBatch& batch, MergeReport* report) {
  if (report) *report = {};
  if (mode_ == DbMode::kReadOnly) {
    return Error(Errc::kPermission, path_ + ": opened read-only, cannot merge");
  }
  std::vector<bool> quarantine;
  if (auto ok = ValidateBatch(batch, &quarantine); !ok) return ok;
  // A row SQLite itself refuses for its content (a constraint, a string too
  // big: kInvalidArgument) sets its image aside too, and the merge starts
  // again without it: at most once per image. Any other failure (busy, full
  // disk, I/O) is the caller's to retry, the batch unchanged.
  for (;;) {
    const MergeReport quarantined = CountQuarantined(batch, quarantine);
    if (auto ok = BeginWrite("cannot start the merge"); !ok) return ok;
    std::optional<uint32_t> failed_image;
    Expected<void> ok = MergeLocked(batch, quarantine, quarantined, &failed_image);
    if (!ok) {
      Rollback();
      if (ok.error().code() == Errc::kInvalidArgument && failed_image &&
          !quarantine[*failed_image]) {
        quarantine[*failed_image] = true;
        continue;
      }
      return ok;
    }
    ok = Commit("cannot commit the merge");
    if (ok && report) *report = quarantined;
    return ok;
  }
}

// The body of Merge, inside its transaction; the caller rolls back on error.
// The rows of images in `quarantine` are not written, their image not
// interned; a content error of SQLite's on an image's row names the image in
// *failed_image.
Expected<void> ProfileDb::MergeLocked(const MergeBatch& b, const std::vector<bool>& quarantine,
                                      const MergeReport& quarantined,
                                      std::optional<uint32_t>* failed_image) {
  using sql::Bind;
  {
    auto stmt = Prepare(kSqlEpochExists);
    if (!stmt) return stmt.error();
    sql::Reset reset(*stmt);
    Bind(*stmt, 1, b.epoch);
    int rc = sqlite3_step(*stmt);
    if (rc == SQLITE_DONE) {
      return Error(Errc::kNotFound, path_ + ": merge: no epoch " + std::to_string(b.epoch));
    }
    if (rc != SQLITE_ROW) return SqlError(rc, "merge: cannot read epochs");
  }

  // Intern images and events: batch index -> database id.
  auto select_id = [this](const char* sql_text, const std::string& key) -> Expected<int64_t> {
    auto stmt = Prepare(sql_text);
    if (!stmt) return stmt.error();
    sql::Reset reset(*stmt);
    sql::Bind(*stmt, 1, key);
    int rc = sqlite3_step(*stmt);
    if (rc != SQLITE_ROW) return SqlError(rc, "merge: cannot intern " + key);
    return sqlite3_column_int64(*stmt, 0);
  };
  const int64_t now = Now();
  std::vector<int64_t> image_ids(b.images.size()), event_ids(b.events.size());
  for (size_t i = 0; i < b.images.size(); ++i) {
    if (quarantine[i]) continue;
    *failed_image = static_cast<uint32_t>(i);
    const ImageRecord& im = b.images[i];
    auto up = Prepare(kSqlUpsertImage);
    if (!up) return up.error();
    {
      sql::Reset reset(*up);
      Bind(*up, 1, im.identity);
      Bind(*up, 2, im.path);
      Bind(*up, 3, std::string_view(ImageKindName(im.kind)));  // a literal: lives on
      Bind(*up, 4, now);
      if (int rc = sqlite3_step(*up); rc != SQLITE_DONE)
        return SqlError(rc, "merge: image " + im.identity);
    }
    auto id = select_id(kSqlImageId, im.identity);
    if (!id) return id.error();
    image_ids[i] = *id;
  }
  failed_image->reset();
  for (size_t i = 0; i < b.events.size(); ++i) {
    const EventRecord& ev = b.events[i];
    auto up = Prepare(kSqlUpsertEvent);
    if (!up) return up.error();
    {
      sql::Reset reset(*up);
      Bind(*up, 1, ev.name);
      Bind(*up, 2, ev.used);
      Bind(*up, 3, static_cast<int64_t>(ev.period));
      if (int rc = sqlite3_step(*up); rc != SQLITE_DONE)
        return SqlError(rc, "merge: event " + ev.name);
    }
    auto id = select_id(kSqlEventId, ev.name);
    if (!id) return id.error();
    event_ids[i] = *id;
    // The same facts for this epoch alone: the events row follows the newest
    // merge, this one keeps the epoch's own.
    auto per_epoch = Prepare(kSqlUpsertEpochEvent);
    if (!per_epoch) return per_epoch.error();
    sql::Reset reset(*per_epoch);
    Bind(*per_epoch, 1, b.epoch);
    Bind(*per_epoch, 2, *id);
    Bind(*per_epoch, 3, ev.used);
    Bind(*per_epoch, 4, static_cast<int64_t>(ev.period));
    Bind(*per_epoch, 5, static_cast<int64_t>(ev.time_enabled));
    Bind(*per_epoch, 6, static_cast<int64_t>(ev.time_running));
    Bind(*per_epoch, 7, static_cast<int64_t>(ev.precise));
    if (int rc = sqlite3_step(*per_epoch); rc != SQLITE_DONE)
      return SqlError(rc, "merge: event " + ev.name + " of epoch " + std::to_string(b.epoch));
  }

  // Counts in key order: each upsert then lands next to the previous one in
  // the b-tree instead of at a random page.
  std::vector<const CountRow*> order;
  order.reserve(b.counts.size());
  for (const CountRow& c : b.counts) {
    if (c.count != 0 && !quarantine[c.image]) order.push_back(&c);
  }
  std::sort(order.begin(), order.end(), [&](const CountRow* x, const CountRow* y) {
    auto kx = std::tuple(image_ids[x->image], event_ids[x->event], x->offset);
    auto ky = std::tuple(image_ids[y->image], event_ids[y->event], y->offset);
    return kx < ky;
  });
  auto count = Prepare(kSqlUpsertCount);
  if (!count) return count.error();
  for (const CountRow* c : order) {
    sql::Reset reset(*count);
    Bind(*count, 1, b.epoch);
    Bind(*count, 2, image_ids[c->image]);
    Bind(*count, 3, event_ids[c->event]);
    Bind(*count, 4, static_cast<int64_t>(c->offset));
    Bind(*count, 5, static_cast<int64_t>(c->count));
    if (int rc = sqlite3_step(*count); rc != SQLITE_DONE) {
      *failed_image = c->image;
      return SqlError(rc, "merge: counts");
    }
  }

  // Cgroup paths, each once: path -> id (0: none). A path over the bound
  // (lcpid refuses those first) is stored as none and counted; so is a path
  // new to the database once the window has added kMaxNewCgroupsPerWindow,
  // the busiest processes' paths taken first.
  std::vector<const ProcessRow*> by_count;
  for (const ProcessRow& p : b.processes) {
    if (!p.cgroup.empty() && p.count != 0 && !quarantine[p.image]) by_count.push_back(&p);
  }
  std::stable_sort(by_count.begin(), by_count.end(),
                   [](const ProcessRow* x, const ProcessRow* y) { return x->count > y->count; });
  auto window_new = EpochStat(b.epoch, kCgroupsNewStat);
  if (!window_new) return window_new.error();
  std::map<std::string_view, int64_t> cgroup_ids;
  int64_t cgroups_refused = 0, cgroups_new = 0, cgroups_over_limit = 0;
  auto find = Prepare(kSqlCgroupId);
  if (!find) return find.error();
  auto insert = Prepare(kSqlInsertCgroup);
  if (!insert) return insert.error();
  for (const ProcessRow* p : by_count) {
    if (p->cgroup.size() > kMaxCgroupPath) {
      cgroups_refused++;
      continue;
    }
    if (cgroup_ids.count(p->cgroup)) continue;
    {
      sql::Reset reset(*find);
      Bind(*find, 1, p->cgroup);
      int rc = sqlite3_step(*find);
      if (rc == SQLITE_ROW) {
        cgroup_ids.emplace(p->cgroup, sqlite3_column_int64(*find, 0));
        continue;
      }
      if (rc != SQLITE_DONE) return SqlError(rc, "merge: cgroups");
    }
    if (*window_new + cgroups_new >= static_cast<int64_t>(kMaxNewCgroupsPerWindow)) {
      cgroups_over_limit++;
      continue;
    }
    sql::Reset reset(*insert);
    Bind(*insert, 1, p->cgroup);
    if (int rc = sqlite3_step(*insert); rc != SQLITE_DONE) {
      *failed_image = p->image;
      return SqlError(rc, "merge: cgroups");
    }
    cgroups_new++;
    cgroup_ids.emplace(p->cgroup, sqlite3_last_insert_rowid(db_));
  }

  auto proc = Prepare(kSqlUpsertProcess);
  if (!proc) return proc.error();
  for (const ProcessRow& p : b.processes) {
    if (p.count == 0 || quarantine[p.image]) continue;
    auto cgroup = cgroup_ids.find(p.cgroup);
    sql::Reset reset(*proc);
    Bind(*proc, 1, b.epoch);
    Bind(*proc, 2, p.pid == kRolledUpPid ? int64_t{-1} : static_cast<int64_t>(p.pid));
    Bind(*proc, 3, p.comm);
    Bind(*proc, 4, cgroup == cgroup_ids.end() ? int64_t{0} : cgroup->second);
    Bind(*proc, 5, image_ids[p.image]);
    Bind(*proc, 6, event_ids[p.event]);
    Bind(*proc, 7, static_cast<int64_t>(p.count));
    if (int rc = sqlite3_step(*proc); rc != SQLITE_DONE) {
      *failed_image = p.image;
      return SqlError(rc, "merge: process counts");
    }
  }

  int64_t stacks_quarantined = 0;
  if (auto ok = MergeStacks(b, image_ids, quarantine, &stacks_quarantined); !ok) return ok;
  if (auto ok = MergeCost(b); !ok) return ok;

  auto stat = Prepare(kSqlUpsertStat);
  if (!stat) return stat.error();
  auto add_stat = [&](const std::string& name, int64_t value) -> Expected<void> {
    sql::Reset reset(*stat);
    Bind(*stat, 1, b.epoch);
    Bind(*stat, 2, name);
    Bind(*stat, 3, value);
    if (int rc = sqlite3_step(*stat); rc != SQLITE_DONE) return SqlError(rc, "merge: stats");
    return {};
  };
  for (const auto& [name, value] : b.stats) {
    if (auto ok = add_stat(name, value); !ok) return ok;
  }
  for (const auto& [name, value] :
       {std::pair{kCgroupsRefusedStat, cgroups_refused}, std::pair{kCgroupsNewStat, cgroups_new},
        std::pair{kCgroupsOverLimitStat, cgroups_over_limit},
        std::pair{kStacksQuarantinedStat, stacks_quarantined}}) {
    if (value == 0) continue;
    if (auto ok = add_stat(name, value); !ok) return ok;
  }
  if (quarantined.quarantined_images > 0) {
    // Counted where the samples would have been: samples = on disk + lost +
    // ... + quarantined.samples.
    for (const auto& [name, value] :
         {std::pair{kQuarantinedImagesStat, quarantined.quarantined_images},
          std::pair{kQuarantinedRowsStat, quarantined.quarantined_rows},
          std::pair{kQuarantinedSamplesStat, quarantined.quarantined_samples}}) {
      if (auto ok = add_stat(name, static_cast<int64_t>(value)); !ok) return ok;
    }
  }

  auto sym = Prepare(kSqlInsertSymbol);
  if (!sym) return sym.error();
  for (const SymbolRow& s : b.symbols) {
    if (quarantine[s.image]) continue;
    sql::Reset reset(*sym);
    Bind(*sym, 1, image_ids[s.image]);
    Bind(*sym, 2, static_cast<int64_t>(s.offset));
    Bind(*sym, 3, static_cast<int64_t>(s.size));
    Bind(*sym, 4, s.name);
    if (int rc = sqlite3_step(*sym); rc != SQLITE_DONE) {
      *failed_image = s.image;
      return SqlError(rc, "merge: symbols");
    }
  }
  return {};
}

// ---------------------------------------------------------------- epochs

Expected<int64_t> ProfileDb::CurrentEpoch() {
  auto newest = [this]() -> Expected<int64_t> {
    auto stmt = Prepare(kSqlNewestEpoch);
    if (!stmt) return stmt.error();
    sql::Reset reset(*stmt);
    int rc = sqlite3_step(*stmt);
    if (rc != SQLITE_ROW) return SqlError(rc, "cannot read epochs");
    return sqlite3_column_int64(*stmt, 0);  // NULL (no epochs) reads as 0
  };
  auto id = newest();
  if (!id || *id > 0) return id;
  if (mode_ == DbMode::kReadOnly) {
    return Error(Errc::kNotFound, path_ + ": no epochs yet (lcpid has not merged anything)");
  }
  if (auto ok = BeginWrite("cannot start the first epoch"); !ok) return ok.error();
  id = newest();  // another writer may have been first
  if (id && *id == 0) {
    auto ins = Prepare(kSqlInsertEpoch);
    if (!ins) {
      id = ins.error();
    } else {
      sql::Reset reset(*ins);
      sqlite3_bind_null(*ins, 1);
      sql::Bind(*ins, 2, Now());
      sql::Bind(*ins, 3, std::string_view(EpochKindName(EpochKind::kEpoch)));
      int rc = sqlite3_step(*ins);
      id = rc == SQLITE_DONE ? Expected<int64_t>(sqlite3_last_insert_rowid(db_))
                             : Expected<int64_t>(SqlError(rc, "cannot start the first epoch"));
    }
  }
  if (!id) {
    Rollback();
    return id;
  }
  if (auto ok = Commit("cannot commit the first epoch"); !ok) return ok.error();
  return id;
}

const char* EpochKindName(EpochKind kind) {
  return kind == EpochKind::kWindow ? "window" : "epoch";
}

Expected<int64_t> ProfileDb::NewEpoch(std::optional<std::string> tag, EpochKind kind,
                                      std::optional<int64_t> at) {
  if (tag && (tag->empty() || AllDigits(*tag))) {
    return Error(Errc::kInvalidArgument,
                 "epoch tag '" + *tag + "': must be non-empty and not all digits (those are ids)");
  }
  if (tag && kind == EpochKind::kWindow) {
    return Error(Errc::kInvalidArgument, "a window has no tag; a tag names an epoch's span");
  }
  if (auto ok = BeginWrite("cannot start a new epoch"); !ok) return ok.error();
  auto body = [&]() -> Expected<int64_t> {
    if (tag) {
      auto exists = Prepare(kSqlTagExists);
      if (!exists) return exists.error();
      sql::Reset reset(*exists);
      sql::Bind(*exists, 1, *tag);
      int rc = sqlite3_step(*exists);
      if (rc == SQLITE_ROW) {
        return Error(Errc::kInvalidArgument, path_ + ": epoch tag '" + *tag + "' is already used");
      }
      if (rc != SQLITE_DONE) return SqlError(rc, "cannot read epochs");
    }
    const int64_t now = at.value_or(Now());
    auto end = Prepare(kSqlEndEpochs);
    if (!end) return end.error();
    {
      sql::Reset reset(*end);
      sql::Bind(*end, 1, now);
      if (int rc = sqlite3_step(*end); rc != SQLITE_DONE)
        return SqlError(rc, "cannot end the epoch");
    }
    auto ins = Prepare(kSqlInsertEpoch);
    if (!ins) return ins.error();
    sql::Reset reset(*ins);
    if (tag) {
      sql::Bind(*ins, 1, *tag);
    } else {
      sqlite3_bind_null(*ins, 1);
    }
    sql::Bind(*ins, 2, now);
    sql::Bind(*ins, 3, std::string_view(EpochKindName(kind)));
    if (int rc = sqlite3_step(*ins); rc != SQLITE_DONE)
      return SqlError(rc, "cannot start a new epoch");
    return sqlite3_last_insert_rowid(db_);
  };
  auto id = body();
  if (!id) {
    Rollback();
    return id;
  }
  if (auto ok = Commit("cannot commit the new epoch"); !ok) return ok.error();
  return id;
}

}  // namespace lcpi
