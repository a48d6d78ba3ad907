// process_tracker.h - every process's address spaces as a history, built from
// perf side-band records (fork, exec, mmap, exit) and a /proc scan at start.
// exec starts a new address space, exit ends one; a record is resolved
// against the address space that was live in its buffer's time window, and
// an ended address space is kept until every buffer that could name it has
// been drained (Reap()). Events may arrive slightly out of order across CPUs,
// so each is placed by its timestamp, not by arrival.
#ifndef LCPI_LIBPROFILE_ATTRIBUTE_PROCESS_TRACKER_H
#define LCPI_LIBPROFILE_ATTRIBUTE_PROCESS_TRACKER_H

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

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

struct AddressSpace {
  uint64_t start_time = 0;
  uint64_t end_time = kForever;  // exit, or the next exec
  std::string comm;
  std::map<uint64_t, Mapping> maps;  // by start address
};

struct Resolution {
  bool mapped = false;  // pc lies in a known mapping
  int32_t image = kNoImage;
  uint64_t offset = 0;  // file offset in the image
  std::string comm;     // process name ("" if the pid is unknown)
};

class ProcessTracker {
 public:
  // pid forked from ppid at time: the child starts with a copy of the parent's maps.
  void OnFork(uint32_t pid, uint32_t ppid, uint64_t time);
  // A new name; exec == true starts a new, empty address space.
  void OnComm(uint32_t pid, const std::string& comm, bool exec, uint64_t time);
  void OnMmap(uint32_t pid, const Mapping& m, uint64_t time);
  void OnExit(uint32_t pid, uint64_t time);

  // Resolves pc of pid for a record sampled within [t_first, t_last].
  Resolution Resolve(uint32_t pid, uint64_t pc, uint64_t t_first, uint64_t t_last) const;

  // Forgets address spaces that ended before time: call only once every
  // buffer holding samples older than time has been resolved.
  void Reap(uint64_t time);

  // Sets in_use[image] for every image an address space still maps (ended
  // ones not yet reaped included); in_use must cover every index.
  void MarkImages(std::vector<bool>& in_use) const;

  size_t processes() const { return history_.size(); }
  size_t address_spaces() const;

 private:
  // The address space of pid live at time; when none is, a new empty one
  // starting then (a record older than anything known, e.g. the /proc scan).
  AddressSpace& LiveOrCreate(uint32_t pid, uint64_t time);
  AddressSpace& Insert(uint32_t pid, uint64_t time, std::string comm);

  std::unordered_map<uint32_t, std::vector<AddressSpace>> history_;  // by start_time
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_PROCESS_TRACKER_H
