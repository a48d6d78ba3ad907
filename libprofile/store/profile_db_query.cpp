// profile_db_query.cpp - the read side of the profile database: listings,
// totals, offsets, symbols and statistics for the tools, plus read snapshots
// and the integrity check. Nothing here writes.
//
// Each query is one statement, so it sees one snapshot even while lcpid
// commits. "All epochs" is a separate statement rather than "?1 <= 0 OR
// epoch_id = ?1", which would keep SQLite from using the primary key.
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "libprofile/store/profile_db.h"
#include "libprofile/store/profile_db_sql.h"
#include "libprofile/store/stack_codec.h"

namespace lcpi {

namespace {

constexpr const char kSqlListEpochs[] =
    "SELECT id, tag, started, ended, kind FROM epochs ORDER BY id";
constexpr const char kSqlEpochById[] = "SELECT id FROM epochs WHERE id = ?1";
constexpr const char kSqlEpochByTag[] = "SELECT id FROM epochs WHERE tag = ?1";
constexpr const char kSqlListImages[] =
    "SELECT id, identity, path, kind, first_seen FROM images ORDER BY id";
constexpr const char kSqlListEvents[] = "SELECT id, name, used, period FROM events ORDER BY id";
constexpr const char kSqlImageTotals[] =
    "SELECT image_id, event_id, sum(count) FROM counts WHERE epoch_id = ?1 "
    "GROUP BY image_id, event_id ORDER BY image_id, event_id";
constexpr const char kSqlImageTotalsAll[] =
    "SELECT image_id, event_id, sum(count) FROM counts "
    "GROUP BY image_id, event_id ORDER BY image_id, event_id";
constexpr const char kSqlOffsets[] =
    "SELECT image_offset, count FROM counts WHERE epoch_id = ?1 AND image_id = ?2 "
    "AND event_id = ?3 AND image_offset >= ?4 AND image_offset < ?5 ORDER BY image_offset";
// "epoch_id IN (all epochs)" lets SQLite walk the primary key once per epoch
// instead of scanning every count.
constexpr const char kSqlOffsetsAll[] =
    "SELECT image_offset, sum(count) FROM counts WHERE epoch_id IN (SELECT id FROM epochs) "
    "AND image_id = ?2 AND event_id = ?3 AND image_offset >= ?4 AND image_offset < ?5 "
    "GROUP BY image_offset ORDER BY image_offset";
// The cgroup's path by a join: 0 (not known) has no row.
// The last column: whether the row's (epoch, pid) is lcpid's (observer_pids):
// a pid is matched in its own window only, never across windows.
#define LCPI_PROCESS_COLUMNS                                                                  \
  "pid, comm, image_id, event_id, coalesce((SELECT path FROM cgroups WHERE id = cgroup_id), " \
  "''), EXISTS (SELECT 1 FROM observer_pids o WHERE o.epoch_id = process_counts.epoch_id "    \
  "AND o.pid = process_counts.pid) AS observer"
constexpr const char kSqlProcesses[] =
    "SELECT " LCPI_PROCESS_COLUMNS
    ", count FROM process_counts WHERE epoch_id = ?1 "
    "ORDER BY count DESC, pid, comm, image_id, event_id, cgroup_id";
constexpr const char kSqlProcessesAll[] =
    "SELECT " LCPI_PROCESS_COLUMNS
    ", sum(count) AS total FROM process_counts "
    "GROUP BY pid, comm, cgroup_id, image_id, event_id, observer "
    "ORDER BY total DESC, pid, comm, image_id, event_id, cgroup_id, observer";
// Several epochs: their ids as a JSON array in ?1, looked up one by one in
// the primary key ("epoch_id IN (...)"), as the all-epochs form does.
constexpr const char kSqlImageTotalsSome[] =
    "SELECT image_id, event_id, sum(count) FROM counts "
    "WHERE epoch_id IN (SELECT value FROM json_each(?1)) "
    "GROUP BY image_id, event_id ORDER BY image_id, event_id";
constexpr const char kSqlOffsetsSome[] =
    "SELECT image_offset, sum(count) FROM counts WHERE epoch_id IN "
    "(SELECT value FROM json_each(?1)) AND image_id = ?2 AND event_id = ?3 "
    "AND image_offset >= ?4 AND image_offset < ?5 GROUP BY image_offset ORDER BY image_offset";
constexpr const char kSqlProcessesSome[] =
    "SELECT " LCPI_PROCESS_COLUMNS
    ", sum(count) AS total FROM process_counts "
    "WHERE epoch_id IN (SELECT value FROM json_each(?1)) "
    "GROUP BY pid, comm, cgroup_id, image_id, event_id, observer "
    "ORDER BY total DESC, pid, comm, image_id, event_id, cgroup_id, observer";
#undef LCPI_PROCESS_COLUMNS
constexpr const char kSqlStatsSome[] =
    "SELECT name, sum(value) FROM stats WHERE epoch_id IN (SELECT value FROM json_each(?1)) "
    "GROUP BY name";
constexpr const char kSqlEpochSizes[] =
    "SELECT epoch_id, sum(samples), sum(n) FROM ("
    "SELECT epoch_id, sum(count) AS samples, count(*) AS n FROM counts GROUP BY epoch_id "
    "UNION ALL SELECT epoch_id, 0, count(*) FROM process_counts GROUP BY epoch_id) "
    "GROUP BY epoch_id ORDER BY epoch_id";
constexpr const char kSqlEpochEventsAll[] =
    "SELECT epoch_id, event_id, used, period, time_enabled, time_running, precise FROM "
    "epoch_events ORDER BY epoch_id, event_id";
constexpr const char kSqlEpochEventsSome[] =
    "SELECT epoch_id, event_id, used, period, time_enabled, time_running, precise FROM "
    "epoch_events "
    "WHERE epoch_id IN (SELECT value FROM json_each(?1)) ORDER BY epoch_id, event_id";
constexpr const char kSqlSymbols[] =
    "SELECT image_offset, size, name FROM symbols WHERE image_id = ?1 ORDER BY image_offset, name";
constexpr const char kSqlStats[] = "SELECT name, value FROM stats WHERE epoch_id = ?1";
// A stack's frames with its samples in the epochs.
constexpr const char kSqlStacks[] =
    "SELECT s.frames, c.count FROM stack_counts c JOIN stacks s ON s.id = c.stack_id "
    "WHERE c.epoch_id = ?1";
constexpr const char kSqlStacksAll[] =
    "SELECT s.frames, t.total FROM (SELECT stack_id, sum(count) AS total FROM stack_counts "
    "GROUP BY stack_id) t JOIN stacks s ON s.id = t.stack_id";
constexpr const char kSqlStacksSome[] =
    "SELECT s.frames, t.total FROM (SELECT stack_id, sum(count) AS total FROM stack_counts "
    "WHERE epoch_id IN (SELECT value FROM json_each(?1)) GROUP BY stack_id) t "
    "JOIN stacks s ON s.id = t.stack_id";
constexpr const char kSqlStatsAll[] = "SELECT name, sum(value) FROM stats GROUP BY name";
// Every epoch's row (?1 NULL) or those of the listed epochs; no rows: count 0.
constexpr const char kSqlCost[] =
    "SELECT count(*), sum(samples), sum(cpu_ns), sum(interrupt_ns), sum(interrupt_ci95_ns), "
    "sum(daemon_ns), sum(module_samples), sum(module_handler_ns), sum(stack_samples) "
    "FROM window_costs WHERE ?1 IS NULL OR epoch_id IN (SELECT value FROM json_each(?1))";
constexpr const char kSqlObserverImages[] =
    "SELECT DISTINCT identity FROM observer_images "
    "WHERE ?1 IS NULL OR epoch_id IN (SELECT value FROM json_each(?1)) ORDER BY identity";
constexpr const char kSqlObserverPids[] =
    "SELECT DISTINCT pid FROM observer_pids "
    "WHERE ?1 IS NULL OR epoch_id IN (SELECT value FROM json_each(?1)) ORDER BY pid";
// Reading page 1 is what starts the read transaction that BEGIN only announces.
constexpr const char kSqlTouch[] = "SELECT count(*) FROM sqlite_schema";

uint64_t U64(sqlite3_stmt* stmt, int column) {
  return static_cast<uint64_t>(std::max<int64_t>(0, sqlite3_column_int64(stmt, column)));
}

std::optional<std::string> OptionalText(sqlite3_stmt* stmt, int column) {
  if (sqlite3_column_type(stmt, column) == SQLITE_NULL) return std::nullopt;
  return sql::ColumnText(stmt, column);
}

// "[1,2,3]", for json_each.
std::string JsonIds(const std::vector<int64_t>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out + "]";
}

// The statement for an epoch set: every epoch, exactly one (the primary key
// directly), or several (json_each).
const char* Pick(const EpochSet& e, const char* all, const char* one, const char* some) {
  if (e.all) return all;
  return e.ids.size() == 1 ? one : some;
}

// Binds ?1 as the chosen statement expects it. `json` must outlive the step.
void BindEpochs(sqlite3_stmt* s, const EpochSet& e, const std::string& json) {
  if (e.all) return;
  if (e.ids.size() == 1) {
    sql::Bind(s, 1, e.ids.front());
  } else {
    sql::Bind(s, 1, std::string_view(json));
  }
}

// Offsets are stored as int64: a bound above INT64_MAX means "no limit".
int64_t ClampOffset(uint64_t v) {
  return static_cast<int64_t>(std::min<uint64_t>(v, std::numeric_limits<int64_t>::max()));
}

}  // namespace

template <class BindFn, class RowFn>
Expected<void> ProfileDb::Query(const char* sql_text, const char* what, BindFn bind, RowFn row) {
  auto stmt = Prepare(sql_text);
  if (!stmt) return stmt.error();
  sqlite3_stmt* s = *stmt;
  sql::Reset reset(s);
  bind(s);
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) row(s);
  if (rc != SQLITE_DONE) return SqlError(rc, what);
  return {};
}

