// ship_state.h - lcpi-ship's own bookkeeping: which windows of the profile
// database it has shipped, and its last success and error. A small SQLite
// file of its own (lcpid's database is only read), written after
// ClickHouse has the window, so it may lag ClickHouse but never lead it: a
// window ClickHouse has and this file does not is found by the shipper's
// question before its next insert (fleet_schema.h).
#ifndef LCPI_SHIP_SHIP_STATE_H
#define LCPI_SHIP_SHIP_STATE_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "libprofile/base/error.h"

struct sqlite3;

namespace lcpi::ship {

// A window of the profile database: its id and start (a database made anew
// reuses ids; the start tells the windows apart).
using WindowKey = std::pair<int64_t, int64_t>;  // (epoch id, started)

struct ShippedWindow {
  uint64_t attempt = 0;  // the try ClickHouse committed (done) or the last one begun
  int64_t attempts = 0;  // tries begun
  bool done = false;
  int64_t shipped_at = 0;  // unix seconds, when done
};

class ShipState {
 public:
  // Opens (read_only: never creates) the state file. read-write also takes
  // an exclusive lock on it for the life of the object: kBusy when another
  // lcpi-ship holds it (two shippers of one host would ship twice).
  static Expected<std::unique_ptr<ShipState>> Open(const std::string& path, bool read_only);
  ~ShipState();
  ShipState(const ShipState&) = delete;
  ShipState& operator=(const ShipState&) = delete;

  Expected<std::map<WindowKey, ShippedWindow>> Windows();
  // Records a try begun, before anything of it is sent.
  Expected<void> BeginAttempt(WindowKey window, uint64_t attempt);
  // Records the window shipped under `attempt`.
  Expected<void> MarkShipped(WindowKey window, uint64_t attempt, int64_t now);
  // Notes: last_error, last_error_at, last_ok_at, url, host.
  Expected<void> SetNote(const std::string& key, const std::string& value);
  Expected<std::map<std::string, std::string>> Notes();

 private:
  ShipState(sqlite3* db, int lock_fd) : db_(db), lock_fd_(lock_fd) {}
  Expected<void> Exec(const std::string& sql, const std::string& what);
  sqlite3* db_;
  int lock_fd_;
};

}  // namespace lcpi::ship

#endif  // LCPI_SHIP_SHIP_STATE_H
