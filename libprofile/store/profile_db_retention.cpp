// profile_db_retention.cpp - dropping old epochs and giving their space back
// to the file system: the store's half of lcpid's retention (the policy,
// which epochs go, is retention.cpp).
//
// Pages freed by DELETE stay in the file unless auto_vacuum is INCREMENTAL
// (new databases, Configure) and PRAGMA incremental_vacuum moves them to the
// end and truncates. In WAL mode the truncation reaches the file at a
// checkpoint, which never overwrites pages a reader's snapshot still needs:
// a reader that has the database open keeps its view, and the file shrinks
// at a later checkpoint.
#include <sqlite3.h>

#include <string>

#include "libprofile/store/profile_db.h"
#include "libprofile/store/profile_db_sql.h"

namespace lcpi {

namespace {

// ?1: the ids as a JSON array. Children first (foreign keys).
constexpr const char* kSqlDrop[] = {
    "DELETE FROM counts WHERE epoch_id IN (SELECT value FROM json_each(?1))",
    "DELETE FROM process_counts WHERE epoch_id IN (SELECT value FROM json_each(?1))",
    "DELETE FROM stats WHERE epoch_id IN (SELECT value FROM json_each(?1))",
    "DELETE FROM stack_counts WHERE epoch_id IN (SELECT value FROM json_each(?1))",
    "DELETE FROM epoch_events WHERE epoch_id IN (SELECT value FROM json_each(?1))",
    "DELETE FROM window_costs WHERE epoch_id IN (SELECT value FROM json_each(?1))",
    "DELETE FROM observer_pids WHERE epoch_id IN (SELECT value FROM json_each(?1))",
    "DELETE FROM observer_images WHERE epoch_id IN (SELECT value FROM json_each(?1))",
    "DELETE FROM epochs WHERE id IN (SELECT value FROM json_each(?1))",
};
// One scan of process_counts (DeleteUnreferenced).
constexpr const char kSqlDeleteUnusedCgroups[] =
    "DELETE FROM cgroups WHERE id NOT IN (SELECT cgroup_id FROM process_counts)";
constexpr const char kSqlDeleteUnusedStacks[] =
    "DELETE FROM stacks WHERE id NOT IN (SELECT stack_id FROM stack_counts)";
constexpr const char kSqlNewestOpen[] = "SELECT max(id) FROM epochs";
// What a drop takes away stays counted: the dropped epochs' statistics are
// added to the current epoch (?2) as retention_dropped.NAME, so samples taken
// = samples + retention_dropped.samples over what is stored. Those already
// carried keep their name. The subquery's WHERE true: see kSqlRollup.
constexpr const char kSqlCarryStats[] =
    "INSERT INTO stats (epoch_id, name, value) SELECT ?2, carried, sum(value) FROM "
    "(SELECT CASE WHEN name GLOB 'retention_dropped.*' THEN name "
    "ELSE 'retention_dropped.' || name END AS carried, value FROM stats "
    "WHERE epoch_id IN (SELECT value FROM json_each(?1))) WHERE true GROUP BY carried "
    "ON CONFLICT (epoch_id, name) DO UPDATE SET value = value + excluded.value";

// ids[from..] as a JSON array, for json_each().
std::string JsonArray(const std::vector<int64_t>& ids, size_t from) {
  std::string json = "[";
  for (size_t i = from; i < ids.size(); ++i) json += (i > from ? "," : "") + std::to_string(ids[i]);
  return json + "]";
}

}  // namespace

Expected<void> ProfileDb::DropEpochs(const std::vector<int64_t>& ids) {
  if (ids.empty()) return {};
  std::string json = JsonArray(ids, 0);
  if (auto ok = BeginWrite("cannot start dropping epochs"); !ok) return ok;
  auto body = [&]() -> Expected<void> {
    auto newest = Prepare(kSqlNewestOpen);
    if (!newest) return newest.error();
    int64_t current = 0;
    {
      sql::Reset reset(*newest);
      int rc = sqlite3_step(*newest);
      if (rc != SQLITE_ROW) return SqlError(rc, "cannot read epochs");
      current = sqlite3_column_int64(*newest, 0);
    }
    for (int64_t id : ids) {
      if (id == current) {
        return Error(Errc::kInvalidArgument,
                     path_ + ": epoch " + std::to_string(id) + " is current: it cannot be dropped");
      }
    }
    {
      auto carry = Prepare(kSqlCarryStats);
      if (!carry) return carry.error();
      sql::Reset reset(*carry);
      sql::Bind(*carry, 1, std::string_view(json));
      sql::Bind(*carry, 2, current);
      if (int rc = sqlite3_step(*carry); rc != SQLITE_DONE)
        return SqlError(rc, "cannot count what is dropped");
    }
    for (const char* text : kSqlDrop) {
      auto stmt = Prepare(text);
      if (!stmt) return stmt.error();
      sql::Reset reset(*stmt);
      sql::Bind(*stmt, 1, std::string_view(json));
      if (int rc = sqlite3_step(*stmt); rc != SQLITE_DONE)
        return SqlError(rc, "cannot drop epochs");
    }
    return {};
  };
  if (auto ok = body(); !ok) {
    Rollback();
    return ok;
  }
  if (auto ok = Commit("cannot commit dropping epochs"); !ok) return ok;
  // The space back to the file system; failures here lose nothing (the pages
  // stay free inside the file for the next merges), so they are reported but
  // the drop stands.
  if (auto ok = Exec("PRAGMA incremental_vacuum", "cannot return the freed pages"); !ok) return ok;
  return Exec("PRAGMA wal_checkpoint(PASSIVE)", "cannot checkpoint");
}

Expected<void> ProfileDb::DeleteUnreferenced() {
  if (auto ok = Exec(kSqlDeleteUnusedCgroups, "cannot delete the unused cgroup paths"); !ok)
    return ok;
  return Exec(kSqlDeleteUnusedStacks, "cannot delete the unused call stacks");
}

namespace {

// ?1: the target epoch, ?2: the others as a JSON array. "WHERE true" keeps
// SQLite from reading ON CONFLICT as a join constraint.
// A pid the rollup cannot keep as lcpid's: one that was lcpid's in some
// merged epoch and has process rows in another merged epoch where it was
// not (a pid reused after an lcpid restart). Its rows are summed into one
// row per (pid, command, ...), so which samples were lcpid's is lost: the
// pid is dropped from the rolled-up epoch's observer_pids (its samples show
// under its own command, none hidden) and counted in observer_pids_reused.
#define LCPI_MERGED "(SELECT ?1 UNION ALL SELECT value FROM json_each(?2))"
#define LCPI_REUSED_PIDS                                                             \
  "(SELECT DISTINCT pc.pid FROM process_counts pc WHERE pc.epoch_id IN " LCPI_MERGED \
  " AND pc.pid IN (SELECT pid FROM observer_pids WHERE epoch_id IN " LCPI_MERGED     \
  ") AND NOT "                                                                       \
  "EXISTS (SELECT 1 FROM observer_pids o WHERE o.epoch_id = pc.epoch_id AND o.pid = pc.pid))"
constexpr const char* kSqlRollup[] = {
    // lcpid's pids first, while every epoch's process rows are still its own.
    ("INSERT INTO stats (epoch_id, name, value) SELECT ?1, 'observer_pids_reused', count(*) "
     "FROM " LCPI_REUSED_PIDS " WHERE true HAVING count(*) > 0 "
     "ON CONFLICT (epoch_id, name) DO UPDATE SET value = value + excluded.value"),
    "DELETE FROM observer_pids WHERE epoch_id = ?1 AND pid IN " LCPI_REUSED_PIDS,
    ("INSERT OR IGNORE INTO observer_pids (epoch_id, pid) SELECT DISTINCT ?1, pid "
     "FROM observer_pids WHERE epoch_id IN (SELECT value FROM json_each(?2)) "
     "AND pid NOT IN " LCPI_REUSED_PIDS),
    // Identities name content, not a pid: the union.
    ("INSERT OR IGNORE INTO observer_images (epoch_id, identity) SELECT DISTINCT ?1, identity "
     "FROM observer_images WHERE epoch_id IN (SELECT value FROM json_each(?2))"),
    ("INSERT INTO counts (epoch_id, image_id, event_id, image_offset, count) "
     "SELECT ?1, image_id, event_id, image_offset, sum(count) FROM counts "
     "WHERE epoch_id IN (SELECT value FROM json_each(?2)) "
     "GROUP BY image_id, event_id, image_offset "
     "ON CONFLICT (epoch_id, image_id, event_id, image_offset) "
     "DO UPDATE SET count = count + excluded.count"),
    ("INSERT INTO process_counts (epoch_id, pid, comm, cgroup_id, image_id, event_id, count) "
     "SELECT ?1, pid, comm, cgroup_id, image_id, event_id, sum(count) FROM process_counts "
     "WHERE epoch_id IN (SELECT value FROM json_each(?2)) "
     "GROUP BY pid, comm, cgroup_id, image_id, event_id "
     "ON CONFLICT (epoch_id, pid, comm, cgroup_id, image_id, event_id) "
     "DO UPDATE SET count = count + excluded.count"),
    ("INSERT INTO stack_counts (epoch_id, stack_id, count) "
     "SELECT ?1, stack_id, sum(count) FROM stack_counts "
     "WHERE epoch_id IN (SELECT value FROM json_each(?2)) GROUP BY stack_id "
     "ON CONFLICT (epoch_id, stack_id) DO UPDATE SET count = count + excluded.count"),
    ("INSERT INTO stats (epoch_id, name, value) "
     "SELECT ?1, name, sum(value) FROM stats WHERE epoch_id IN (SELECT value FROM json_each(?2)) "
     "GROUP BY name ON CONFLICT (epoch_id, name) DO UPDATE SET value = value + excluded.value"),
    // The cost figures are sums (schema/007): the rollup's row adds theirs,
    // so a report over it weighs each window by its samples and CPU time.
    (LCPI_INSERT_WINDOW_COST
     "SELECT ?1, sum(samples), sum(cpu_ns), sum(interrupt_ns), sum(interrupt_ci95_ns), "
     "sum(daemon_ns), sum(module_samples), sum(module_handler_ns), sum(stack_samples) "
     "FROM window_costs "
     "WHERE epoch_id IN (SELECT value FROM json_each(?2)) HAVING count(*) > "
     "0 " LCPI_ADD_WINDOW_COST),
    // The merged epochs share their events' facts (RollupGroups): only the
    // times add up.
    ("UPDATE epoch_events SET "
     "time_enabled = time_enabled + (SELECT coalesce(sum(o.time_enabled), 0) FROM epoch_events o "
     "WHERE o.event_id = epoch_events.event_id AND o.epoch_id IN (SELECT value FROM "
     "json_each(?2))), "
     "time_running = time_running + (SELECT coalesce(sum(o.time_running), 0) FROM epoch_events o "
     "WHERE o.event_id = epoch_events.event_id AND o.epoch_id IN (SELECT value FROM "
     "json_each(?2))) "
     "WHERE epoch_id = ?1"),
    ("UPDATE epochs SET ended = (SELECT max(ended) FROM epochs "
     "WHERE id IN (SELECT value FROM json_each(?2))) WHERE id = ?1"),
};
#undef LCPI_REUSED_PIDS
#undef LCPI_MERGED
// The --max-processes bound after a rollup: ?1 the merged epoch, ?2 the cap.
// The pids beyond the ?2 busiest (ties: lower pid first) are counted, summed
// by command into the rolled-up rows (pid -1, kRolledUpPid), and deleted;
// the rolled-up rows are never among them, so every statement sees the same pids.
#define LCPI_PIDS_OVER_CAP                                                          \
  "(SELECT pid FROM process_counts WHERE epoch_id = ?1 AND pid != -1 GROUP BY pid " \
  "ORDER BY sum(count) DESC, pid LIMIT -1 OFFSET ?2)"
constexpr const char* kSqlCapProcesses[] = {
    ("INSERT INTO stats (epoch_id, name, value) SELECT ?1, 'processes_rolled_up', count(*) "
     "FROM " LCPI_PIDS_OVER_CAP " WHERE true HAVING count(*) > 0 "
     "ON CONFLICT (epoch_id, name) DO UPDATE SET value = value + excluded.value"),
    ("INSERT INTO process_counts (epoch_id, pid, comm, cgroup_id, image_id, event_id, count) "
     "SELECT ?1, -1, comm, cgroup_id, image_id, event_id, sum(count) FROM process_counts "
     "WHERE epoch_id = ?1 AND pid IN " LCPI_PIDS_OVER_CAP
     " GROUP BY comm, cgroup_id, image_id, event_id "
     "ON CONFLICT (epoch_id, pid, comm, cgroup_id, image_id, event_id) "
     "DO UPDATE SET count = count + excluded.count"),
    "DELETE FROM process_counts WHERE epoch_id = ?1 AND pid IN " LCPI_PIDS_OVER_CAP,
};
#undef LCPI_PIDS_OVER_CAP
constexpr const char kSqlEpochCount[] =
    "SELECT count(*) FROM epochs WHERE id IN (SELECT value FROM json_each(?1))";

}  // namespace

Expected<void> ProfileDb::MergeEpochs(const std::vector<int64_t>& ids, size_t max_processes) {
  if (ids.size() < 2) return {};
  const std::string all = JsonArray(ids, 0), others = JsonArray(ids, 1);
  if (auto ok = BeginWrite("cannot start a rollup"); !ok) return ok;
  auto body = [&]() -> Expected<void> {
    auto count = Prepare(kSqlEpochCount);
    if (!count) return count.error();
    {
      sql::Reset reset(*count);
      sql::Bind(*count, 1, std::string_view(all));
      int rc = sqlite3_step(*count);
      if (rc != SQLITE_ROW) return SqlError(rc, "cannot read epochs");
      if (sqlite3_column_int64(*count, 0) != static_cast<int64_t>(ids.size()))
        return Error(Errc::kInvalidArgument, path_ + ": rollup: an epoch does not exist");
    }
    auto newest = Prepare(kSqlNewestOpen);
    if (!newest) return newest.error();
    {
      sql::Reset reset(*newest);
      int rc = sqlite3_step(*newest);
      if (rc != SQLITE_ROW) return SqlError(rc, "cannot read epochs");
      for (int64_t id : ids) {
        if (id == sqlite3_column_int64(*newest, 0))
          return Error(Errc::kInvalidArgument,
                       path_ + ": rollup: epoch " + std::to_string(id) + " is current");
      }
    }
    for (const char* text : kSqlRollup) {
      auto stmt = Prepare(text);
      if (!stmt) return stmt.error();
      sql::Reset reset(*stmt);
      sql::Bind(*stmt, 1, ids.front());
      sql::Bind(*stmt, 2, std::string_view(others));
      if (int rc = sqlite3_step(*stmt); rc != SQLITE_DONE) return SqlError(rc, "rollup");
    }
    for (const char* text : kSqlCapProcesses) {
      if (max_processes == 0) break;
      auto stmt = Prepare(text);
      if (!stmt) return stmt.error();
      sql::Reset reset(*stmt);
      sql::Bind(*stmt, 1, ids.front());
      sql::Bind(*stmt, 2, static_cast<int64_t>(max_processes));
      if (int rc = sqlite3_step(*stmt); rc != SQLITE_DONE)
        return SqlError(rc, "rollup: the process cap");
    }
    for (const char* text : kSqlDrop) {
      auto stmt = Prepare(text);
      if (!stmt) return stmt.error();
      sql::Reset reset(*stmt);
      sql::Bind(*stmt, 1, std::string_view(others));
      if (int rc = sqlite3_step(*stmt); rc != SQLITE_DONE) return SqlError(rc, "rollup");
    }
    return {};
  };
  if (auto ok = body(); !ok) {
    Rollback();
    return ok;
  }
  if (auto ok = Commit("cannot commit the rollup"); !ok) return ok;
  if (auto ok = Exec("PRAGMA incremental_vacuum", "cannot return the freed pages"); !ok) return ok;
  return Exec("PRAGMA wal_checkpoint(PASSIVE)", "cannot checkpoint");
}

Expected<ProfileDb::FileSize> ProfileDb::DatabaseSize() {
  int64_t values[3] = {0, 0, 0};
  const char* pragmas[3] = {"PRAGMA page_count", "PRAGMA page_size", "PRAGMA freelist_count"};
  for (int i = 0; i < 3; ++i) {
    auto stmt = Prepare(pragmas[i]);
    if (!stmt) return stmt.error();
    sql::Reset reset(*stmt);
    int rc = sqlite3_step(*stmt);
    if (rc != SQLITE_ROW) return SqlError(rc, "cannot read the database size");
    values[i] = sqlite3_column_int64(*stmt, 0);
  }
  FileSize out;
  out.bytes = static_cast<uint64_t>(values[0]) * static_cast<uint64_t>(values[1]);
  out.free_bytes = static_cast<uint64_t>(values[2]) * static_cast<uint64_t>(values[1]);
  return out;
}

Expected<bool> ProfileDb::IncrementalVacuumOn() {
  auto stmt = Prepare("PRAGMA auto_vacuum");
  if (!stmt) return stmt.error();
  sql::Reset reset(*stmt);
  int rc = sqlite3_step(*stmt);
  if (rc != SQLITE_ROW) return SqlError(rc, "cannot read auto_vacuum");
  return sqlite3_column_int64(*stmt, 0) == 2;  // 0 none, 1 full, 2 incremental
}

Expected<void> ProfileDb::EnableIncrementalVacuum() {
  if (mode_ == DbMode::kReadOnly) {
    return Error(Errc::kPermission, path_ + ": opened read-only, cannot vacuum");
  }
  auto on = IncrementalVacuumOn();
  if (!on) return on.error();
  if (*on) return {};
  if (auto ok = Exec("PRAGMA auto_vacuum = INCREMENTAL", "cannot set auto_vacuum"); !ok) return ok;
  return Exec("VACUUM", "cannot vacuum (it needs free disk as large as the database)");
}

}  // namespace lcpi
