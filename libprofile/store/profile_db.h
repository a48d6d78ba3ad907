// profile_db.h - the on-disk profile database: one SQLite file (WAL mode)
// that lcpid merges counts into and that every tool reads, without root.
//
// The schema lives in schema/NNN_name.sql, compiled into this library and
// versioned by PRAGMA user_version; PRAGMA application_id marks the file as
// lcpi's. Opening validates before it returns an object: a file that is not
// SQLite, or is another application's database, is kNotADatabase; a schema
// newer than this build is kNewerSchema; damage found on the way is kCorrupt.
//
// Modes:
//  - kReadWrite (lcpid, lcpictl): creates the file if missing, switches it to
//    WAL and applies pending migrations, all in one transaction.
//  - kReadOnly (the tools): never writes, and works on a file the user can
//    only read, even in a directory the user cannot write (then the file is
//    read as immutable, which is right only while no writer runs; lcpid keeps
//    the -wal and -shm files in place so this fallback is rarely needed). It
//    requires the schema this build knows: an older one is kUnsupported ("run
//    lcpid to upgrade it"), since only a writer may migrate.
//
// Writes are all or nothing: Merge is one IMMEDIATE transaction, so a crash,
// SIGKILL or full disk leaves the database exactly as before the merge or
// exactly after it, never half-counted. Lock contention is kBusy (retry the
// call later), a full disk kFull (keep the data, retry when there is room).
//
// A ProfileDb is one SQLite connection: use it from one thread at a time.
// Each query is one statement and so sees one consistent snapshot; to see
// the same snapshot across several queries, bracket them with
// BeginSnapshot/EndSnapshot.
#ifndef LCPI_LIBPROFILE_STORE_PROFILE_DB_H
#define LCPI_LIBPROFILE_STORE_PROFILE_DB_H

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "libprofile/base/error.h"
#include "libprofile/base/image_kind.h"

struct sqlite3;
struct sqlite3_stmt;