namespace {
void NoBind(sqlite3_stmt*) {}
}  // namespace

Expected<std::vector<EpochInfo>> ProfileDb::ListEpochs() {
  std::vector<EpochInfo> out;
  auto ok = Query(kSqlListEpochs, "cannot list epochs", NoBind, [&](sqlite3_stmt* s) {
    EpochInfo e;
    e.id = sqlite3_column_int64(s, 0);
    e.tag = OptionalText(s, 1);
    e.started = sqlite3_column_int64(s, 2);
    if (sqlite3_column_type(s, 3) != SQLITE_NULL) e.ended = sqlite3_column_int64(s, 3);
    e.kind = sql::ColumnText(s, 4) == "window" ? EpochKind::kWindow : EpochKind::kEpoch;
    out.push_back(std::move(e));
  });
  if (!ok) return ok.error();
  return out;
}

Expected<int64_t> ProfileDb::FindEpoch(const std::string& id_or_tag) {
  // Tags are never all digits (NewEpoch refuses them), so this is unambiguous.
  bool numeric =
      !id_or_tag.empty() && id_or_tag.size() <= 18 &&
      std::all_of(id_or_tag.begin(), id_or_tag.end(), [](char c) { return c >= '0' && c <= '9'; });
  int64_t found = 0;
  auto take = [&](sqlite3_stmt* s) { found = sqlite3_column_int64(s, 0); };
  Expected<void> ok;
  if (numeric) {
    int64_t id = std::stoll(id_or_tag);
    ok = Query(
        kSqlEpochById, "cannot find an epoch", [&](sqlite3_stmt* s) { sql::Bind(s, 1, id); }, take);
  } else {
    ok = Query(
        kSqlEpochByTag, "cannot find an epoch",
        [&](sqlite3_stmt* s) { sql::Bind(s, 1, id_or_tag); }, take);
  }
  if (!ok) return ok.error();
  if (found == 0) {
    std::string what = numeric ? "with id " + id_or_tag : "tagged '" + id_or_tag + "'";
    return Error(Errc::kNotFound, path_ + ": no epoch " + what + " (lcpiprof --epochs lists them)");
  }
  return found;
}

