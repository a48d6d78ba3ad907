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

std::vector<std::string> FleetSchemaStatements(const std::string& db) {
  return {
      "CREATE DATABASE IF NOT EXISTS " + db,
      // One row per window shipped: written last, it commits the window's
      // rows of that attempt. started/ended: the window's times on its host.
      "CREATE TABLE IF NOT EXISTS " + db +
          ".windows (host String, window_id UInt64, attempt UInt64, kind String, tag String, "
          "started DateTime, ended DateTime, shipped DateTime, count_rows UInt64, "
          "process_rows UInt64, samples UInt64) "
          "ENGINE = MergeTree() ORDER BY (host, window_id)",
      // The profile: per window, image identity, event and offset, with the
      // event as really sampled and its mean period in that window.
      "CREATE TABLE IF NOT EXISTS " + db +
          ".counts (host String, window_id UInt64, attempt UInt64, started DateTime, "
          "identity String, event String, used String, period UInt64, "
          "offset UInt64, count UInt64) "
          "ENGINE = MergeTree() ORDER BY (host, window_id, identity, event, offset)",
      // Per process: pid (4294967295: the processes lcpid rolled up), its
      // command, its cgroup and the labels read from it.
      "CREATE TABLE IF NOT EXISTS " + db +
          ".processes (host String, window_id UInt64, attempt UInt64, started DateTime, "
          "pid UInt32, comm String, cgroup String, unit String, container String, pod String, "
          "identity String, event String, count UInt64) "
          "ENGINE = MergeTree() ORDER BY (host, window_id, identity, event)",
      // Each image identity once for the fleet; its row is written after its
      // symbols, so a present identity has all of them. Replacing: a row sent
      // twice by two hosts at once is folded by the next merge.
      "CREATE TABLE IF NOT EXISTS " + db +
          ".images (identity String, kind String, path String, host String, symbols UInt64) "
          "ENGINE = ReplacingMergeTree() ORDER BY identity",
      "CREATE TABLE IF NOT EXISTS " + db +
          ".symbols (identity String, offset UInt64, size UInt64, name String) "
          "ENGINE = ReplacingMergeTree() ORDER BY (identity, offset, name)",
      // What readers use: the rows of committed attempts only.
      "CREATE VIEW IF NOT EXISTS " + db + ".shipped_counts AS SELECT * FROM " + db +
          ".counts WHERE (host, window_id, attempt) IN (SELECT host, window_id, attempt FROM " +
          db + ".windows)",
      "CREATE VIEW IF NOT EXISTS " + db + ".shipped_processes AS SELECT * FROM " + db +
          ".processes WHERE (host, window_id, attempt) IN (SELECT host, window_id, attempt FROM " +
          db + ".windows)",
  };
}

}  // namespace lcpi::fleet