namespace lcpi {

enum class DbMode {
  kReadWrite,  // create if missing, migrate; needs write access to file and directory
  kReadOnly,   // never writes; works on a file the user can only read
};

// PRAGMA application_id of every lcpi database: 'LCPI'.
inline constexpr int32_t kProfileDbApplicationId = 0x4c435049;

// ----- What Merge writes. Images and events are named by content and
// interned by the database; the rows refer to them by index into the batch.

struct ImageRecord {
  std::string identity;  // "build-id:<hex>", "content-hash:<hex>", "kernel:<build-id>", ...
  std::string path;      // where it was seen; the stored path follows the newest merge
  ImageKind kind = ImageKind::kUser;
};

struct EventRecord {
  std::string name;     // as the user asked: "cycles"
  std::string used;     // what was really sampled: "cpu-clock"
  uint64_t period = 0;  // mean period in the event's unit; per epoch, the newest merge wins
  // ns the event was enabled and really counting (on the PMU) since the last
  // merge, summed over CPUs: added to the epoch's (multiplex scaling). 0 and
  // 0: not known.
  uint64_t time_enabled = 0;
  uint64_t time_running = 0;
  int precise = 0;  // perf_event_attr.precise_ip used; per epoch, the newest merge wins
};

struct CountRow {
  uint32_t image = 0;   // index into MergeBatch::images
  uint32_t event = 0;   // index into MergeBatch::events
  uint64_t offset = 0;  // file offset in the image (kernel: offset from _text)
  uint64_t count = 0;
};

struct ProcessRow {
  uint32_t pid = 0;
  std::string comm;
  uint32_t image = 0;  // index into MergeBatch::images
  uint32_t event = 0;  // index into MergeBatch::events
  uint64_t count = 0;
  // The process's cgroup path (/proc/PID/cgroup, base/cgroup_label.h); "":
  // not known. Over kMaxCgroupPath: stored as not known, counted in the
  // epoch's statistic cgroups_refused.
  std::string cgroup = {};
};

struct SymbolRow {
  uint32_t image = 0;  // index into MergeBatch::images
  uint64_t offset = 0;
  uint64_t size = 0;
  // Owned by the batch: the writer thread binds it while the loop may read
  // kallsyms or a JIT map again and free what a view would point into
  // (issue 25). A kernel's first batch copies its ~120,000 names once.
  std::string name;
};

// One distinct call stack of a batch and its samples. Frames name images
// by index into MergeBatch::images, leaf first; every offset after the
// leaf's is of the call instruction (a return address less one).
struct StackRow {
  uint8_t end = 0;  // why the stack has no more frames (collect/stack_sample.h StackEnd)
  std::vector<std::pair<uint32_t, uint64_t>> frames;
  uint64_t count = 0;
};

// A stack as the tools read it: frames by image id, and its samples summed
// over the epochs asked for.
struct StoredStack {
  uint8_t end = 0;
  std::vector<std::pair<int64_t, uint64_t>> frames;
  uint64_t count = 0;
};

// The pid of a process row that sums the processes lcpid did not keep apart
// (lcpid --max-processes): one row per command, image and event. Stored as
// pid -1 (no real pid is), read back as this value.
constexpr uint32_t kRolledUpPid = 0xffffffffu;

// What sampling cost in one merge, or summed over windows (table
// window_costs, schema/007): every figure is a sum, so merges, rollups and
// reports add them up and divide once (libprofile/report/observer_cost.h).
struct WindowCost {
  uint64_t samples = 0;            // samples these sums cover
  uint64_t cpu_ns = 0;             // the CPU time they were taken in: wall ns x online CPUs
  uint64_t interrupt_ns = 0;       // sum over the samples of one sample's estimated cost
  uint64_t interrupt_ci95_ns = 0;  // sum of that estimate's 95 % half-widths
  uint64_t daemon_ns = 0;          // lcpid's own threads' CPU
  uint64_t module_samples = 0;     // lcpi.ko timed these samples' handler (1 in 64)...
  uint64_t module_handler_ns = 0;  // ...and spent this long in it
  // Call stacks taken (schema/009): their interrupts are in interrupt_ns
  // (and its half-widths) beside the flat samples'.
  uint64_t stack_samples = 0;
};

// One flush of the daemon. Counts, process counts and stats are added to
// what the epoch already holds; symbols already stored are kept as they are.
struct MergeBatch {
  int64_t epoch = 0;  // an existing epoch id (CurrentEpoch, NewEpoch)
  std::vector<ImageRecord> images;
  std::vector<EventRecord> events;
  std::vector<CountRow> counts;
  std::vector<ProcessRow> processes;
  std::vector<SymbolRow> symbols;
  std::vector<StackRow> stacks;                        // added to the epoch's stack counts
  std::vector<std::pair<std::string, int64_t>> stats;  // name -> increment
  // What this flush's samples cost (added to the epoch's window_costs row),
  // if a calibration has measured it; and lcpid's pid, stored in
  // observer_pids (0: none); and the identity of lcpid's own executable,
  // stored in observer_images (empty: not known).
  std::optional<WindowCost> cost;
  uint32_t observer_pid = 0;
  std::string observer_image;
};

// What Merge set aside: the rows of images the store cannot hold (a value
// out of range, a string too long for SQLite). Also stored in the batch's
// epoch as the statistics quarantined.images, .rows and .samples.
inline constexpr const char* kQuarantinedImagesStat = "quarantined.images";
inline constexpr const char* kQuarantinedRowsStat = "quarantined.rows";
inline constexpr const char* kQuarantinedSamplesStat = "quarantined.samples";
// Process rows whose cgroup path was refused (over kMaxCgroupPath, or
// unreadable in lcpid) and filed under no cgroup: counted, never dropped.
inline constexpr const char* kCgroupsRefusedStat = "cgroups_refused";
// New cgroup paths a window may add to the database (table cgroups): paths
// are chosen by whoever makes the cgroup, so a user with a delegated subtree
// could add one at each merge, grow the file and, over --max-db-size, push
// out everyone's history. The busiest processes' paths are stored first;
// beyond the bound a row is stored in no cgroup and counted in
// kCgroupsOverLimitStat. kCgroupsNewStat is the window's count so far.
inline constexpr size_t kMaxNewCgroupsPerWindow = 1024;
inline constexpr const char* kCgroupsNewStat = "cgroups_new";
inline constexpr const char* kCgroupsOverLimitStat = "cgroups_over_limit";
struct MergeReport {
  uint64_t quarantined_images = 0;
  uint64_t quarantined_rows = 0;     // counts, process counts and symbols
  uint64_t quarantined_samples = 0;  // the sum of those counts
};

// ----- What the queries return. Ids are the database's own.

// kEpoch: started by `lcpictl epoch` (or the first one); it opens a span,
// which its tag names. kWindow: a time window lcpid closed on its own; it
// continues the span of the epoch before it.
enum class EpochKind { kEpoch, kWindow };
const char* EpochKindName(EpochKind kind);  // "epoch", "window"

struct EpochInfo {
  int64_t id = 0;
  std::optional<std::string> tag;
  int64_t started = 0;           // unix seconds
  std::optional<int64_t> ended;  // unset while current
  EpochKind kind = EpochKind::kEpoch;
};

// The epochs a query reads: every one, or the listed ids (none: no rows).
struct EpochSet {
  bool all = false;
  std::vector<int64_t> ids;
  static EpochSet All() { return {true, {}}; }
  static EpochSet Of(std::vector<int64_t> ids) { return {false, std::move(ids)}; }
  // An epoch id, or kAllEpochs (any value <= 0).
  static EpochSet From(int64_t epoch) { return epoch > 0 ? Of({epoch}) : All(); }
};

// What one epoch holds, for listings: samples (all events) and stored rows
// (counts and process counts).
struct EpochSize {
  int64_t epoch_id = 0;
  uint64_t samples = 0;
  uint64_t rows = 0;
};

// An event as it was sampled in one epoch.
struct EpochEvent {
  int64_t epoch_id = 0;
  int64_t event_id = 0;
  std::string used;
  uint64_t period = 0;
  uint64_t time_enabled = 0;  // ns, summed over CPUs and merges; 0 and 0: not known
  uint64_t time_running = 0;
  int precise = 0;
};

struct ImageInfo {
  int64_t id = 0;
  std::string identity, path;
  ImageKind kind = ImageKind::kUser;
  int64_t first_seen = 0;  // unix seconds
};

struct EventInfo {
  int64_t id = 0;
  std::string name, used;
  uint64_t period = 0;
};

struct ImageTotal {
  int64_t image_id = 0;
  int64_t event_id = 0;
  uint64_t count = 0;
};

struct OffsetCount {
  uint64_t offset = 0;
  uint64_t count = 0;
};

struct ProcessTotal {
  uint32_t pid = 0;
  std::string comm;
  int64_t image_id = 0;
  int64_t event_id = 0;
  uint64_t count = 0;
  std::string cgroup = {};  // "": not known
  // The pid was lcpid's in the epochs these samples are from (observer_pids
  // holds the pair (epoch, pid)): a pid reused in another epoch is not.
  bool observer = false;
};

struct SymbolInfo {
  uint64_t offset = 0;
  uint64_t size = 0;
  std::string name;
};

// Queries taking an epoch read that epoch; kAllEpochs (any value <= 0) sums
// over all epochs.
inline constexpr int64_t kAllEpochs = 0;

class ProfileDb {
 public:
  // Opens (kReadWrite: creates and migrates) the database at `path`.
  // kNotFound: read-only and no such file. kNotADatabase: not SQLite, or
  // another application's database. kNewerSchema: written by a newer lcpi.
  // kUnsupported: read-only on an older schema. kCorrupt, kPermission, kBusy
  // (another process holds the lock past the busy timeout), kIo.
  static Expected<std::unique_ptr<ProfileDb>> Open(const std::string& path, DbMode mode);

