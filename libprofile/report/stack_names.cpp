// stack_names.cpp - stored call stacks with their frames named (see
// stack_names.h).
#include "libprofile/report/stack_names.h"

#include <map>
#include <memory>

#include "libprofile/base/stack_end.h"
#include "libprofile/report/report_symbols.h"
#include "libprofile/store/stat_names.h"

namespace lcpi::report {
namespace {

class FrameNamer {
 public:
  FrameNamer(ProfileDb& db, std::map<int64_t, ImageInfo> images, std::vector<std::string>* warnings)
      : db_(db), images_(std::move(images)), warnings_(warnings) {}

  NamedFrame Name(int64_t image_id, uint64_t offset) {
    auto it = images_.find(image_id);
    if (it == images_.end()) return {"[image " + std::to_string(image_id) + "]", ""};
    auto& sym = symbolizers_[image_id];
    if (!sym)
      sym = std::make_unique<ImageSymbolizer>(ImageSymbolizer::Load(db_, it->second, warnings_));
    if (std::optional<Procedure> p = sym->Find(offset)) return {p->name, it->second.path};
    return {RangeName(it->second.path, offset, offset), it->second.path};
  }

 private:
  ProfileDb& db_;
  std::map<int64_t, ImageInfo> images_;
  std::vector<std::string>* warnings_;
  std::map<int64_t, std::unique_ptr<ImageSymbolizer>> symbolizers_;
};

}  // namespace

std::vector<std::string> StacksNotKept(const Header& header) {
  static constexpr std::pair<const char*, const char*> kWhy[] = {
      {kStacksOverLimitStat, "were beyond lcpid --max-stacks in their window"},
      {kPendingDroppedStacksStat,
       "were dropped while the database refused merges (pending_dropped_stacks)"},
      {kRefusedStacksStat,
       "were in a batch the database refused (refused_stacks; logged by lcpid)"},
      {kStacksQuarantinedStat,
       "passed through an image whose rows the database set aside (stacks_quarantined)"},
  };
  std::vector<std::string> out;
  for (const auto& [stat, why] : kWhy) {
    auto it = header.stats.find(stat);
    if (it != header.stats.end() && it->second > 0)
      out.push_back(std::to_string(it->second) + " stack samples " + why +
                    " and are in none of these shares");
  }
  return out;
}

std::string StackEndFrame(uint8_t end) { return "[stack end: " + StackEndName(end) + "]"; }

Expected<std::vector<NamedStack>> NamedStacks(ProfileDb& db, const Header& header,
                                              std::vector<std::string>* warnings) {
  auto stacks = db.Stacks(QueryEpoch(header));
  if (!stacks) return stacks.error();
  auto images = db.ListImages();
  if (!images) return images.error();
  std::map<int64_t, ImageInfo> by_id;
  for (ImageInfo& i : *images) by_id.emplace(i.id, std::move(i));
  FrameNamer namer(db, std::move(by_id), warnings);
  std::vector<NamedStack> out;
  out.reserve(stacks->size());
  for (const StoredStack& s : *stacks) {
    NamedStack n;
    n.end = s.end;
    n.count = s.count;
    n.frames.reserve(s.frames.size());
    for (const auto& [image, offset] : s.frames) n.frames.push_back(namer.Name(image, offset));
    out.push_back(std::move(n));
  }
  for (std::string& w : StacksNotKept(header)) warnings->push_back(std::move(w));
  return out;
}

}  // namespace lcpi::report