Expected<std::vector<ImageInfo>> ProfileDb::ListImages() {
  std::vector<ImageInfo> out;
  std::optional<std::string> bad_kind;
  auto ok = Query(kSqlListImages, "cannot list images", NoBind, [&](sqlite3_stmt* s) {
    ImageInfo i;
    i.id = sqlite3_column_int64(s, 0);
    i.identity = sql::ColumnText(s, 1);
    i.path = sql::ColumnText(s, 2);
    std::optional<ImageKind> kind = ParseImageKind(sql::ColumnText(s, 3));
    if (!kind) {
      bad_kind = sql::ColumnText(s, 3);
      return;
    }
    i.kind = *kind;
    i.first_seen = sqlite3_column_int64(s, 4);
    out.push_back(std::move(i));
  });
  if (!ok) return ok.error();
  if (bad_kind)
    return Error(Errc::kCorrupt, path_ + ": an image of unknown kind '" + *bad_kind + "'");
  return out;
}

Expected<std::vector<EventInfo>> ProfileDb::ListEvents() {
  std::vector<EventInfo> out;
  auto ok = Query(kSqlListEvents, "cannot list events", NoBind, [&](sqlite3_stmt* s) {
    EventInfo e;
    e.id = sqlite3_column_int64(s, 0);
    e.name = sql::ColumnText(s, 1);
    e.used = sql::ColumnText(s, 2);
    e.period = U64(s, 3);
    out.push_back(std::move(e));
  });
  if (!ok) return ok.error();
  return out;
}

