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
// map once the process is gone. A process that maps a jitdump (jitdump.h)
// has it read with its perf map, the same way.
//
// Opening a process's root and reading its map may block (a map on a hung
// mount, a 64 MB file): with lookups set they run there, and Reading(pid)
// says that an answer is on its way, so the caller can hold the samples
// that missed until it comes (SetOnRead); without, they run at once.
#ifndef LCPI_LIBPROFILE_ATTRIBUTE_JIT_MAPS_H
#define LCPI_LIBPROFILE_ATTRIBUTE_JIT_MAPS_H

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "libprofile/attribute/image_table.h"
#include "libprofile/attribute/jitdump.h"
#include "libprofile/attribute/perf_map.h"
#include "libprofile/attribute/process_tracker.h"
#include "libprofile/base/lookup_worker.h"
#include "libprofile/base/unique_fd.h"

namespace lcpi {

struct JitStats {
  uint64_t processes = 0;    // processes watched since start
  uint64_t refused = 0;      // not watched: kMaxLiveProcesses reached
  uint64_t reads = 0;        // map files read
  uint64_t missing = 0;      // no map file (a process that is no JIT, or writes none)
  uint64_t errors = 0;       // map files refused or unreadable (logged)
  uint64_t bad_lines = 0;    // lines skipped
  uint64_t truncated = 0;    // reads stopped at a size or line limit
  uint64_t symbols = 0;      // distinct names taken
  uint64_t dump_reads = 0;   // jitdump files read (bad records count as bad_lines)
  uint64_t reused = 0;       // watched pids found reused (their exit record lost): retired
  uint64_t over_budget = 0;  // names not kept: the name budget (or the process's share) was spent
  uint64_t name_bytes = 0;   // what the names kept now take, counted as NameCost
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
  // The bytes all processes' JIT names may take together (NameCost each),
  // whatever the per-process limits (a million names of 4 KiB each, over
  // 4,096 processes): 256 MiB. Each process may take an equal share of it,
  // the budget over the processes watched now, so one user's runtimes
  // cannot spend what another's need; a name beyond is not kept and counted
  // (stats().over_budget): its samples stay on the process's unknown image.
  static constexpr uint64_t kNameBudget = 256ull << 20;
  // What a kept name costs: its bytes and those of the structures that
  // index it (the symbol, its set and map nodes).
  static uint64_t NameCost(const PerfMapSymbol& s) { return s.name.size() + 160; }
  // What a jitdump's code index kept for its moves costs (a map node
  // pointing at a name kept, not a copy of it): counted as names are.
  static constexpr uint64_t kIndexCost = 64;

  // proc: the /proc to read (a directory laid out like it, for tests).
  explicit JitMaps(ImageTable& images, std::string proc = "/proc", PerfMapLimits limits = {},
                   uint64_t name_budget = kNameBudget);
  ~JitMaps();
  JitMaps(const JitMaps&) = delete;
  JitMaps& operator=(const JitMaps&) = delete;

  // Blocking work runs on `lookups` (null: at once, on the caller's thread).
  void SetLookups(LookupWorker* lookups) { lookups_ = lookups; }
  // Called when a read that Resolve asked for has ended, read or not: the
  // samples of pid that waited for it can be resolved again.
  void SetOnRead(std::function<void(uint32_t pid)> on_read) { on_read_ = std::move(on_read); }

  // pid mapped anonymous executable memory: hold its root, so that its map
  // can still be read at its exit. A pid already watched whose start time
  // (/proc/PID/stat) differs is another process: its exit record was lost,
  // and the old one is retired (stats().reused). Each read checks the same.
  void Watch(uint32_t pid);
  // pid mapped its jitdump (`path` as it sees it; jitdump.h): read it too,
  // with the perf map, from now on.
  void SetJitdump(uint32_t pid, const std::string& path);

  // The JIT image and offset of a pc of pid in anonymous memory, or nullopt
  // when no map names it (yet: see Reading). On a miss the map is read
  // again (rate-limited by `now`, the perf-clock time of the sample's
  // buffer). comm names the image the first time.
  std::optional<JitLocation> Resolve(uint32_t pid, const std::string& comm, uint64_t pc,
                                     uint64_t now);
  // A read of pid's map (or the opening of its root, to read it) is under
  // way: a pc Resolve missed may be named once it ends (SetOnRead).
  bool Reading(uint32_t pid) const;

  // pid exited at `time`: its map is read a last time and its root released.
  void OnExit(uint32_t pid, uint64_t time);

  // The names covering `offsets` of a JIT image that are not in the store
  // yet: only code that has samples is stored (a Node process's map lists
  // thousands of functions, most never sampled). MarkStored(image, names)
  // once a merge has committed, with exactly the names Unstored gave for
  // it: a read in between may have put other code at the same offsets,
  // which is not stored yet. The names live until Reap forgets their process.
  std::vector<const PerfMapSymbol*> Unstored(int32_t image,
                                             const std::vector<uint64_t>& offsets) const;
  void MarkStored(int32_t image, const std::vector<const PerfMapSymbol*>& names);

  // Forgets processes that exited before `time`: call once the counts
  // resolved before then have committed.
  void Reap(uint64_t time);

