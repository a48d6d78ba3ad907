// epoch_select.cpp - see epoch_select.h.
#include "libprofile/store/epoch_select.h"

#include <algorithm>

namespace lcpi {

std::vector<EpochInfo> SpanOf(const std::vector<EpochInfo>& epochs, int64_t id) {
  std::vector<EpochInfo> out;
  auto it =
      std::find_if(epochs.begin(), epochs.end(), [&](const EpochInfo& e) { return e.id == id; });
  if (it == epochs.end()) return out;
  out.push_back(*it);
  if (it->kind == EpochKind::kWindow) return out;
  for (++it; it != epochs.end() && it->kind == EpochKind::kWindow; ++it) out.push_back(*it);
  return out;
}

std::vector<EpochInfo> EpochsOverlapping(const std::vector<EpochInfo>& epochs,
                                         std::optional<int64_t> since, std::optional<int64_t> until,
                                         int64_t now) {
  std::vector<EpochInfo> out;
  for (const EpochInfo& e : epochs) {
    const int64_t end = e.ended.value_or(std::max(now, e.started));
    // An epoch of no length (started and ended in one second) is in the
    // range when its instant is.
    const bool starts_before_until = !until || e.started < *until;
    const bool ends_after_since = !since || end > *since || (end == e.started && end >= *since);
    if (starts_before_until && ends_after_since) out.push_back(e);
  }
  return out;
}

EpochSet IdsOf(const std::vector<EpochInfo>& epochs) {
  std::vector<int64_t> ids;
  ids.reserve(epochs.size());
  for (const EpochInfo& e : epochs) ids.push_back(e.id);
  return EpochSet::Of(std::move(ids));
}

}  // namespace lcpi