Expected<std::optional<ProfileDb::PeriodWeights>> ProfileDb::WeightsByPeriod(
    const EpochSet& epochs) {
  if (!epochs.all && epochs.ids.size() < 2) return std::optional<PeriodWeights>();
  Expected<std::vector<EpochEvent>> facts = EpochEvents(epochs);
  if (!facts) return facts.error();
  // Oldest epoch first: the last period seen per event is the newest's.
  std::map<int64_t, uint64_t> newest;
  bool differ = false;
  for (const EpochEvent& f : *facts) {
    auto [it, fresh] = newest.emplace(f.event_id, f.period);
    if (!fresh && it->second != f.period) differ = true;
    it->second = f.period;
  }
  if (!differ) return std::optional<PeriodWeights>();
  PeriodWeights w;
  for (const EpochEvent& f : *facts) {
    if (w.epochs.empty() || w.epochs.back() != f.epoch_id) w.epochs.push_back(f.epoch_id);
    const uint64_t ref = newest[f.event_id];
    // An epoch without a period (0) or one of a database before schema 3
    // (no row) counts as sampled at the newest.
    if (ref > 0 && f.period > 0)
      w.weight[{f.epoch_id, f.event_id}] = static_cast<double>(f.period) / ref;
  }
  // Epochs with counts but no facts (none here: every merge writes both)
  // are read too when the set names them.
  if (!epochs.all)
    for (int64_t id : epochs.ids)
      if (std::find(w.epochs.begin(), w.epochs.end(), id) == w.epochs.end()) w.epochs.push_back(id);
  return std::optional<PeriodWeights>(std::move(w));
}

namespace {
uint64_t Rounded(double x) { return static_cast<uint64_t>(std::llround(x)); }
}  // namespace

Expected<std::vector<ImageTotal>> ProfileDb::ImageTotals(const EpochSet& epochs) {
  std::vector<ImageTotal> out;
  if (!epochs.all && epochs.ids.empty()) return out;
  Expected<std::optional<PeriodWeights>> weights = WeightsByPeriod(epochs);
  if (!weights) return weights.error();
  if (*weights) {
    std::map<std::pair<int64_t, int64_t>, double> sum;
    for (int64_t id : (*weights)->epochs) {
      Expected<std::vector<ImageTotal>> one = ImageTotals(EpochSet::Of({id}));
      if (!one) return one.error();
      for (const ImageTotal& t : *one)
        sum[{t.image_id, t.event_id}] += t.count * (*weights)->Of(id, t.event_id);
    }
    for (const auto& [key, n] : sum) out.push_back({key.first, key.second, Rounded(n)});
    return out;
  }
  const std::string json = JsonIds(epochs.ids);
  auto ok = Query(
      Pick(epochs, kSqlImageTotalsAll, kSqlImageTotals, kSqlImageTotalsSome), "cannot sum images",
      [&](sqlite3_stmt* s) { BindEpochs(s, epochs, json); },
      [&](sqlite3_stmt* s) {
        out.push_back({sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), U64(s, 2)});
      });
  if (!ok) return ok.error();
  return out;
}

