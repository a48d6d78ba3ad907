// process_tracker.cpp - placing side-band events in each pid's history and
// resolving a pc against it.
#include "libprofile/attribute/process_tracker.h"

#include <algorithm>
#include <atomic>

#include <absl/container/flat_hash_set.h>

namespace lcpi {

const Mapping* AddressSpace::Find(uint64_t pc) const {
  const Mapping* it =
      std::upper_bound(first, last, pc, [](uint64_t a, const Mapping& m) { return a < m.start; });
  if (it == first) return nullptr;
  const Mapping& m = *std::prev(it);
  return pc < m.end ? &m : nullptr;
}

const Mapping* AddressSpace::FindRetired(uint64_t pc, uint64_t t) const {
  const Mapping* found = nullptr;
  uint64_t found_until = kForever;
  for (const RetiredMapping& r : retired)
    if (r.until > t && r.until < found_until && pc >= r.map.start && pc < r.map.end) {
      found = &r.map;
      found_until = r.until;
    }
  return found;
}

namespace {
// Every change of any space's mappings takes the next (trackers of tests
// share it: unique is all a generation needs to be).
std::atomic<uint64_t> next_generation{1};
}  // namespace

void AddressSpace::Refresh() {
  first = array ? array->maps.data() : nullptr;
  last = array ? array->maps.data() + array->maps.size() : nullptr;
  generation = next_generation.fetch_add(1, std::memory_order_relaxed);
}

AddressSpace& ProcessTracker::Insert(uint32_t pid, uint64_t time, std::string comm) {
  std::vector<AddressSpace>& h = history_[pid];
  auto it = std::upper_bound(h.begin(), h.end(), time,
                             [](uint64_t t, const AddressSpace& a) { return t < a.start_time; });
  AddressSpace as;
  as.generation = next_generation.fetch_add(1, std::memory_order_relaxed);
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
  // A later exec of the child already arrived: the fork's share still
  // matters for samples between fork and exec.
  std::string comm;
  std::shared_ptr<MappingArray> shared;
  CgroupRef cgroup;
  auto parent = history_.find(ppid);
  if (parent != history_.end() && !parent->second.empty()) {
    const AddressSpace& p = LiveOrCreate(ppid, time);
    comm = p.comm;
    shared = p.array;   // copied only when one of them maps something
    cgroup = p.cgroup;  // the kernel puts a child where its parent is
  }
  // Only now: an insertion into the flat table moves every pid's history.
  const std::vector<AddressSpace>& h = history_[pid];
  bool exists =
      std::any_of(h.begin(), h.end(), [&](const AddressSpace& a) { return a.start_time == time; });
  if (exists) return;
  AddressSpace& as = Insert(pid, time, std::move(comm));
  as.array = std::move(shared);
  as.cgroup = std::move(cgroup);
  as.Refresh();
}

void ProcessTracker::OnComm(uint32_t pid, const std::string& comm, bool exec, uint64_t time) {
  if (exec) {
    // In no known cgroup until its own is read (SetCgroup): a service
    // manager moves its child between fork and exec.
    Insert(pid, time, comm);
    return;
  }
  LiveOrCreate(pid, time).comm = comm;
}

void ProcessTracker::OnMmap(uint32_t pid, const Mapping& m, uint64_t time) {
  if (m.end <= m.start) return;
  AddressSpace& as = LiveOrCreate(pid, time);
  // A new mapping replaces whatever it overlaps (perf reports no munmap).
  const Mapping* first = std::lower_bound(
      as.first, as.last, m.start, [](const Mapping& a, uint64_t start) { return a.start < start; });
  if (first != as.first && std::prev(first)->end > m.start) --first;
  const Mapping* last = first;
  while (last != as.last && last->start < m.end) ++last;
  const size_t size = as.size() - static_cast<size_t>(last - first) + 1;
  const bool shared = as.array && as.array.use_count() > 1;
  // What storing it adds: a shared array is copied whole.
  const size_t added = shared || !as.array ? size : size - std::min(size, as.size());
  const bool grows = size > as.size();
  if ((grows && size > limits_.max_space_mappings) ||
      (added > 0 && stored_ + added > limits_.max_mappings &&
       (size > limits_.fair_mappings ||
        stored_ + added > limits_.max_mappings + limits_.fair_reserve))) {
    refused_++;
    // What it overlaps is no longer mapped there: later samples go to the
    // unknown image, not to the old file. Its own array shrinks in place; a
    // shared one cannot be copied (the bound refused that), so this space
    // drops its view of it and its later samples are all unknown.
    if (first == last) return;
    for (const Mapping* r = first; r != last; ++r) Retire(as, *r, time);
    if (shared) {
      as.array.reset();
    } else {
      std::vector<Mapping>& maps = as.array->maps;
      stored_ -= maps.size();
      maps.erase(maps.begin() + (first - as.first), maps.begin() + (last - as.first));
      stored_ += maps.size();
    }
    as.Refresh();
    return;
  }
  for (const Mapping* r = first; r != last; ++r) Retire(as, *r, time);
  const size_t at = static_cast<size_t>(first - as.first);
  const size_t n = static_cast<size_t>(last - first);
  if (shared || !as.array) {
    auto copy = std::make_shared<MappingArray>(&stored_);
    copy->maps.reserve(size);
    copy->maps.insert(copy->maps.end(), as.first, first);
    copy->maps.push_back(m);
    copy->maps.insert(copy->maps.end(), last, as.last);
    stored_ += copy->maps.size();
    as.array = std::move(copy);  // the old one's count goes with its last user
  } else {
    std::vector<Mapping>& maps = as.array->maps;
    stored_ -= maps.size();
    // A quarter more, not twice: what is allocated stays near what is stored.
    if (maps.size() == maps.capacity()) maps.reserve(maps.size() + maps.size() / 4 + 4);
    auto it = maps.erase(maps.begin() + static_cast<ptrdiff_t>(at),
                         maps.begin() + static_cast<ptrdiff_t>(at + n));
    maps.insert(it, m);
    stored_ += maps.size();
  }
  as.Refresh();
}

void ProcessTracker::Retire(AddressSpace& as, const Mapping& m, uint64_t until) {
  if (limits_.max_retired == 0) return;
  if (as.retired.size() >= limits_.max_retired) {
    as.retired.erase(as.retired.begin());
    retired_--;
    retired_forgotten_++;
  }
  as.retired.push_back({m, until});
  retired_++;
  as.retired_until = std::max(as.retired_until, until);
}

void ProcessTracker::ForgetRetired(AddressSpace& as, uint64_t time) {
  const size_t before = as.retired.size();
  as.retired.erase(std::remove_if(as.retired.begin(), as.retired.end(),
                                  [&](const RetiredMapping& r) { return r.until < time; }),
                   as.retired.end());
  retired_ -= before - as.retired.size();
  if (as.retired.empty()) {
    as.retired_until = 0;
    std::vector<RetiredMapping>().swap(as.retired);
  }
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
    // Replaced after the window ended: the window ran the old one.
    if (t_last < as.retired_until)
      if (const Mapping* old = as.FindRetired(pc, t_last)) m = old;
    if (!m) return false;
    r.mapped = true;
    r.image = m->image;
    r.offset = pc - m->start + m->pgoff;
    r.comm = as.comm;
    if (as.cgroup) {
      r.cgroup = *as.cgroup;
      r.cgroup_ref = &as.cgroup;
    }
    return true;
  };
  // Newest first among the spaces live in the window; then any that maps pc.
  for (auto it = spaces.rbegin(); it != spaces.rend(); ++it)
    if (it->start_time <= t_last && it->end_time >= t_first && lookup(*it)) return r;
  for (auto it = spaces.rbegin(); it != spaces.rend(); ++it)
    if (lookup(*it)) return r;
  if (const AddressSpace* as = Named(pid, t_last)) {
    r.comm = as->comm;
    if (as->cgroup) {
      r.cgroup = *as->cgroup;
      r.cgroup_ref = &as->cgroup;
    }
  }
  return r;
}

