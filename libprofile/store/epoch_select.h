// epoch_select.h - which stored epochs a selection means, over the list
// ProfileDb::ListEpochs returns: a tag's span, and the epochs a time range
// touches. Pure functions, so the tools and the tests agree on the rules.
#ifndef LCPI_LIBPROFILE_STORE_EPOCH_SELECT_H
#define LCPI_LIBPROFILE_STORE_EPOCH_SELECT_H

#include <cstdint>
#include <optional>
#include <vector>

#include "libprofile/store/profile_db.h"

namespace lcpi {

// The span that epoch `id` opens: it and the windows (kWindow) that follow
// it, up to the next epoch of kind kEpoch. Just that epoch when it is a
// window itself; empty when there is no such id. `epochs` oldest first.
std::vector<EpochInfo> SpanOf(const std::vector<EpochInfo>& epochs, int64_t id);

// The epochs whose time [started, ended) overlaps [since, until) (either
// bound may be open); a current epoch ends at `now`. Whole epochs: a report
// over them covers from the first one's start to the last one's end, which
// may reach outside the range by up to a window.
std::vector<EpochInfo> EpochsOverlapping(const std::vector<EpochInfo>& epochs,
                                         std::optional<int64_t> since, std::optional<int64_t> until,
                                         int64_t now);

// The ids, for the queries.
EpochSet IdsOf(const std::vector<EpochInfo>& epochs);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_STORE_EPOCH_SELECT_H
