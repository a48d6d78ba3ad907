// stat_names.h - the names of the statistics that more than one part
// spells: lcpid's aggregate part writes them into a window's stats, and the
// reports read them back (the lost share, the warnings of stacks not kept).
// One spelling, here in the store that holds them, so that a renamed
// statistic cannot leave a report reading a name nothing writes.
#ifndef LCPI_LIBPROFILE_STORE_STAT_NAMES_H
#define LCPI_LIBPROFILE_STORE_STAT_NAMES_H

namespace lcpi {

// Samples, and call-stack samples, dropped while the database refused
// merges, beyond --max-pending-entries (aggregate/held_batch.h).
inline constexpr const char* kPendingDroppedStat = "pending_dropped";
inline constexpr const char* kPendingDroppedStacksStat = "pending_dropped_stacks";
// The same, of a batch the store refused for its content.
inline constexpr const char* kRefusedStat = "refused";
inline constexpr const char* kRefusedStacksStat = "refused_stacks";
// Stack samples beyond lcpid --max-stacks in their window
// (aggregate/stack_table.h).
inline constexpr const char* kStacksOverLimitStat = "stacks_over_limit";
// Stack samples whose stack names a quarantined image: not stored.
inline constexpr const char* kStacksQuarantinedStat = "stacks_quarantined";

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_STORE_STAT_NAMES_H
