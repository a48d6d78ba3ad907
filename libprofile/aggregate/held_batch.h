// held_batch.h - the pending data while the database refuses merges (a full
// disk, a lock held for long). lcpid holds the batch whose write failed and
// writes it again before any newer one, and the counts taken since wait in
// the Aggregator. Held data is capped: once the pending entries reach the
// cap, what is held is dropped, the oldest first (the held batch's counts,
// then the pending ones, taken as a newer batch and dropped into it). A
// dropped batch keeps only its statistics and event times: it is still
// written, so every sample stays accounted for, its counted samples moved
// from "attributed" and "unknown" to "pending_dropped":
//   samples = on disk + lost + dropped + pending_dropped (+ retention's).
// Its images, symbols and call stacks (which name its images) go too, so
// that retries are quick, the stacks' samples counted as
// "pending_dropped_stacks"; the caller must then not mark those names
// stored when it commits (they are sent again).
//
// A batch the store refuses for its content (an lcpid bug: a row naming an
// image the batch lacks) is dropped the same way, as "refused" and
// "refused_stacks", and its statistics written alone: the window still
// adds up, with those samples said to be lost.
#ifndef LCPI_LIBPROFILE_AGGREGATE_HELD_BATCH_H
#define LCPI_LIBPROFILE_AGGREGATE_HELD_BATCH_H

#include <cstdint>

#include "libprofile/store/profile_db.h"
#include "libprofile/store/stat_names.h"

namespace lcpi {

// The statistics that count a dropped batch's samples: the flat profile's,
// and the call stacks'.
struct DroppedAs {
  const char* samples;
  const char* stacks;
};
// Held while the database refused merges, beyond --max-pending-entries.
inline constexpr DroppedAs kDroppedWhileHeld{kPendingDroppedStat, kPendingDroppedStacksStat};
// Refused by the store for what the batch held.
inline constexpr DroppedAs kDroppedAsRefused{kRefusedStat, kRefusedStacksStat};

// Drops `batch`'s counts, process rows, images, symbols and call stacks
// (which name its images), moving its samples from its "attributed" and
// "unknown" statistics to `as.samples` and counting its stacks' samples in
// `as.stacks`; returns how many flat samples that was (0 if none; 2^64-1
// at most).
uint64_t DropCounts(MergeBatch& batch, const DroppedAs& as = kDroppedWhileHeld);

// Whether `batch` holds anything but statistics, event times and cost: a
// batch DropCounts left holds none.
bool HoldsRows(const MergeBatch& batch);

// Adds a newer batch's statistics (by name), event times (by position:
// the same source, the same events) and cost sums to `held`, after
// DropCounts on it.
void FoldInto(MergeBatch& held, const MergeBatch& newer);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_AGGREGATE_HELD_BATCH_H
