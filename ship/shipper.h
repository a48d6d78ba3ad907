// shipper.h - lcpi-ship's work: closed windows of the local profile
// database into ClickHouse, exactly once (fleet_schema.h says how), with
// backoff while the server is away (the windows wait in the database), and
// its progress for --status.
#ifndef LCPI_SHIP_SHIPPER_H
#define LCPI_SHIP_SHIPPER_H

#include <cstdint>
#include <string>

namespace lcpi::ship {

struct ShipOptions {
  std::string db_path;       // lcpid's database, read only
  std::string state_path;    // the shipper's own state file
  std::string url;           // ClickHouse's HTTP interface
  std::string database;      // ClickHouse database
  std::string host;          // this host's name in the fleet
  int64_t interval = 60;     // s between looks for newly closed windows
  int64_t backoff_min = 1;   // s: the first wait after a failure, doubled each time
  int64_t backoff_max = 60;  // s: the longest wait
  bool once = false;         // ship what is closed, retrying, then exit
};

// The mark lcpid's --hold-unshipped reads (ship_mark.h): the state file's
// path with ".mark" added.
inline std::string MarkPath(const std::string& state_path) { return state_path + ".mark"; }

// Ships until SIGTERM/SIGINT (or, with once, until every window closed at
// the start is shipped). Returns the exit status: 0, 1 (the profile
// database or state file unusable, stopped before done), 2 (bad options).
int RunShipper(const ShipOptions& options);

// Prints progress and lag: windows shipped and pending, the oldest pending
// one's age, the last success and error. Needs no server.
int PrintStatus(const ShipOptions& options);

}  // namespace lcpi::ship

#endif  // LCPI_SHIP_SHIPPER_H