Expected<std::vector<OffsetCount>> ProfileDb::OffsetCounts(const EpochSet& epochs, int64_t image_id,
                                                           int64_t event_id, uint64_t lo,
                                                           uint64_t hi) {
  std::vector<OffsetCount> out;
  if (!epochs.all && epochs.ids.empty()) return out;
  Expected<std::optional<PeriodWeights>> weights = WeightsByPeriod(epochs);
  if (!weights) return weights.error();
  if (*weights) {
    std::map<uint64_t, double> sum;
    for (int64_t id : (*weights)->epochs) {
      Expected<std::vector<OffsetCount>> one =
          OffsetCounts(EpochSet::Of({id}), image_id, event_id, lo, hi);
      if (!one) return one.error();
      for (const OffsetCount& c : *one) sum[c.offset] += c.count * (*weights)->Of(id, event_id);
    }
    for (const auto& [offset, n] : sum) out.push_back({offset, Rounded(n)});
    return out;
  }
  const std::string json = JsonIds(epochs.ids);
  auto ok = Query(
      Pick(epochs, kSqlOffsetsAll, kSqlOffsets, kSqlOffsetsSome), "cannot read offsets",
      [&](sqlite3_stmt* s) {
        BindEpochs(s, epochs, json);
        sql::Bind(s, 2, image_id);
        sql::Bind(s, 3, event_id);
        sql::Bind(s, 4, ClampOffset(lo));
        sql::Bind(s, 5, ClampOffset(hi));
      },
      [&](sqlite3_stmt* s) {
        out.push_back({U64(s, 0), U64(s, 1)});
      });
  if (!ok) return ok.error();
  return out;
}

Expected<std::vector<ProcessTotal>> ProfileDb::ProcessTotals(const EpochSet& epochs) {
  std::vector<ProcessTotal> out;
  if (!epochs.all && epochs.ids.empty()) return out;
  Expected<std::optional<PeriodWeights>> weights = WeightsByPeriod(epochs);
  if (!weights) return weights.error();
  if (*weights) {
    // (pid, comm, cgroup, image, event), as the query groups them
    using Key = std::tuple<uint32_t, std::string, std::string, int64_t, int64_t, bool>;
    std::map<Key, double> sum;
    for (int64_t id : (*weights)->epochs) {
      Expected<std::vector<ProcessTotal>> one = ProcessTotals(EpochSet::Of({id}));
      if (!one) return one.error();
      for (const ProcessTotal& p : *one)
        sum[{p.pid, p.comm, p.cgroup, p.image_id, p.event_id, p.observer}] +=
            p.count * (*weights)->Of(id, p.event_id);
    }
    for (const auto& [key, n] : sum) {
      ProcessTotal p;
      std::tie(p.pid, p.comm, p.cgroup, p.image_id, p.event_id, p.observer) = key;
      p.count = Rounded(n);
      out.push_back(std::move(p));
    }
    // largest first, as the query orders them
    std::stable_sort(out.begin(), out.end(), [](const ProcessTotal& a, const ProcessTotal& b) {
      return std::tie(b.count, a.pid, a.comm, a.image_id, a.event_id, a.cgroup, a.observer) <
             std::tie(a.count, b.pid, b.comm, b.image_id, b.event_id, b.cgroup, b.observer);
    });
    return out;
  }
  const std::string json = JsonIds(epochs.ids);
  auto ok = Query(
      Pick(epochs, kSqlProcessesAll, kSqlProcesses, kSqlProcessesSome), "cannot sum processes",
      [&](sqlite3_stmt* s) { BindEpochs(s, epochs, json); },
      [&](sqlite3_stmt* s) {
        ProcessTotal p;
        p.pid = static_cast<uint32_t>(sqlite3_column_int64(s, 0));
        p.comm = sql::ColumnText(s, 1);
        p.image_id = sqlite3_column_int64(s, 2);
        p.event_id = sqlite3_column_int64(s, 3);
        p.cgroup = sql::ColumnText(s, 4);
        p.observer = sqlite3_column_int64(s, 5) != 0;
        p.count = U64(s, 6);
        out.push_back(std::move(p));
      });
  if (!ok) return ok.error();
  return out;
}

