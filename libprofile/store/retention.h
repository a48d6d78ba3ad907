// retention.h - which stored epochs lcpid drops to keep the disk bounded:
// those older than the retention (longer for tagged spans), then, while the
// database is over its size cap, the oldest first. Pure functions over
// ProfileDb::ListEpochs, so the policy is tested without a daemon; the
// dropping itself is ProfileDb::DropEpochs.
#ifndef LCPI_LIBPROFILE_STORE_RETENTION_H
#define LCPI_LIBPROFILE_STORE_RETENTION_H

#include <cstdint>
#include <optional>
#include <vector>

#include "libprofile/store/profile_db.h"

namespace lcpi {

struct RetentionPolicy {
  int64_t retain = 30 * 86400;             // seconds an epoch is kept after it ended
  int64_t retain_tagged = 365 * 86400;     // the same for the epochs of a tagged span
  uint64_t max_bytes = uint64_t{2} << 30;  // the database file's cap; 0: none
  int64_t rollup_after = 86400;  // seconds after which a day's windows become one epoch; 0: never
  // The newest ended epochs never expire by age, whatever the clock says: a
  // forward step of the wall clock larger than `retain` would otherwise
  // drop all history at once. Only the size cap (max_bytes) drops them.
  // 24: a day of hourly windows, four hours of the default 10-minute ones.
  size_t keep_newest = 24;
  // Epochs that started at or after hold_from are not shipped yet
  // (ship_mark.h): they never expire by age and are never rolled up (a
  // rollup would fold them into a shipped epoch, and the shipper would never
  // send them). Only the size cap drops them, and lcpid counts it. nullopt:
  // no shipper to wait for.
  std::optional<int64_t> hold_from;
};

// The tag of the span each epoch is in (its own, or that of the epoch of kind
// kEpoch before it), in the order of `epochs` (oldest first).
std::vector<std::optional<std::string>> SpanTags(const std::vector<EpochInfo>& epochs);

// The epochs whose end is longer ago than their retention, oldest first. The
// current epoch (not ended), the newest policy.keep_newest ended ones and
// those not shipped yet (policy.hold_from) are never among them.
std::vector<int64_t> ExpiredEpochs(const std::vector<EpochInfo>& epochs,
                                   const RetentionPolicy& policy, int64_t now);

// Groups of epochs to merge into their first (ProfileDb::MergeEpochs):
// runs of two or more epochs that ended more than policy.rollup_after ago,
// each run within one span (every member after the first is a window),
// one UTC day (by start) and one set of event facts (`facts`:
// ProfileDb::EpochEvents: what was sampled, its period and precise_ip, so a
// rolled-up epoch keeps the period it was sampled at), none of them held
// for the shipper (policy.hold_from). Oldest first; none when rollup_after
// is 0.
std::vector<std::vector<int64_t>> RollupGroups(const std::vector<EpochInfo>& epochs,
                                               const std::vector<EpochEvent>& facts,
                                               const RetentionPolicy& policy, int64_t now);

// The epoch to drop next while over the size cap: the oldest outside a
// tagged span, else the oldest tagged one; never the current epoch. nullopt
// when nothing but the current epoch is left.
std::optional<int64_t> NextOverCap(const std::vector<EpochInfo>& epochs);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_STORE_RETENTION_H
