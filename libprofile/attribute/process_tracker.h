// process_tracker.h - every process's address spaces as a history, built from
// perf side-band records (fork, exec, mmap, exit) and a /proc scan at start.
// exec starts a new address space, exit ends one; a record is resolved
// against the address space that was live in its buffer's time window, and
// an ended address space is kept until every buffer that could name it has
// been drained (Reap()). Events may arrive slightly out of order across CPUs,
// so each is placed by its timestamp, not by arrival.
//
// Resolve runs once per overflow record (hundreds of thousands a second at
// high miss rates), the side-band events a few thousand times a second at
// most: so pids are one flat hash table, each space's mappings one sorted
// array (a binary search in contiguous memory; an mmap shifts the array),
// and a resolution points at the space's name instead of copying it.
//
// What a user's processes make it keep is bounded (perf reports no munmap,
// so a process mapping executable pages at ever new addresses would
// otherwise grow it for ever): a new mapping retires what it overlaps (the
// kernel cannot keep both); a fork shares its parent's array, copied only
// when one of them maps something; a space holds at most
// TrackerLimits::max_space_mappings, and all spaces together
// max_mappings, beyond which only spaces smaller than fair_mappings may
// grow (into fair_reserve), so one user's flood never refuses another's
// few: all together never hold more than max_mappings + fair_reserve, with
// at most a quarter more allocated than stored. A refused mapping
// is counted (TrackerStats::refused); its samples resolve as unknown.
#ifndef LCPI_LIBPROFILE_ATTRIBUTE_PROCESS_TRACKER_H
#define LCPI_LIBPROFILE_ATTRIBUTE_PROCESS_TRACKER_H

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "libprofile/attribute/cgroup_reader.h"

namespace lcpi {

constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();
constexpr int32_t kNoImage = -1;  // anonymous or JIT memory

// An executable mapping. image indexes the caller's image table (kNoImage
// for anonymous memory); offset of pc in the image = pc - start + pgoff.
struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t pgoff = 0;
  int32_t image = kNoImage;
};

// A mapping a newer one replaced: kept for samples taken before `until`
// that are resolved after the replacement was applied (their buffers were
// still queued), until Reap passes `until`.
struct RetiredMapping {
  Mapping map;
  uint64_t until = 0;  // the time of the mapping that replaced it
};

struct TrackerLimits {
  size_t max_mappings = 1u << 20;        // stored in all spaces (a shared array once)
  size_t max_space_mappings = 1u << 15;  // in one address space
  size_t fair_mappings = 1024;           // a space this small may grow past max_mappings,
  size_t fair_reserve = 1u << 18;        // up to max_mappings + fair_reserve in all
  size_t max_retired = 16;               // per space; beyond, the oldest is forgotten
};

struct TrackerStats {
  size_t mappings = 0;             // stored now (each shared array counted once)
  size_t retired = 0;              // kept for older samples now
  uint64_t refused = 0;            // mappings not kept: over a bound
  uint64_t retired_forgotten = 0;  // retired before their buffers were resolved
};

// The sorted mappings of one or more address spaces (a fork shares its
// parent's): keeps the tracker's count of stored mappings true, whichever
// space lets it go last.
struct MappingArray {
  explicit MappingArray(size_t* stored) : stored(stored) {}
  ~MappingArray() { *stored -= maps.size(); }
  MappingArray(const MappingArray&) = delete;
  MappingArray& operator=(const MappingArray&) = delete;
  std::vector<Mapping> maps;  // sorted by start address, none overlapping
  size_t* stored;
};

struct AddressSpace {
  uint64_t start_time = 0;
  uint64_t end_time = kForever;  // exit, or the next exec
  std::string comm;
  // The process's cgroup (cgroup_reader.h): inherited at fork, read at
  // exec; null: not known (not read yet, or could not be).
  CgroupRef cgroup;
  // Shared with forks until one of them maps something; null: none.
  std::shared_ptr<MappingArray> array;
  // array's mappings, [first, last): one load less on the resolution path.
  const Mapping* first = nullptr;
  const Mapping* last = nullptr;
  // Changes with [first, last): unique among every space's mappings of
  // the process (a new space or array gets a new one), so a copy made of
  // them (the unwinder's snapshot) knows when it is stale.
  uint64_t generation = 0;
  std::vector<RetiredMapping> retired;  // oldest first
  uint64_t retired_until = 0;           // the newest retired's until (0: none)

