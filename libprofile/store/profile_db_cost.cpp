// profile_db_cost.cpp - a merge's cost figures and lcpid's pid into the
// window's rows (schema/007_window_cost.sql): sums, added to what the window
// holds, as its counts are.
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>

#include "libprofile/store/profile_db.h"
#include "libprofile/store/profile_db_sql.h"

namespace lcpi {

namespace {

constexpr const char kSqlAddCost[] =
    LCPI_INSERT_WINDOW_COST "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) " LCPI_ADD_WINDOW_COST;
constexpr const char kSqlAddObserverPid[] =
    "INSERT OR IGNORE INTO observer_pids (epoch_id, pid) VALUES (?1, ?2)";
constexpr const char kSqlAddObserverImage[] =
    "INSERT OR IGNORE INTO observer_images (epoch_id, identity) VALUES (?1, ?2)";

// SQLite's integers are signed: a sum past INT64_MAX (centuries of CPU) is
// kept at the largest it can hold.
int64_t Clamp(uint64_t v) { return static_cast<int64_t>(std::min<uint64_t>(v, INT64_MAX)); }

}  // namespace

Expected<void> ProfileDb::MergeCost(const MergeBatch& b) {
  if (b.cost) {
    auto stmt = Prepare(kSqlAddCost);
    if (!stmt) return stmt.error();
    sql::Reset reset(*stmt);
    const WindowCost& c = *b.cost;
    sql::Bind(*stmt, 1, b.epoch);
    int i = 2;
    for (uint64_t v : {c.samples, c.cpu_ns, c.interrupt_ns, c.interrupt_ci95_ns, c.daemon_ns,
                       c.module_samples, c.module_handler_ns, c.stack_samples})
      sql::Bind(*stmt, i++, Clamp(v));
    if (int rc = sqlite3_step(*stmt); rc != SQLITE_DONE) return SqlError(rc, "merge: window cost");
  }
  if (b.observer_pid) {
    auto stmt = Prepare(kSqlAddObserverPid);
    if (!stmt) return stmt.error();
    sql::Reset reset(*stmt);
    sql::Bind(*stmt, 1, b.epoch);
    sql::Bind(*stmt, 2, static_cast<int64_t>(b.observer_pid));
    if (int rc = sqlite3_step(*stmt); rc != SQLITE_DONE) return SqlError(rc, "merge: lcpid's pid");
  }
  if (!b.observer_image.empty()) {
    auto stmt = Prepare(kSqlAddObserverImage);
    if (!stmt) return stmt.error();
    sql::Reset reset(*stmt);
    sql::Bind(*stmt, 1, b.epoch);
    sql::Bind(*stmt, 2, b.observer_image);
    if (int rc = sqlite3_step(*stmt); rc != SQLITE_DONE)
      return SqlError(rc, "merge: lcpid's executable");
  }
  return {};
}

}  // namespace lcpi
