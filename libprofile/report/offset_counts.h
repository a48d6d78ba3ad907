// offset_counts.h - the samples of one image in a range of file offsets, per
// offset and event column: what lcpiprof -p groups into procedures and
// lcpilist spreads over instructions.
#ifndef LCPI_LIBPROFILE_REPORT_OFFSET_COUNTS_H
#define LCPI_LIBPROFILE_REPORT_OFFSET_COUNTS_H

#include <cstdint>
#include <map>
#include <vector>

#include "libprofile/report/report.h"

namespace lcpi::report {

// offset -> counts per event column of the header (only sampled offsets).
using CountsByOffset = std::map<uint64_t, std::vector<uint64_t>>;

// The samples of `image_id` at offsets [lo, hi) in the header's epoch(s).
Expected<CountsByOffset> CountOffsets(ProfileDb& db, const Header& header, int64_t image_id,
                                      uint64_t lo, uint64_t hi);

// Their sum per event column.
std::vector<uint64_t> SumCounts(const CountsByOffset& counts, size_t events);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_OFFSET_COUNTS_H