std::pair<const Mapping*, const Mapping*> ProcessTracker::MappingsAt(uint32_t pid, uint64_t t_last,
                                                                     uint64_t* generation) const {
  const AddressSpace* as = Named(pid, t_last);
  if (generation) *generation = as ? as->generation : 0;
  if (!as) return {nullptr, nullptr};
  return {as->first, as->last};
}

std::string_view ProcessTracker::Comm(uint32_t pid, uint64_t t_last) const {
  const AddressSpace* as = Named(pid, t_last);
  return as ? std::string_view(as->comm) : std::string_view();
}

void ProcessTracker::SetCgroup(uint32_t pid, uint64_t time, CgroupRef cgroup) {
  // Only the space that started then: a read that comes back after a later
  // exec, or after the space was reaped, names nothing else.
  auto h = history_.find(pid);
  if (h == history_.end()) return;
  for (AddressSpace& as : h->second)
    if (as.start_time == time) as.cgroup = cgroup;
}

const AddressSpace* ProcessTracker::Named(uint32_t pid, uint64_t t_last) const {
  auto h = history_.find(pid);
  if (h == history_.end() || h->second.empty()) return nullptr;
  const std::vector<AddressSpace>& spaces = h->second;
  for (auto it = spaces.rbegin(); it != spaces.rend(); ++it)
    if (it->start_time <= t_last) return &*it;
  return &spaces.back();
}

std::string_view ProcessTracker::Cgroup(uint32_t pid, uint64_t t_last) const {
  const CgroupRef* ref = CgroupRefOf(pid, t_last);
  return ref ? std::string_view(**ref) : std::string_view();
}

const CgroupRef* ProcessTracker::CgroupRefOf(uint32_t pid, uint64_t t_last) const {
  const AddressSpace* as = Named(pid, t_last);
  return as && as->cgroup ? &as->cgroup : nullptr;
}

void ProcessTracker::Reap(uint64_t time) {
  for (auto it = history_.begin(); it != history_.end();) {
    std::vector<AddressSpace>& h = it->second;
    for (AddressSpace& as : h) ForgetRetired(as, as.end_time < time ? kForever : time);
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

TrackerStats ProcessTracker::stats() const {
  return TrackerStats{stored_, retired_, refused_, retired_forgotten_};
}

void ProcessTracker::MarkImages(std::vector<bool>& in_use) const {
  absl::flat_hash_set<const MappingArray*> seen;  // a shared array once
  auto mark = [&](const Mapping& m) {
    if (m.image >= 0) in_use[static_cast<size_t>(m.image)] = true;
  };
  for (const auto& [pid, spaces] : history_)
    for (const AddressSpace& space : spaces) {
      for (const RetiredMapping& r : space.retired) mark(r.map);
      if (space.array && seen.insert(space.array.get()).second)
        for (const Mapping* m = space.first; m != space.last; ++m) mark(*m);
    }
}

}  // namespace lcpi