Expected<std::vector<SymbolInfo>> ProfileDb::Symbols(int64_t image_id) {
  std::vector<SymbolInfo> out;
  auto ok = Query(
      kSqlSymbols, "cannot read symbols", [&](sqlite3_stmt* s) { sql::Bind(s, 1, image_id); },
      [&](sqlite3_stmt* s) {
        out.push_back({U64(s, 0), U64(s, 1), sql::ColumnText(s, 2)});
      });
  if (!ok) return ok.error();
  return out;
}

Expected<std::vector<StoredStack>> ProfileDb::Stacks(const EpochSet& epochs) {
  std::vector<StoredStack> out;
  if (!epochs.all && epochs.ids.empty()) return out;
  const std::string json = JsonIds(epochs.ids);
  std::optional<Error> damaged;
  auto ok = Query(
      Pick(epochs, kSqlStacksAll, kSqlStacks, kSqlStacksSome), "cannot read call stacks",
      [&](sqlite3_stmt* s) { BindEpochs(s, epochs, json); },
      [&](sqlite3_stmt* s) {
        const void* bytes = sqlite3_column_blob(s, 0);
        auto size = static_cast<size_t>(sqlite3_column_bytes(s, 0));
        auto decoded =
            DecodeStack(std::string_view(bytes ? static_cast<const char*>(bytes) : "", size));
        if (!decoded) {
          if (!damaged) damaged = decoded.error();
          return;
        }
        out.push_back({decoded->first, std::move(decoded->second), U64(s, 1)});
      });
  if (!ok) return ok.error();
  if (damaged) return Error(Errc::kCorrupt, path_ + ": " + damaged->message());
  return out;
}

Expected<std::map<std::string, int64_t>> ProfileDb::Stats(const EpochSet& epochs) {
  std::map<std::string, int64_t> out;
  if (!epochs.all && epochs.ids.empty()) return out;
  const std::string json = JsonIds(epochs.ids);
  auto ok = Query(
      Pick(epochs, kSqlStatsAll, kSqlStats, kSqlStatsSome), "cannot read statistics",
      [&](sqlite3_stmt* s) { BindEpochs(s, epochs, json); },
      [&](sqlite3_stmt* s) { out[sql::ColumnText(s, 0)] = sqlite3_column_int64(s, 1); });
  if (!ok) return ok.error();
  return out;
}

Expected<std::vector<EpochSize>> ProfileDb::EpochSizes() {
  std::vector<EpochSize> out;
  auto ok = Query(kSqlEpochSizes, "cannot size epochs", NoBind, [&](sqlite3_stmt* s) {
    out.push_back({sqlite3_column_int64(s, 0), U64(s, 1), U64(s, 2)});
  });
  if (!ok) return ok.error();
  return out;
}

Expected<std::vector<EpochEvent>> ProfileDb::EpochEvents(const EpochSet& epochs) {
  std::vector<EpochEvent> out;
  if (!epochs.all && epochs.ids.empty()) return out;
  // One epoch goes through the JSON form too: a one-element array.
  const std::string json = JsonIds(epochs.ids);
  auto ok = Query(
      epochs.all ? kSqlEpochEventsAll : kSqlEpochEventsSome, "cannot read epoch events",
      [&](sqlite3_stmt* s) {
        if (!epochs.all) sql::Bind(s, 1, std::string_view(json));
      },
      [&](sqlite3_stmt* s) {
        out.push_back({sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
                       sql::ColumnText(s, 2), U64(s, 3), U64(s, 4), U64(s, 5),
                       sqlite3_column_int(s, 6)});
      });
  if (!ok) return ok.error();
  return out;
}