  // The mapping that holds pc, or null.
  const Mapping* Find(uint64_t pc) const;
  // The retired mapping that held pc at t (the first retired after t), or null.
  const Mapping* FindRetired(uint64_t pc, uint64_t t) const;
  size_t size() const { return static_cast<size_t>(last - first); }
  // After array changes.
  void Refresh();
};

struct Resolution {
  bool mapped = false;  // pc lies in a known mapping
  int32_t image = kNoImage;
  uint64_t offset = 0;  // file offset in the image
  // The process name ("" if the pid is unknown): it points into the
  // tracker, valid until the tracker next changes (copy it to keep it).
  std::string_view comm;
  // The space's cgroup path ("" if not known), valid as comm is, and the
  // shared path itself (null if not known), to keep it past that.
  std::string_view cgroup;
  const CgroupRef* cgroup_ref = nullptr;
};

class ProcessTracker {
 public:
  explicit ProcessTracker(TrackerLimits limits = {}) : limits_(limits) {}
  // Its mapping arrays count into it.
  ProcessTracker(const ProcessTracker&) = delete;
  ProcessTracker& operator=(const ProcessTracker&) = delete;

  // pid forked from ppid at time: the child shares the parent's maps.
  void OnFork(uint32_t pid, uint32_t ppid, uint64_t time);
  // A new name; exec == true starts a new, empty address space.
  void OnComm(uint32_t pid, const std::string& comm, bool exec, uint64_t time);
  void OnMmap(uint32_t pid, const Mapping& m, uint64_t time);
  void OnExit(uint32_t pid, uint64_t time);
  // pid's cgroup as read for the space that started at `time` (its exec or
  // fork, 0 for the /proc scan's); no other space's changes. A fork
  // inherits its parent's; an exec has none until this.
  void SetCgroup(uint32_t pid, uint64_t time, CgroupRef cgroup);

  // Resolves pc of pid for a record sampled within [t_first, t_last].
  Resolution Resolve(uint32_t pid, uint64_t pc, uint64_t t_first, uint64_t t_last) const;
  // The name Resolve gives pid at a pc no space maps (kernel records name
  // their process, not a mapping): the newest space started by t_last, ""
  // for an unknown pid. Valid until the tracker next changes.
  std::string_view Comm(uint32_t pid, uint64_t t_last) const;
  // The cgroup path of that same space ("" if not known), and the shared
  // path (null if not known; valid until the tracker next changes).
  std::string_view Cgroup(uint32_t pid, uint64_t t_last) const;
  const CgroupRef* CgroupRefOf(uint32_t pid, uint64_t t_last) const;

  // The mappings of pid's address space at t_last (the one Comm names),
  // sorted; valid until the tracker next changes. Empty for an unknown pid.
  // generation, when given, is set to the space's (0 for an unknown pid).
  std::pair<const Mapping*, const Mapping*> MappingsAt(uint32_t pid, uint64_t t_last,
                                                       uint64_t* generation = nullptr) const;

  // Forgets address spaces that ended before time: call only once every
  // buffer holding samples older than time has been resolved.
  void Reap(uint64_t time);

  // Sets in_use[image] for every image an address space still maps (ended
  // ones not yet reaped included); in_use must cover every index.
  void MarkImages(std::vector<bool>& in_use) const;

  size_t processes() const { return history_.size(); }
  size_t address_spaces() const;
  TrackerStats stats() const;
  const TrackerLimits& limits() const { return limits_; }

 private:
  // The address space of pid live at time; when none is, a new empty one
  // starting then (a record older than anything known, e.g. the /proc scan).
  AddressSpace& LiveOrCreate(uint32_t pid, uint64_t time);
  // The space that names pid's records of a window ending at t_last (Comm).
  const AddressSpace* Named(uint32_t pid, uint64_t t_last) const;
  AddressSpace& Insert(uint32_t pid, uint64_t time, std::string comm);
  // Keeps m, retired at `until`, for older samples (within max_retired).
  void Retire(AddressSpace& as, const Mapping& m, uint64_t until);
  // Forgets as's retired mappings retired before time (all: kForever).
  void ForgetRetired(AddressSpace& as, uint64_t time);

  const TrackerLimits limits_;
  size_t stored_ = 0;   // mappings in all arrays (MappingArray keeps it)
  size_t retired_ = 0;  // in all spaces' retired
  uint64_t refused_ = 0, retired_forgotten_ = 0;

  absl::flat_hash_map<uint32_t, std::vector<AddressSpace>> history_;  // by start_time
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_PROCESS_TRACKER_H