  ~ProfileDb();
  ProfileDb(const ProfileDb&) = delete;
  ProfileDb& operator=(const ProfileDb&) = delete;

  // The newest schema version this build knows (the highest NNN in schema/).
  static int LatestSchemaVersion();

  const std::string& path() const { return path_; }
  DbMode mode() const { return mode_; }

  // How long a call waits for another connection's lock before it returns
  // kBusy. The default, 5 s, outlasts any merge the daemon makes.
  void SetBusyTimeout(std::chrono::milliseconds timeout);

  // Adds one flush to the database in one transaction: interns images by
  // identity and events by name, then adds counts, process counts and stats
  // and stores new symbols. All or nothing, except for the rows of an image
  // the store cannot hold (a value above INT64_MAX, an empty identity, a row
  // SQLite refuses for its content): that image's rows are set aside, the
  // rest is committed, and what was set aside is counted in *report and in
  // the epoch's statistics (quarantined.*), so such a batch never has to be
  // retried. kInvalidArgument: the batch itself is wrong (an epoch id <= 0,
  // a row names an image or event outside the batch, a bad event): nothing is
  // written, do not retry it. kNotFound: no such epoch. kPermission: opened
  // read-only. kBusy, kFull, kIo: nothing was written; retry the same batch
  // later.
  Expected<void> Merge(const MergeBatch& batch, MergeReport* report = nullptr);

