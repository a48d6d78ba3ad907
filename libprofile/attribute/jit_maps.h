// jit_maps.h - JIT code named by perf map files. A process that maps
// anonymous (or memfd) executable memory may be a JIT runtime that lists
// its code in /tmp/perf-PID.map (perf_map.h). Samples in a range the map
// names are filed on the JIT image of that process (ImageKind::kJit), at
// the process's own address as offset; samples no map names stay on the
// process's unknown image.
//
// One JIT image per process, identified by the boot, the pid and the
// process's start time ("jit:<boot-id>:<pid>:<start-ticks>"), not one per
// command name: two processes of one program put different code at the
// same address, so their offsets cannot share one image's names.
//
// The map is read through the process's own view of the file system
// (/proc/PID/root, so a container's /tmp), while the process lives: when
// a pc in anonymous memory has no name yet (at most once per second per
// process) and once more at its exit record, through a descriptor of its
// root taken while it lived (after exit, /proc/PID/root cannot be opened).
// The names are kept until the store has them: the tools cannot read the
// map once the process is gone.
#ifndef LCPI_LIBPROFILE_ATTRIBUTE_JIT_MAPS_H
#define LCPI_LIBPROFILE_ATTRIBUTE_JIT_MAPS_H

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "libprofile/attribute/image_table.h"
#include "libprofile/attribute/perf_map.h"
#include "libprofile/attribute/process_tracker.h"

namespace lcpi {

struct JitStats {
  uint64_t processes = 0;  // processes watched since start
  uint64_t refused = 0;    // not watched: kMaxLiveProcesses reached
  uint64_t reads = 0;      // map files read
  uint64_t missing = 0;    // no map file (a process that is no JIT, or writes none)
  uint64_t errors = 0;     // map files refused or unreadable (logged)
  uint64_t bad_lines = 0;  // lines skipped
  uint64_t truncated = 0;  // reads stopped at a size or line limit
  uint64_t symbols = 0;    // distinct names taken
};

struct JitLocation {
  int32_t image = kNoImage;
  uint64_t offset = 0;
};

class JitMaps {
 public:
  // At most this many processes watched at once (a root descriptor each).
  static constexpr size_t kMaxLiveProcesses = 4096;
  // A process's map is read again on a miss at most this often (perf clock).
  static constexpr uint64_t kRereadNs = 1000000000ull;

  // proc: the /proc to read (a directory laid out like it, for tests).
  explicit JitMaps(ImageTable& images, std::string proc = "/proc", PerfMapLimits limits = {});
  ~JitMaps();
  JitMaps(const JitMaps&) = delete;
  JitMaps& operator=(const JitMaps&) = delete;

  // pid mapped anonymous executable memory: hold its root, so that its map
  // can still be read at its exit.
  void Watch(uint32_t pid);

  // The JIT image and offset of a pc of pid in anonymous memory, or nullopt
  // when no map names it. On a miss the map is read again (rate-limited by
  // `now`, the perf-clock time of the sample's buffer). comm names the
  // image the first time.
  std::optional<JitLocation> Resolve(uint32_t pid, const std::string& comm, uint64_t pc,
                                     uint64_t now);

  // pid exited at `time`: its map is read a last time and its root released.
  void OnExit(uint32_t pid, uint64_t time);

  // The names covering `offsets` of a JIT image that are not in the store
  // yet: only code that has samples is stored (a Node process's map lists
  // thousands of functions, most never sampled). MarkStored(image, offsets)
  // once a merge has committed, with the same offsets and nothing read in
  // between (the daemon merges on the thread that reads).
  std::vector<const PerfMapSymbol*> Unstored(int32_t image,
                                             const std::vector<uint64_t>& offsets) const;
  void MarkStored(int32_t image, const std::vector<uint64_t>& offsets);

  // Forgets processes that exited before `time`: call once the counts
  // resolved before then have committed.
  void Reap(uint64_t time);

  const JitStats& stats() const { return stats_; }
  size_t watched() const { return open_roots_; }

 private:
  struct Process {
    uint32_t pid = 0;
    uint32_t uid = 0;
    int root_fd = -1;  // /proc/PID/root, while it lives
    std::string identity;
    int32_t image = kNoImage;
    bool read = false;    // read at least once
    bool warned = false;  // a read error was logged
    uint64_t last_read = 0;
    bool exited = false;
    uint64_t exit_time = 0;
    std::deque<PerfMapSymbol> symbols;                  // distinct, in the order read; never moved
    std::unordered_set<const PerfMapSymbol*> stored;    // names in the store
    std::map<uint64_t, const PerfMapSymbol*> by_start;  // the newest at each start
    std::set<std::tuple<uint64_t, uint64_t, std::string_view>> seen;
  };

  Process* Open(uint32_t pid);
  void Read(Process& p);
  static const PerfMapSymbol* Find(const Process& p, uint64_t pc);
  void Close(Process& p);

  ImageTable& images_;
  std::string proc_;
  PerfMapLimits limits_;
  std::string boot_id_;
  std::list<Process> processes_;
  std::unordered_map<uint32_t, Process*> by_pid_;  // the newest process of each pid
  std::map<int32_t, Process*> by_image_;
  std::unordered_map<uint32_t, uint64_t> failed_;  // pid -> when Open last failed
  size_t open_roots_ = 0;
  JitStats stats_;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_JIT_MAPS_H
