// ship_hold.h - the windows lcpid keeps for lcpi-ship (--hold-unshipped):
// at each retention pass the shipper's mark (libprofile/store/ship_mark.h)
// says which epochs are not in ClickHouse yet, and retention by age and
// rollups leave them (RetentionPolicy::hold_from). Only the size cap drops
// them; each such drop is counted and logged, and status shows the mark and
// how far behind the shipper is.
#ifndef LCPI_DAEMON_SHIP_HOLD_H
#define LCPI_DAEMON_SHIP_HOLD_H

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "libprofile/store/profile_db.h"

namespace lcpi {

class ShipHold {
 public:
  // mark_path: lcpi-ship's mark file; empty: no shipper to wait for.
  explicit ShipHold(std::string mark_path) : path_(std::move(mark_path)) {}

  // The policy's hold_from for this pass: the mark, or 0 (every epoch held)
  // while there is no mark yet or it cannot be read (said once per change);
  // nullopt without --hold-unshipped.
  std::optional<int64_t> Refresh();

  // Called for each epoch the size cap drops: counted (and logged) when the
  // shipper had not sent it.
  void Dropped(const EpochInfo& epoch);

  // status lines: hold_unshipped, ship_mark, ship_lag_s, unshipped_dropped_epochs.
  void AppendStatus(std::ostream& out, int64_t now) const;

 private:
  std::string path_;
  std::optional<int64_t> mark_;  // as last read
  std::string error_;            // why the mark could not be read, last pass
  uint64_t unshipped_dropped_ = 0;
};

}  // namespace lcpi

#endif  // LCPI_DAEMON_SHIP_HOLD_H
