// retention.cpp - see retention.h.
#include "libprofile/store/retention.h"

#include <map>
#include <tuple>

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

namespace {

// Not shipped yet: kept for lcpi-ship (RetentionPolicy::hold_from).
bool Held(const EpochInfo& e, const RetentionPolicy& policy) {
  return policy.hold_from && e.started >= *policy.hold_from;
}

}  // namespace

std::vector<int64_t> ExpiredEpochs(const std::vector<EpochInfo>& epochs,
                                   const RetentionPolicy& policy, int64_t now) {
  std::vector<int64_t> out;
  const auto tags = SpanTags(epochs);
  // Ages come from the wall clock, which may step: the newest ended epochs
  // stay whatever it says (retention.h, keep_newest).
  size_t ended = 0;
  for (const EpochInfo& e : epochs) ended += e.ended.has_value();
  const size_t may_expire = ended > policy.keep_newest ? ended - policy.keep_newest : 0;
  size_t seen = 0;
  for (size_t i = 0; i < epochs.size(); ++i) {
    const EpochInfo& e = epochs[i];
    if (!e.ended) continue;  // the current one
    if (seen++ >= may_expire) break;
    if (Held(e, policy)) continue;
    const int64_t keep = tags[i] ? policy.retain_tagged : policy.retain;
    if (*e.ended < now - keep) out.push_back(e.id);
  }
  return out;
}

std::vector<std::vector<int64_t>> RollupGroups(const std::vector<EpochInfo>& epochs,
                                               const std::vector<EpochEvent>& facts,
                                               const RetentionPolicy& policy, int64_t now) {
  std::vector<std::vector<int64_t>> out;
  if (policy.rollup_after <= 0) return out;
  // What was sampled, at which period and how precisely: a rollup keeps its
  // first epoch's (only the times enabled and running add up).
  using Facts = std::vector<std::tuple<int64_t, std::string, uint64_t, int>>;
  std::map<int64_t, Facts> by_epoch;
  for (const EpochEvent& f : facts)
    by_epoch[f.epoch_id].emplace_back(f.event_id, f.used, f.period, f.precise);
  std::vector<int64_t> run;
  const EpochInfo* first = nullptr;
  auto close_run = [&]() {
    if (run.size() >= 2) out.push_back(run);
    run.clear();
    first = nullptr;
  };
  for (const EpochInfo& e : epochs) {
    const bool old_enough = e.ended && *e.ended < now - policy.rollup_after;
    if (!old_enough || Held(e, policy)) {
      close_run();
      continue;
    }
    const bool joins = first != nullptr && e.kind == EpochKind::kWindow &&
                       e.started / 86400 == first->started / 86400 &&
                       by_epoch[e.id] == by_epoch[first->id];
    if (!joins) close_run();
    if (run.empty()) first = &e;
    run.push_back(e.id);
  }
  close_run();
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