  // The newest epoch. Read-write: creates epoch 1 if there is none yet;
  // read-only: kNotFound if there is none.
  Expected<int64_t> CurrentEpoch();

  // Ends the current epoch and starts a new one at `at` (unix seconds;
  // default now), returning its id. A tag must be non-empty, unused and not
  // all digits (those name epochs by id): otherwise kInvalidArgument; a
  // window (kWindow) has no tag.
  Expected<int64_t> NewEpoch(std::optional<std::string> tag, EpochKind kind = EpochKind::kEpoch,
                             std::optional<int64_t> at = std::nullopt);

  // All epochs, oldest first.
  Expected<std::vector<EpochInfo>> ListEpochs();

  // An epoch named by decimal id ("3") or by tag ("before-upgrade");
  // kNotFound if none.
  Expected<int64_t> FindEpoch(const std::string& id_or_tag);

  // All images and events, by id.
  Expected<std::vector<ImageInfo>> ListImages();
  Expected<std::vector<EventInfo>> ListEvents();

  // Samples per image per event, summed over `epochs`, by image then event.
  // Epochs sampled at different periods (the cost budget's governed rate,
  // a changed --period) are summed by their periods: each epoch's counts
  // times its period over the newest epoch's, rounded, so the sum is in
  // samples at the newest period (which reports multiply by it) and a
  // window sampled at a quarter of the rate weighs as much as its time.
  // Likewise OffsetCounts and ProcessTotals.
  Expected<std::vector<ImageTotal>> ImageTotals(const EpochSet& epochs);
  Expected<std::vector<ImageTotal>> ImageTotals(int64_t epoch) {
    return ImageTotals(EpochSet::From(epoch));
  }

  // Samples per offset in [lo, hi) of one image and event, ascending offsets.
  Expected<std::vector<OffsetCount>> OffsetCounts(const EpochSet& epochs, int64_t image_id,
                                                  int64_t event_id, uint64_t lo, uint64_t hi);
  Expected<std::vector<OffsetCount>> OffsetCounts(int64_t epoch, int64_t image_id, int64_t event_id,
                                                  uint64_t lo, uint64_t hi) {
    return OffsetCounts(EpochSet::From(epoch), image_id, event_id, lo, hi);
  }

