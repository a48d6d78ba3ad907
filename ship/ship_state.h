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
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "libprofile/base/error.h"
#include "libprofile/store/profile_db.h"

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

// Where shipping stands against the profile database's epochs (oldest
// first, ProfileDb::ListEpochs) and the state's windows: --status prints it,
// and `unshipped_from` is the mark left for lcpid (ship_mark.h).
struct ShipProgress {
  uint64_t shipped = 0;
  uint64_t pending = 0;  // closed and not shipped
  uint64_t retried = 0;  // of those, begun before
  std::optional<int64_t> oldest_pending_end;
  // Every closed epoch that started before this is shipped: the oldest
  // pending one's start, else past the newest epoch's start.
  int64_t unshipped_from = 0;
};
ShipProgress Progress(const std::vector<EpochInfo>& epochs,
                      const std::map<WindowKey, ShippedWindow>& done);

}  // namespace lcpi::ship

#endif  // LCPI_SHIP_SHIP_STATE_H
