// ship_hold.cpp - see ship_hold.h.
#include "daemon/ship_hold.h"

#include <spdlog/spdlog.h>

#include "libprofile/base/text.h"
#include "libprofile/store/ship_mark.h"

namespace lcpi {

std::optional<int64_t> ShipHold::Refresh() {
  if (path_.empty()) return std::nullopt;
  Expected<int64_t> mark = ReadShipMark(path_);
  if (mark) {
    mark_ = *mark;
    error_.clear();
    return *mark_;
  }
  // Without a mark nothing is known to be shipped: everything is held (the
  // size cap still bounds the file).
  const std::string why = mark.error().message();
  if (why != error_) spdlog::warn("retention: holding every window for lcpi-ship: {}", why);
  error_ = why;
  mark_.reset();
  return 0;
}

void ShipHold::Dropped(const EpochInfo& epoch) {
  // Held: from the mark on, or everything while there is none.
  if (path_.empty() || epoch.started < mark_.value_or(0)) return;
  unshipped_dropped_++;
  spdlog::warn("retention: the size cap dropped epoch {}, which lcpi-ship had not sent", epoch.id);
}

void ShipHold::AppendStatus(std::ostream& out, int64_t now) const {
  out << "hold_unshipped " << (path_.empty() ? std::string("off") : Printable(path_)) << "\n";
  if (path_.empty()) return;
  if (mark_) {
    out << "ship_mark " << *mark_ << "\n";
    // How long ago the oldest window not yet sent started (within one
    // window of 0 when the shipper is caught up).
    out << "ship_lag_s " << (now > *mark_ ? now - *mark_ : 0) << "\n";
  } else {
    out << "ship_mark none\n";
    if (!error_.empty()) out << "ship_mark_error " << Printable(error_) << "\n";
  }
  out << "unshipped_dropped_epochs " << unshipped_dropped_ << "\n";
}

}  // namespace lcpi
