// retention.cpp - see retention.h.
#include "libprofile/store/retention.h"

namespace lcpi {

std::vector<std::optional<std::string>> SpanTags(const std::vector<EpochInfo>& epochs) {
  std::vector<std::optional<std::string>> out;
  std::optional<std::string> span;
  for (const EpochInfo& e : epochs) {
    if (e.kind == EpochKind::kEpoch) span = e.tag;  // a new span, tagged or not
    out.push_back(span);
  }
  return out;
}

std::vector<int64_t> ExpiredEpochs(const std::vector<EpochInfo>& epochs,
                                   const RetentionPolicy& policy, int64_t now) {
  std::vector<int64_t> out;
  const auto tags = SpanTags(epochs);
  for (size_t i = 0; i < epochs.size(); ++i) {
    const EpochInfo& e = epochs[i];
    if (!e.ended) continue;  // the current one
    const int64_t keep = tags[i] ? policy.retain_tagged : policy.retain;
    if (*e.ended < now - keep) out.push_back(e.id);
  }
  return out;
}

std::optional<int64_t> NextOverCap(const std::vector<EpochInfo>& epochs) {
  const auto tags = SpanTags(epochs);
  std::optional<int64_t> tagged;
  for (size_t i = 0; i < epochs.size(); ++i) {
    if (!epochs[i].ended) continue;
    if (!tags[i]) return epochs[i].id;
    if (!tagged) tagged = epochs[i].id;
  }
  return tagged;
}

}  // namespace lcpi