  // Samples per (pid, comm, image, event), largest first.
  Expected<std::vector<ProcessTotal>> ProcessTotals(const EpochSet& epochs);
  Expected<std::vector<ProcessTotal>> ProcessTotals(int64_t epoch) {
    return ProcessTotals(EpochSet::From(epoch));
  }

  // Samples and rows per epoch that has any (one pass over the counts).
  Expected<std::vector<EpochSize>> EpochSizes();

  // How each event was sampled in `epochs`, by epoch then event. Epochs
  // merged before schema 3 have no rows: the events row stands for them.
  Expected<std::vector<EpochEvent>> EpochEvents(const EpochSet& epochs);

  // Stored symbols of an image (kernel, modules), ascending offsets.
  Expected<std::vector<SymbolInfo>> Symbols(int64_t image_id);
  // Every call stack of the epochs with its samples summed over them.
  // kCorrupt: a stored stack is damaged.
  Expected<std::vector<StoredStack>> Stacks(const EpochSet& epochs);

  // Daemon statistics summed over the merges of `epochs`.
  Expected<std::map<std::string, int64_t>> Stats(const EpochSet& epochs);
  Expected<std::map<std::string, int64_t>> Stats(int64_t epoch) {
    return Stats(EpochSet::From(epoch));
  }

  // What sampling cost in `epochs`, their window_costs rows summed; nothing
  // when none has a row (merged before schema 7, or before lcpid's first
  // calibration).
  Expected<std::optional<WindowCost>> Cost(const EpochSet& epochs);
  // lcpid's pids in `epochs` (observer_pids), ascending.
  Expected<std::vector<uint32_t>> ObserverPids(const EpochSet& epochs);
  // The identities of lcpid's executable in `epochs` (observer_images),
  // ascending.
  Expected<std::vector<std::string>> ObserverImages(const EpochSet& epochs);

  // Pins one read snapshot until EndSnapshot, so that several queries agree
  // with one another while lcpid commits. Not to be nested, nor used around
  // writes. EndSnapshot after a failed query is still required.
  Expected<void> BeginSnapshot();
  Expected<void> EndSnapshot();

  // PRAGMA integrity_check: kCorrupt with SQLite's first findings if it fails.
  Expected<void> CheckIntegrity();

  // ----- Retention (profile_db_retention.cpp; which epochs: retention.h)

  // Deletes the epochs (their counts, process counts, statistics and event
  // facts, then the rows) in one transaction, then gives the freed pages back
  // to the file system (PRAGMA incremental_vacuum) and checkpoints the WAL, so
  // the file shrinks. A reader inside a snapshot keeps seeing the old data
  // until it ends the snapshot (WAL); the file shrinks at the first
  // checkpoint after the last such reader. kInvalidArgument for the current
  // (newest, open) epoch; ids that do not exist are ignored. Images and
  // symbols stay (they are shared, and small).
  Expected<void> DropEpochs(const std::vector<int64_t>& ids);

  // Merges the epochs ids[1..] into ids[0] (a rollup of fine windows into a
  // coarser one): their counts, process counts and statistics are added to
  // ids[0]'s, ids[0] then ends where the last of them ended, and they are
  // deleted; ids[0] keeps its kind, tag and event facts, their times enabled
  // and running summed (the caller merges
  // only epochs whose facts agree: retention.h RollupGroups). One
  // transaction, then the freed pages go back as in DropEpochs.
  // kInvalidArgument for the current epoch or an id that does not exist.
  // max_processes > 0 keeps the bound of lcpid --max-processes: the pids of
  // ids[0] beyond the max_processes busiest are summed into the rolled-up
  // rows of their command (kRolledUpPid) and counted in its statistic
  // processes_rolled_up.
  Expected<void> MergeEpochs(const std::vector<int64_t>& ids, size_t max_processes = 0);
  // Deletes the cgroup paths no process row names any more (a host that
  // runs pods all day makes new ones all day), and the call stacks no
  // window counts any more. One scan of process_counts and one of
  // stack_counts: lcpid's retention runs it once a pass, after its drops
  // and rollups, which leave them.
  Expected<void> DeleteUnreferenced();

