// fleet_schema.h - the ClickHouse tables a fleet of lcpi hosts ships into
// (docs/fleet.md "Schema"). One definition, used by lcpi-ship to create
// them and by the fleet reports to read them.
//
// Exactly once: rows of counts and processes carry the (host, window_id,
// attempt) of the try that sent them, and a window counts only once its
// row in `windows` names that attempt. The shipper writes that row last,
// after asking whether it is already there, so a try cut short (the
// shipper killed, the server gone) leaves rows no reader counts, and the
// next try sends the window again under another attempt. Readers select
// through the views shipped_counts, shipped_processes and
// shipped_window_facts, which keep only committed attempts.
//
// Only SQL both ClickHouse 18.16 (Debian 12) and current releases accept:
// MergeTree() with ORDER BY (the syntax since 1.1.54310; the older
// MergeTree(date, key, granularity) needs a setting on current releases),
// String, UInt*, DateTime, IN with a tuple of a subquery, TabSeparated.
#ifndef LCPI_LIBPROFILE_FLEET_FLEET_SCHEMA_H
#define LCPI_LIBPROFILE_FLEET_FLEET_SCHEMA_H

#include <cstdint>
#include <string>
#include <vector>

#include "libprofile/base/error.h"

namespace lcpi::fleet {

// The default database name.
inline constexpr const char* kDefaultFleetDatabase = "lcpi";

// kInvalidArgument unless `name` is a plain identifier ([A-Za-z_][A-Za-z0-9_]*,
// at most 64 bytes): it is written into statements unquoted.
Expected<void> CheckDatabaseName(const std::string& name);

// CREATE ... IF NOT EXISTS statements for the database and its tables and
// views, in order; running them again changes nothing.
std::vector<std::string> FleetSchemaStatements(const std::string& database);

// The fleet's schema version: 2 keys images and symbols by (identity,
// host). A database made by schema 1 (keyed by identity alone) is not
// changed in place (a ReplacingMergeTree's key cannot gain a column on
// 18.16): lcpi-ship asks FleetSchemaCheckQuery after creating the tables and
// CheckFleetSchemaAnswer refuses schema 1's with what to do.
inline constexpr int kFleetSchemaVersion = 2;

// The most symbols one host ships for one image identity, and the most the
// fleet reports read of one (identity, host): an image with more is shipped
// with its first ones by offset (lcpi-ship warns), and one a server holds
// more of (a hostile or broken shipper) is read without names (lcpiprof
// warns). The largest real images have a few hundred thousand.
inline constexpr uint64_t kMaxSymbolsPerImage = 1'000'000;
std::string FleetSchemaCheckQuery(const std::string& database);
Expected<void> CheckFleetSchemaAnswer(const std::string& database, const std::string& answer);

// The same names in `database` as Distributed tables over `shard_database`
// (made by FleetSchemaStatements on every shard) of the servers' cluster
// `cluster` (their <remote_servers>): the tables and the three views, for
// lcpiprof --fleet to read the whole fleet through one server. Each host
// ships to one shard's own tables (not through these: a host's windows and
// rows must be on one shard for its views to see them). `cluster` must pass
// CheckDatabaseName's rule too. CREATE ... IF NOT EXISTS, as above.
std::vector<std::string> FleetDistributedStatements(const std::string& database,
                                                    const std::string& cluster,
                                                    const std::string& shard_database);

}  // namespace lcpi::fleet

#endif  // LCPI_LIBPROFILE_FLEET_FLEET_SCHEMA_H