  const JitStats& stats() const { return stats_; }
  size_t watched() const { return open_roots_; }

 private:
  // What one read of a process's JIT names found: its perf map, and its
  // jitdump if it has one (from `cursor` on; the new cursor comes back).
  struct NamesRead {
    Expected<PerfMapParse> map = Error(Errc::kNotFound, "");
    std::optional<Expected<JitdumpParse>> dump;
    JitdumpCursor cursor;
    bool reused = false;  // the pid is another process's now: nothing was read
  };
  // What opening a process yields: its user, root and identity.
  struct ProcessRoot {
    uint32_t uid = 0;
    UniqueFd root;
    std::string start_ticks;
  };
  // A process whose root is being opened.
  struct Opening {
    bool then_read = false;  // Resolve asked: read the map once open
    uint64_t asked_at = 0;   // perf clock of that request
    bool exited = false;     // its exit record came meanwhile
    uint64_t exit_time = 0;
  };
  struct Process {
    uint32_t pid = 0;
    uint32_t uid = 0;
    int root_fd = -1;  // /proc/PID/root, while it lives
    std::string identity;
    std::string start_ticks;  // /proc/PID/stat's: another value, another process
    // When Watch last compared it (at most once a second: a process that
    // maps executable pages at 150,000 addresses must not cost the loop
    // 150,000 reads of /proc).
    std::chrono::steady_clock::time_point start_checked{};
    int32_t image = kNoImage;
    bool read = false;               // read at least once
    bool reading = false;            // a read is under way
    bool final_read_wanted = false;  // exited during a read: read once more after it
    bool warned = false;             // a read error was logged
    uint64_t last_read = 0;
    uint64_t last_resolved = 0;  // perf clock of the last sample named from it
    bool exited = false;
    uint64_t exit_time = 0;
    std::string dump_path;              // its jitdump, if it mapped one
    JitdumpCursor dump_cursor;          // where the last read of its jitdump stopped
    uint64_t name_bytes = 0;            // NameCost of its names kept, kIndexCost of its indexes
    std::deque<PerfMapSymbol> symbols;  // distinct, in the order read; never moved
    std::unordered_set<const PerfMapSymbol*> stored;    // names in the store
    std::map<uint64_t, const PerfMapSymbol*> by_start;  // the newest at each start
    // Each name once: what a later read finds again is the name kept.
    std::map<std::tuple<uint64_t, uint64_t, std::string_view>, const PerfMapSymbol*> seen;
    // Its jitdump's code indexes, for moves: the name each names, kept
    // (a move of code whose name or index was not kept is bad). At most
    // PerfMapLimits::max_lines, within its share of the budget.
    std::map<uint64_t, const PerfMapSymbol*> by_index;
  };

  static Expected<ProcessRoot> OpenRoot(const std::string& proc, uint32_t pid);
  // Opens pid's root (a lookup); FinishOpen takes the result.
  void StartOpen(uint32_t pid, bool then_read, uint64_t now);
  void FinishOpen(uint32_t pid, Expected<ProcessRoot> root);
  // Reads p's map (a lookup); `last`: at its exit, through the root it held,
  // which the read takes and closes. FinishRead takes the result.
  void StartRead(Process& p, bool last);
  void FinishRead(Process& p, Expected<NamesRead> read);
  // Counts a read's result (its error, bad lines, truncation): whether it
  // has names to take.
  bool Count(Process& p, const Expected<PerfMapParse>& parsed, const char* what);
  // Counts a read's result and keeps its new names; a jitdump's, with the
  // code index of each (for moves), and names its moves from those kept.
  void Take(Process& p, Expected<PerfMapParse> parsed, const char* what);
  void TakeDump(Process& p, Expected<JitdumpParse> parsed);
  // What one process may take of the budget: an equal share.
  uint64_t Share() const;
  // Whether `cost` more bytes fit p's share and the budget; counted if so.
  bool Spend(Process& p, uint64_t cost, uint64_t share);
  // Keeps s unless seen (then the name kept before) or past a limit (then
  // null, and *full once p may take no more names).
  const PerfMapSymbol* Keep(Process& p, PerfMapSymbol s, uint64_t share, bool* full);
  static const PerfMapSymbol* Find(const Process& p, uint64_t pc);
  void Close(Process& p);
  void Exited(Process& p, uint64_t time);
  // p's pid belongs to another process now (its exit record was lost):
  // it is forgotten as if it had exited after its last sample, without a
  // last read (the map under its pid is the new process's).
  void Retire(Process& p);

  ImageTable& images_;
  std::string proc_;
  PerfMapLimits limits_;
  uint64_t name_budget_;
  std::string boot_id_;
  LookupWorker* lookups_ = nullptr;
  std::function<void(uint32_t)> on_read_;
  std::list<Process> processes_;
  std::unordered_map<uint32_t, Process*> by_pid_;  // the newest process of each pid
  std::unordered_map<uint32_t, Opening> opening_;
  std::unordered_map<uint32_t, std::string> dumps_;  // jitdumps of pids not open yet
  std::map<int32_t, Process*> by_image_;
  std::unordered_map<uint32_t, uint64_t> failed_;  // pid -> when opening it last failed
  size_t open_roots_ = 0;
  JitStats stats_;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_JIT_MAPS_H