  // The database file's size as SQLite sees it (page_count * page_size), and
  // how much of it is free pages.
  struct FileSize {
    uint64_t bytes = 0;
    uint64_t free_bytes = 0;
  };
  Expected<FileSize> DatabaseSize();

  // Whether freed pages go back to the file system (auto_vacuum INCREMENTAL):
  // true for databases this version created; older ones need
  // EnableIncrementalVacuum.
  Expected<bool> IncrementalVacuumOn();

  // Switches an older database to auto_vacuum INCREMENTAL: SQLite can do that
  // only with a full VACUUM, which rewrites the file (needing as much free
  // disk again) and holds the write lock while it runs.
  Expected<void> EnableIncrementalVacuum();

 private:
  // For `epochs` where some event was sampled at more than one period: the
  // epochs, and each (epoch, event)'s weight, period / the newest epoch's;
  // none where every event has one period (the counts add as they are).
  struct PeriodWeights {
    std::vector<int64_t> epochs;
    std::map<std::pair<int64_t, int64_t>, double> weight;
    double Of(int64_t epoch, int64_t event) const {
      auto it = weight.find({epoch, event});
      return it == weight.end() ? 1.0 : it->second;
    }
  };
  Expected<std::optional<PeriodWeights>> WeightsByPeriod(const EpochSet& epochs);
  ProfileDb(sqlite3* db, std::string path, DbMode mode);

  Expected<void> Validate();
  Expected<void> Configure();
  Expected<void> Migrate();
  Expected<void> MigrateLocked(int latest);  // in one transaction, foreign keys off
  Expected<int64_t> ReadSchemaVersion();     // PRAGMA user_version
  Expected<void> Exec(const char* sql, const char* what);
  Expected<sqlite3_stmt*> Prepare(const char* sql);
  // Runs a query: bind(stmt) sets its parameters, row(stmt) takes each row.
  template <class BindFn, class RowFn>
  Expected<void> Query(const char* sql, const char* what, BindFn bind, RowFn row);
  // One epoch's statistic, 0 when it has none.
  Expected<int64_t> EpochStat(int64_t epoch, const char* name);
  Expected<void> MergeLocked(const MergeBatch& batch, const std::vector<bool>& quarantine,
                             const MergeReport& quarantined, std::optional<uint32_t>* failed_image);
  // The batch's stacks into stacks and stack_counts (profile_db_stacks.cpp);
  // *skipped counts the samples of those naming a quarantined image.
  Expected<void> MergeStacks(const MergeBatch& batch, const std::vector<int64_t>& image_ids,
                             const std::vector<bool>& quarantine, int64_t* skipped);
  // The batch's cost and lcpid's pid into window_costs and observer_pids
  // (profile_db_cost.cpp).
  Expected<void> MergeCost(const MergeBatch& batch);
  Expected<void> BeginWrite(const char* what);
  Expected<void> Commit(const char* what);
  Error SqlError(int rc, const std::string& what);
  void Rollback();

  sqlite3* db_ = nullptr;
  std::string path_;
  DbMode mode_;
  int last_rc_ = 0;           // the SQLite code behind the last SqlError
  bool in_snapshot_ = false;  // between BeginSnapshot and EndSnapshot
  // Prepared once per connection, by SQL text (the texts are constants).
  std::map<const char*, sqlite3_stmt*> stmts_;
};

// Ends the snapshot a successful BeginSnapshot() started, when it goes out
// of scope: every return path of a multi-query read releases it.
class SnapshotGuard {
 public:
  explicit SnapshotGuard(ProfileDb& db) : db_(db) {}
  ~SnapshotGuard() { (void)db_.EndSnapshot(); }
  SnapshotGuard(const SnapshotGuard&) = delete;
  SnapshotGuard& operator=(const SnapshotGuard&) = delete;

 private:
  ProfileDb& db_;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_STORE_PROFILE_DB_H