Expected<void> ProfileDb::BeginSnapshot() {
  if (in_snapshot_) return Error(Errc::kInvalidArgument, path_ + ": snapshot already begun");
  if (auto ok = Exec("BEGIN DEFERRED", "cannot begin a snapshot"); !ok) return ok;
  auto touch = Prepare(kSqlTouch);
  int rc = SQLITE_OK;
  if (touch) {
    sql::Reset reset(*touch);
    rc = sqlite3_step(*touch);
  }
  if (!touch || rc != SQLITE_ROW) {
    Error e = touch ? SqlError(rc, "cannot begin a snapshot") : touch.error();
    Rollback();
    return e;
  }
  in_snapshot_ = true;
  return {};
}

Expected<void> ProfileDb::EndSnapshot() {
  if (!in_snapshot_) return Error(Errc::kInvalidArgument, path_ + ": no snapshot to end");
  in_snapshot_ = false;
  // A read transaction has nothing to commit; ROLLBACK ends it even after errors.
  Rollback();
  return {};
}

Expected<void> ProfileDb::CheckIntegrity() {
  std::string findings;
  int rows = 0;
  auto stmt = Prepare("PRAGMA integrity_check(10)");
  if (!stmt) return stmt.error();
  sql::Reset reset(*stmt);
  int rc;
  while ((rc = sqlite3_step(*stmt)) == SQLITE_ROW) {
    std::string line = sql::ColumnText(*stmt, 0);
    if (rows++ > 0) findings += "; ";
    findings += line;
  }
  if (rc != SQLITE_DONE) return SqlError(rc, "integrity check failed");
  if (rows == 1 && findings == "ok") return {};
  return Error(Errc::kCorrupt, path_ + ": integrity check: " + findings);
}

namespace {
// ?1 of kSqlCost, kSqlObserverPids and kSqlObserverImages: NULL for every epoch, else the ids.
void BindEpochSet(sqlite3_stmt* s, const EpochSet& epochs, const std::string& json) {
  if (!epochs.all) sql::Bind(s, 1, std::string_view(json));
}
}  // namespace

Expected<std::optional<WindowCost>> ProfileDb::Cost(const EpochSet& epochs) {
  std::optional<WindowCost> out;
  if (!epochs.all && epochs.ids.empty()) return out;
  const std::string json = JsonIds(epochs.ids);
  auto ok = Query(
      kSqlCost, "cannot read the window costs",
      [&](sqlite3_stmt* s) { BindEpochSet(s, epochs, json); },
      [&](sqlite3_stmt* s) {
        if (sqlite3_column_int64(s, 0) == 0) return;
        out = WindowCost{U64(s, 1), U64(s, 2), U64(s, 3), U64(s, 4),
                         U64(s, 5), U64(s, 6), U64(s, 7), U64(s, 8)};
      });
  if (!ok) return ok.error();
  return out;
}

Expected<std::vector<uint32_t>> ProfileDb::ObserverPids(const EpochSet& epochs) {
  std::vector<uint32_t> out;
  if (!epochs.all && epochs.ids.empty()) return out;
  const std::string json = JsonIds(epochs.ids);
  auto ok = Query(
      kSqlObserverPids, "cannot read lcpid's pids",
      [&](sqlite3_stmt* s) { BindEpochSet(s, epochs, json); },
      [&](sqlite3_stmt* s) { out.push_back(static_cast<uint32_t>(U64(s, 0))); });
  if (!ok) return ok.error();
  return out;
}

Expected<std::vector<std::string>> ProfileDb::ObserverImages(const EpochSet& epochs) {
  std::vector<std::string> out;
  if (!epochs.all && epochs.ids.empty()) return out;
  const std::string json = JsonIds(epochs.ids);
  auto ok = Query(
      kSqlObserverImages, "cannot read lcpid's executable",
      [&](sqlite3_stmt* s) { BindEpochSet(s, epochs, json); },
      [&](sqlite3_stmt* s) { out.push_back(sql::ColumnText(s, 0)); });
  if (!ok) return ok.error();
  return out;
}

}  // namespace lcpi
