// offset_counts.cpp - an image's samples per offset and event (see
// offset_counts.h).
#include "libprofile/report/offset_counts.h"

#include "libprofile/base/saturating.h"

namespace lcpi::report {

Expected<CountsByOffset> CountOffsets(ProfileDb& db, const Header& header, int64_t image_id,
                                      uint64_t lo, uint64_t hi) {
  CountsByOffset counts;
  for (size_t e = 0; e < header.events.size(); ++e) {
    auto oc = db.OffsetCounts(QueryEpoch(header), image_id, header.events[e].id, lo, hi);
    if (!oc) return oc.error();
    for (const OffsetCount& o : *oc) {
      auto& v = counts[o.offset];
      v.resize(header.events.size(), 0);
      v[e] += ScaleCount(header, e, o.count);
    }
  }
  return counts;
}

std::vector<uint64_t> SumCounts(const CountsByOffset& counts, size_t events) {
  std::vector<uint64_t> sum(events, 0);
  for (const auto& [offset, c] : counts) {
    for (size_t e = 0; e < events && e < c.size(); ++e) sum[e] = SaturatingAdd(sum[e], c[e]);
  }
  return sum;
}

}  // namespace lcpi::report
