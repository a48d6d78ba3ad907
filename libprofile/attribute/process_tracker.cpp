// process_tracker.cpp - placing side-band events in each pid's history and
// resolving a pc against it.
#include "libprofile/attribute/process_tracker.h"

#include <algorithm>

namespace lcpi {

const Mapping* AddressSpace::Find(uint64_t pc) const {
  auto it = std::upper_bound(maps.begin(), maps.end(), pc,
                             [](uint64_t a, const Mapping& m) { return a < m.start; });
  if (it == maps.begin()) return nullptr;
  const Mapping& m = *std::prev(it);
  return pc < m.end ? &m : nullptr;
}

AddressSpace& ProcessTracker::Insert(uint32_t pid, uint64_t time, std::string comm) {
  std::vector<AddressSpace>& h = history_[pid];
  auto it = std::upper_bound(h.begin(), h.end(), time,
                             [](uint64_t t, const AddressSpace& a) { return t < a.start_time; });
  AddressSpace as;
  as.start_time = time;
  as.comm = std::move(comm);
  if (it != h.end()) as.end_time = it->start_time;
  it = h.insert(it, std::move(as));
  if (it != h.begin()) {
    auto prev = it - 1;
    prev->end_time = std::min(prev->end_time, time);
  }
  return *it;
}

AddressSpace& ProcessTracker::LiveOrCreate(uint32_t pid, uint64_t time) {
  std::vector<AddressSpace>& h = history_[pid];
  for (auto it = h.rbegin(); it != h.rend(); ++it)
    if (it->start_time <= time) return *it;
  // Before anything we know of (e.g. a record older than the /proc scan).
  return Insert(pid, h.empty() ? time : std::min(time, h.front().start_time), "");
}

void ProcessTracker::OnFork(uint32_t pid, uint32_t ppid, uint64_t time) {
  // A later exec of the child already arrived: the fork's copy still
  // matters for samples between fork and exec.
  AddressSpace copy;
  auto parent = history_.find(ppid);
  if (parent != history_.end() && !parent->second.empty()) copy = LiveOrCreate(ppid, time);
  // Only now: an insertion into the flat table moves every pid's history.
  const std::vector<AddressSpace>& h = history_[pid];
  bool exists =
      std::any_of(h.begin(), h.end(), [&](const AddressSpace& a) { return a.start_time == time; });
  if (exists) return;
  AddressSpace& as = Insert(pid, time, copy.comm);
  as.maps = std::move(copy.maps);
}

void ProcessTracker::OnComm(uint32_t pid, const std::string& comm, bool exec, uint64_t time) {
  if (exec) {
    Insert(pid, time, comm);
    return;
  }
  LiveOrCreate(pid, time).comm = comm;
}

void ProcessTracker::OnMmap(uint32_t pid, const Mapping& m, uint64_t time) {
  if (m.end <= m.start) return;
  std::vector<Mapping>& maps = LiveOrCreate(pid, time).maps;
  // A new mapping replaces whatever it overlaps (perf reports no munmap).
  auto first = std::lower_bound(maps.begin(), maps.end(), m.start,
                                [](const Mapping& a, uint64_t start) { return a.start < start; });
  if (first != maps.begin() && std::prev(first)->end > m.start) --first;
  auto last = first;
  while (last != maps.end() && last->start < m.end) ++last;
  maps.insert(maps.erase(first, last), m);
}

void ProcessTracker::OnExit(uint32_t pid, uint64_t time) {
  auto h = history_.find(pid);
  if (h == history_.end()) return;
  for (AddressSpace& as : h->second)
    if (as.start_time <= time && as.end_time > time) as.end_time = time;
}

Resolution ProcessTracker::Resolve(uint32_t pid, uint64_t pc, uint64_t t_first,
                                   uint64_t t_last) const {
  Resolution r;
  auto h = history_.find(pid);
  if (h == history_.end()) return r;
  const std::vector<AddressSpace>& spaces = h->second;
  auto lookup = [&](const AddressSpace& as) {
    const Mapping* m = as.Find(pc);
    if (!m) return false;
    r.mapped = true;
    r.image = m->image;
    r.offset = pc - m->start + m->pgoff;
    r.comm = as.comm;
    return true;
  };
  // Newest first among the spaces live in the window; then any that maps pc.
  for (auto it = spaces.rbegin(); it != spaces.rend(); ++it)
    if (it->start_time <= t_last && it->end_time >= t_first && lookup(*it)) return r;
  for (auto it = spaces.rbegin(); it != spaces.rend(); ++it)
    if (lookup(*it)) return r;
  r.comm = Comm(pid, t_last);
  return r;
}

std::string_view ProcessTracker::Comm(uint32_t pid, uint64_t t_last) const {
  auto h = history_.find(pid);
  if (h == history_.end() || h->second.empty()) return {};
  const std::vector<AddressSpace>& spaces = h->second;
  for (auto it = spaces.rbegin(); it != spaces.rend(); ++it)
    if (it->start_time <= t_last) return it->comm;
  return spaces.back().comm;
}

void ProcessTracker::Reap(uint64_t time) {
  for (auto it = history_.begin(); it != history_.end();) {
    std::vector<AddressSpace>& h = it->second;
    h.erase(std::remove_if(h.begin(), h.end(),
                           [&](const AddressSpace& a) { return a.end_time < time; }),
            h.end());
    // absl's erase leaves the other iterators valid
    if (h.empty())
      history_.erase(it++);
    else
      ++it;
  }
}

size_t ProcessTracker::address_spaces() const {
  size_t n = 0;
  for (const auto& [pid, h] : history_) n += h.size();
  return n;
}

void ProcessTracker::MarkImages(std::vector<bool>& in_use) const {
  for (const auto& [pid, spaces] : history_)
    for (const AddressSpace& space : spaces)
      for (const Mapping& m : space.maps)
        if (m.image >= 0) in_use[static_cast<size_t>(m.image)] = true;
}

}  // namespace lcpi
