// ship_mark.h - the mark lcpi-ship leaves beside its state file for lcpid:
// every closed epoch of the profile database that started before the mark
// is in ClickHouse. lcpid, given the mark's path (--hold-unshipped), keeps
// the epochs that started at or after it through retention by age and
// through rollups (retention.h, RetentionPolicy::hold_from), so a shipper
// that is behind, or a server that is away, costs no window unless the size
// cap forces it. The file is one line, the mark in unix seconds, written
// whole: a new file renamed over the old one.
#ifndef LCPI_LIBPROFILE_STORE_SHIP_MARK_H
#define LCPI_LIBPROFILE_STORE_SHIP_MARK_H

#include <cstdint>
#include <string>

#include "libprofile/base/error.h"

namespace lcpi {

// The mark in `path`. Errors: kNotFound when there is no file (nothing
// shipped yet), kBadElf for anything but a regular file (a FIFO is never
// waited on) and for a path with a symbolic link in any component,
// kInvalidArgument for contents that are not one number.
Expected<int64_t> ReadShipMark(const std::string& path);

// Writes `mark` to `path` (through path.tmp, renamed over it), readable by
// its owner and group.
Expected<void> WriteShipMark(const std::string& path, int64_t mark);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_STORE_SHIP_MARK_H
