// fleet_schema.cpp - the fleet's ClickHouse tables (fleet_schema.h).
#include "libprofile/fleet/fleet_schema.h"

namespace lcpi::fleet {

Expected<void> CheckDatabaseName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 64 && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name) {
    ok = ok &&
         ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
  }
  if (!ok) {
    return Error(Errc::kInvalidArgument,
                 "ClickHouse database name must be letters, digits and _ (not first a digit)");
  }
  return {};
}

namespace {

// Each table's columns, written once: the local tables and the Distributed
// ones over them have the same.
struct TableColumns {
  const char* name;
  const char* columns;
};
constexpr TableColumns kWindows{
    "windows",
    "host String, window_id UInt64, attempt UInt64, kind String, tag String, "
    "started DateTime, ended DateTime, shipped DateTime, count_rows UInt64, "
    "process_rows UInt64, samples UInt64"};
constexpr TableColumns kCounts{
    "counts",
    "host String, window_id UInt64, attempt UInt64, started DateTime, "
    "identity String, event String, used String, period UInt64, offset UInt64, count UInt64"};
constexpr TableColumns kProcesses{
    "processes",
    "host String, window_id UInt64, attempt UInt64, started DateTime, "
    "pid UInt32, comm String, cgroup String, unit String, container String, pod String, "
    "identity String, event String, count UInt64"};
constexpr TableColumns kWindowFacts{
    "window_facts",
    "host String, window_id UInt64, attempt UInt64, started DateTime, name String, value Int64"};
constexpr TableColumns kImages{"images",
                               "identity String, kind String, path String, host String, "
                               "symbols UInt64"};
constexpr TableColumns kSymbols{
    "symbols", "identity String, host String, offset UInt64, size UInt64, name String"};

std::string Create(const std::string& db, const TableColumns& t, const std::string& engine) {
  return "CREATE TABLE IF NOT EXISTS " + db + "." + t.name + " (" + t.columns +
         ") ENGINE = " + engine;
}

}  // namespace

std::vector<std::string> FleetSchemaStatements(const std::string& db) {
  return {
      "CREATE DATABASE IF NOT EXISTS " + db,
      // One row per window shipped: written last, it commits the window's
      // rows of that attempt. started/ended: the window's times on its host.
      Create(db, kWindows, "MergeTree() ORDER BY (host, window_id)"),
      // The profile: per window, image identity, event and offset, with the
      // event as really sampled and its mean period in that window.
      Create(db, kCounts, "MergeTree() ORDER BY (host, window_id, identity, event, offset)"),
      // Per process: pid (4294967295: the processes lcpid rolled up), its
      // command, its cgroup and the labels read from it.
      Create(db, kProcesses, "MergeTree() ORDER BY (host, window_id, identity, event)"),
      // What each window says of itself (lcpid's statistics, "stat.NAME",
      // and what its sampling cost, "cost.FIELD": fleet_window_facts.h),
      // a row a name: the fleet header's unknown, lost and cost lines.
      Create(db, kWindowFacts, "MergeTree() ORDER BY (host, window_id, name)"),
      // Each image identity once per host that ran it: the reports read an
      // identity's path and symbols from one host of their selection, so no
      // host names another's images (schema 2; schema 1 keyed them by
      // identity alone). Its row is written after its symbols, so a present
      // (identity, host) has all of them. Replacing: a row sent twice (a
      // try cut short and repeated) is folded by the next merge.
      Create(db, kImages, "ReplacingMergeTree() ORDER BY (identity, host)"),
      Create(db, kSymbols, "ReplacingMergeTree() ORDER BY (identity, host, offset, name)"),
      // What readers use: the rows of committed attempts only.
      "CREATE VIEW IF NOT EXISTS " + db + ".shipped_counts AS SELECT * FROM " + db +
          ".counts WHERE (host, window_id, attempt) IN (SELECT host, window_id, attempt FROM " +
          db + ".windows)",
      "CREATE VIEW IF NOT EXISTS " + db + ".shipped_processes AS SELECT * FROM " + db +
          ".processes WHERE (host, window_id, attempt) IN (SELECT host, window_id, attempt FROM " +
          db + ".windows)",
      "CREATE VIEW IF NOT EXISTS " + db + ".shipped_window_facts AS SELECT * FROM " + db +
          ".window_facts WHERE (host, window_id, attempt) IN (SELECT host, window_id, attempt "
          "FROM " +
          db + ".windows)",
  };
}

std::string FleetSchemaCheckQuery(const std::string& db) {
  return "SELECT count() FROM system.columns WHERE database = '" + db +
         "' AND table = 'symbols' AND name = 'host'";
}

Expected<void> CheckFleetSchemaAnswer(const std::string& db, const std::string& answer) {
  if (answer.rfind("1", 0) == 0) return {};
  return Error(Errc::kInvalidArgument,
               db +
                   ".symbols is of fleet schema 1 (images and symbols keyed by identity alone, "
                   "which let any host rename every host's images): move " +
                   db + ".images and " + db +
                   ".symbols aside as docs/fleet.md \"Schema versions\" says, and lcpi-ship "
                   "creates them again");
}

std::vector<std::string> FleetDistributedStatements(const std::string& db,
                                                    const std::string& cluster,
                                                    const std::string& shard_db) {
  auto over = [&](const TableColumns& t, const char* remote) {
    return Create(db, {remote, t.columns},
                  "Distributed(" + cluster + ", " + shard_db + ", " + remote + ")");
  };
  return {
      "CREATE DATABASE IF NOT EXISTS " + db,
      over(kWindows, "windows"),
      over(kCounts, "counts"),
      over(kProcesses, "processes"),
      over(kWindowFacts, "window_facts"),
      over(kImages, "images"),
      over(kSymbols, "symbols"),
      // Over each shard's own views: a host's windows and rows are on one
      // shard, so each shard keeps its committed attempts, and no IN
      // subquery runs over the Distributed tables (18.16 refuses those
      // unless distributed_product_mode allows them).
      over(kCounts, "shipped_counts"),
      over(kProcesses, "shipped_processes"),
      over(kWindowFacts, "shipped_window_facts"),
  };
}

}  // namespace lcpi::fleet
