// aggregator.h - resolves each overflow record to (image, offset) and adds it
// to the in-memory counts of the current epoch: per image, per event, per
// offset, plus per-process totals. Kernel addresses go to the kernel or a
// module image; user pcs in anonymous memory that a JIT map names go to the
// process's JIT image (jit_maps.h); anything unresolvable goes to the
// unknown image of its process name: counted, never dropped. TakeBatch hands
// the pending counts over by move and starts empty maps at once (double
// buffering: the daemon writes one batch while the next fills). The batch
// owns its counts until it is in the database: a failed write is retried
// with the same batch, so nothing is lost and nothing counted twice. Only
// what the aggregator remembers about the store (symbols stored, JIT names
// stored) waits for Committed().
//
// With lookups (lookup_worker.h), nothing here waits on a file: a record
// that needs a lookup still under way (a JIT map being read, kallsyms being
// read again after a pc outside every module) waits in a bounded list and
// is resolved when the lookup ends; an image still being identified
// (ImageTable::pending) collects counts as any other, and TakeBatch holds
// them back until it has its identity.
#ifndef LCPI_LIBPROFILE_AGGREGATE_AGGREGATOR_H
#define LCPI_LIBPROFILE_AGGREGATE_AGGREGATOR_H

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "libprofile/aggregate/stack_table.h"
#include "libprofile/attribute/image_table.h"
#include "libprofile/attribute/jit_maps.h"
#include "libprofile/attribute/process_tracker.h"
#include "libprofile/collect/event_spec.h"
#include "libprofile/collect/source.h"
#include "libprofile/image/kernel_reload.h"
#include "libprofile/image/kernel_symbols.h"
#include "libprofile/image/vdso_symbols.h"
#include "libprofile/store/profile_db.h"
#include "libprofile/unwind/dwarf_unwinder.h"
#include "libprofile/unwind/unwind_allowance.h"

namespace lcpi {

// Running totals since the daemon started (never reset by a merge).
struct AggregateTotals {
  uint64_t buffers = 0;
  uint64_t records = 0;
  uint64_t samples = 0;     // sum of record counts
  uint64_t attributed = 0;  // samples that landed on a real image
  uint64_t unknown = 0;     // samples on an unknown image
  uint64_t kernel = 0;      // samples on the kernel or a module
  uint64_t dropped = 0;     // drops reported in buffer headers
};

class Aggregator {
 public:
  // kernel may be null (kallsyms unreadable): kernel samples then go to
  // one "[kernel]" image with raw addresses as offsets. reload may be null:
  // kernel pcs outside what `kernel` held at start then stay unresolved;
  // else they make it re-read kallsyms (rate-limited) and replace *kernel.
  // jit may be null: pcs in anonymous memory then all go to the process's
  // unknown image.
  Aggregator(ImageTable& images, const ProcessTracker& tracker, KernelSymbols* kernel,
             JitMaps* jit = nullptr, KernelSymbolsReloader* reload = nullptr);

  // Re-reads of kallsyms run on `lookups` (null, the default: at once), and
  // records wait for them and for JIT map reads; sets jit's SetOnRead.
  void SetLookups(LookupWorker* lookups);
  // Records waiting for a lookup: at most kMaxWaiting; one more is resolved
  // at once with what is known (counted in waits_overflowed).
  static constexpr size_t kMaxWaiting = 65536;
  size_t waiting_records() const { return waiting_records_; }
  uint64_t waiting_samples() const { return waiting_samples_; }
  uint64_t waits_overflowed() const { return waits_overflowed_; }

  void Add(const RecordBuffer& buffer);
  // Adds to a statistic stored with the next merge.
  void AddStat(const std::string& name, int64_t delta) { stats_[name] += delta; }

  // What a taken batch stores besides counts, marked as stored once it is
  // in the database (Committed). Opaque to the caller.
  struct StoredMarks {
    std::vector<int32_t> symbol_images;  // kernel, module and vDSO images
    // The JIT names the batch carries, exactly (a read may put other code
    // at their offsets before the commit); they live until Reap.
    std::map<int32_t, std::vector<const PerfMapSymbol*>> jit_symbols;
    uint64_t symbols_generation = 0;  // module symbols read again since: do not mark those
  };
  struct TakenBatch {
    MergeBatch batch;
    StoredMarks marks;
    // Samples taken before this batch that it does not count (counts of
    // images being identified, records waiting for a lookup), less those it
    // counts that an earlier batch did not: the batch's statistics count its
    // own samples only ("attributed" is corrected here; the caller corrects
    // the samples it says were taken by this).
    int64_t held_samples_change = 0;
  };
  // Everything pending, as one batch for ProfileDb::Merge filed in `epoch`;
  // the pending maps start empty, but for the counts of images still being
  // identified, which stay for a later batch (held_entries). Names
  // (symbols) a batch taken earlier stores are repeated until that one is
  // Committed (the store keeps one).
  TakenBatch TakeBatch(int64_t epoch, const std::vector<RealEvent>& events);
  // Entries the last TakeBatch held back (their image is being identified).
  size_t held_entries() const { return held_entries_; }
  // A batch TakeBatch made is in the database: its symbols and JIT names
  // need not be stored again.
  void Committed(const StoredMarks& marks);

  // At most `n` pids of a window keep process rows of their own (0: no
  // cap); the samples of later pids go to one row per command, image and
  // event with pid kRolledUpPid, so a host that forks thousands of
  // processes a minute stores (and keeps in memory) a bounded number.
  void set_max_processes(size_t n) { max_processes_ = n; }
  // At most n distinct call stacks a window (StackTable).
  void set_max_stacks(size_t n) { stacks_.set_max(n); }
  // Stacks that came with a copy of their user stack are unwound through
  // `tables` (UnwindUserStack) on `worker`'s threads, under the uid of
  // their process, at most kMaxUnwinding at once and a user's share of
  // them, then counted; beyond that, or without them, their
  // frame-pointer chain is counted as it came ("not unwound in time").
  // Both must outlive the aggregator's use of them; the worker's
  // completions run on this thread.
  void SetUnwinder(UnwindTables* tables, LookupWorker* worker) {
    unwind_tables_ = tables;
    unwind_worker_ = worker;
  }
  static constexpr size_t kMaxUnwinding = 1024;  // each ~8 KiB of stack, its mappings
  // Each user's share (the uid of the sampled process): stacks in flight,
  // and their bytes (stack copy, frames, and the whole snapshot of its
  // mappings, counted for each stack: an upper bound). Beyond either, the
  // stack is kept as frame pointers gave it, counted in over_share.
  static constexpr size_t kMaxUnwindingPerUser = kMaxUnwinding / 4;
  static constexpr size_t kMaxUnwindBytesPerUser = size_t{16} << 20;
  // The walks' CPU, per second: all users' at most ns_per_s, one user's at
  // most half of it (UnwindAllowance; 0, the default: no bound). Beyond,
  // the stack is kept as frame pointers gave it, counted in over_cpu.
  void set_unwind_cpu_allowance(uint64_t ns_per_s) { unwind_allowance_.Set(ns_per_s); }
  uint64_t unwind_cpu_allowance() const { return unwind_allowance_.total_ns_per_s(); }
  // A walk's time on the unwinder's thread (UnwindRequest::deadline):
  // one takes tens of microseconds; past this it ends "unwind budget".
  static constexpr std::chrono::milliseconds kUnwindBudget{20};
  // The snapshots of address spaces kept for later stacks, in bytes in
  // all: beyond, all are let go (those in flight live on with their stacks).
  static constexpr size_t kMaxSnapshotBytes = size_t{16} << 20;
  // The limits of the worker lcpid unwinds stacks on (SetUnwinder's).
  static LookupWorker::Limits UnwindWorkerLimits();
  // Tests only: runs on the unwinder's thread before each walk, with the
  // stack's pid and request (a walk made slow, or stuck, on purpose; the
  // snapshot it shares). Set it before the first stack.
  using UnwindHook = std::function<void(uint32_t pid, const UnwindRequest& request)>;
  void SetUnwindHookForTest(UnwindHook hook) { unwind_hook_ = std::move(hook); }
  // Mappings copied for one stack at most (a larger space is not unwound).
  static constexpr size_t kMaxUnwindMappings = 8192;
  struct UnwindCounts {
    uint64_t unwound = 0;                      // stacks through the DWARF unwinder
    uint64_t not_unwound = 0;                  // with a copy, kept as frame pointers gave them
    uint64_t dwarf_frames = 0, fp_frames = 0;  // its steps, by table or frame pointer
    uint64_t ns = 0;                           // its walks' time on the lookups' threads
    uint64_t cpu_ns = 0;                       // its walks' CPU time on those threads
    uint64_t no_table = 0, copy_short = 0, jit = 0, failed = 0;  // its walks' ends
    uint64_t budget = 0;      // walks that ended past kUnwindBudget
    uint64_t over_share = 0;  // not unwound: over their user's share (stacks or bytes)
    uint64_t over_cpu = 0;    // not unwound: over the walks' CPU allowance (theirs or all's)
    uint64_t snapshots = 0;   // address-space snapshots built (one per change of a space)
    size_t in_flight = 0;
    size_t in_flight_bytes = 0;
  };
  const UnwindCounts& unwind_counts() const { return unwind_; }
  // A new window (epoch) starts: its first pids are admitted again, the
  // pids of the process rows held back by the last TakeBatch first.
  void NewWindow();
  // Pids rolled up since start (each counted once per window).
  uint64_t processes_rolled_up() const { return processes_rolled_up_; }

  bool empty() const {
    return counts_.empty() && processes_.empty() && rolled_up_.empty() && stats_.empty() &&
           stacks_.pending().empty();
  }
  size_t entries() const;  // distinct (image, event, offset) pending
  // Sets in_use[image] for every image a pending count or process row names;
  // in_use must cover every index of the image table.
  void MarkImages(std::vector<bool>& in_use) const;
  const AggregateTotals& totals() const { return totals_; }

 private:
  // How a record ended: counted on an image, counted as unknown, or waiting.
  enum class Added { kAttributed, kUnknown, kWaiting };
  // A record that waits for a lookup, with what resolving it needs later.
  struct Waiting {
    lcpi_record rec;
    uint64_t t_first = 0, t_last = 0;
    std::string comm;  // its process's name when it came: the pid may be reaped since
    CgroupRef cgroup;  // and its cgroup (shared: 65,536 waiting hold no copies)
  };
  // Resolves and counts one record; `waited` when it comes back from a
  // wait (it then resolves with what is known, and waits no more).
  Added AddRecord(const lcpi_record& rec, uint64_t t_first, uint64_t t_last, const Waiting* waited);
  // Puts a record on a waiting list; false when the lists are full.
  bool Wait(std::vector<Waiting>& list, const lcpi_record& rec, uint64_t t_first, uint64_t t_last,
            std::string_view comm, const CgroupRef* cgroup);
  // Resolves and counts the records of a list that waited.
  void Resume(std::vector<Waiting> list);
  // A kernel pc outside everything known, a re-read due: reads kallsyms on
  // the lookups' thread; the kernel records wait for it.
  void StartKernelReload();
  int32_t KernelImage(const KernelLocation& r);
  // images_.Unknown(comm), remembered for the batch: interning builds and
  // hashes the identity string, per record of every process lcpid cannot
  // resolve (a JIT without a map, a pid it never saw).
  int32_t UnknownImage(std::string_view comm);
  // Adds a sample count to the process rows: pid's own, or its command's
  // (and cgroup's) rolled-up row once the window has max_processes_ other pids.
  void AddProcess(uint32_t pid, std::string_view comm, const CgroupRef* cgroup, uint32_t image,
                  uint32_t event, uint64_t count);
  // Resolves each frame of a call stack as a record's pc is (without
  // waiting for a lookup: what is not known yet goes to the unknown image)
  // and counts it in stacks_.
  void AddStack(const StackSample& stack);
  // A stack as it comes: unwound first when it has a user stack copy.
  void TakeStack(const StackSample& stack);
  // A process's mappings as the unwinder sees them, built once per change
  // of its address space (ProcessTracker's generation) and shared by its
  // stacks in flight; with the uid its walks are queued under.
  struct SpaceSnapshot {
    uint64_t generation = 0;
    uint32_t uid = LookupWorker::kNoUser;
    std::shared_ptr<const UnwindSpace> space;
    size_t bytes = 0;  // what it holds, roughly
    // The images it names by their mapping (still being identified): it
    // is built again once one of them has its identity.
    std::vector<int32_t> pending;
  };
  // pid's snapshot at `time`, built again if stale; null when its space
  // has more than kMaxUnwindMappings.
  const SpaceSnapshot* SnapshotOf(uint32_t pid, uint64_t time);
  // A stack kept as frame pointers gave it ("not unwound in time").
  void NotUnwound(const StackSample& stack);
  // An unwind of `user`'s, of `bytes`, is no longer in flight.
  void UnwindEnded(uint32_t user, size_t bytes);
  // An unwind's result back on this thread: stack with its user frames
  // replaced by the unwound ones, counted.
  void FinishUnwind(StackSample stack, const UnwindResult& r);
  // (image, offset) of one frame of pid's stack.
  std::pair<int32_t, uint64_t> ResolveFrame(uint32_t pid, uint64_t pc, bool kernel, uint64_t time);
  // Adds the counts AddRecord gathered in adds_ to counts_, and empties it.
  void AddCounts();
  // The sampled offsets of each JIT image pending.
  std::map<int32_t, std::vector<uint64_t>> JitOffsets() const;

  ImageTable& images_;
  const ProcessTracker& tracker_;
  KernelSymbols* kernel_;
  JitMaps* jit_;
  KernelSymbolsReloader* reload_;
  LookupWorker* lookups_ = nullptr;
  UnwindTables* unwind_tables_ = nullptr;
  LookupWorker* unwind_worker_ = nullptr;
  UnwindHook unwind_hook_;
  absl::flat_hash_map<uint32_t, SpaceSnapshot> snapshots_;  // by pid
  size_t snapshot_bytes_ = 0;
  struct UserUnwinds {
    size_t stacks = 0, bytes = 0;
  };
  absl::flat_hash_map<uint32_t, UserUnwinds> unwinding_by_user_;
  UnwindAllowance unwind_allowance_;
  UnwindCounts unwind_;
  bool kernel_reloading_ = false;
  std::vector<Waiting> kernel_waiting_;                             // for the re-read
  std::unordered_map<uint32_t, std::vector<Waiting>> jit_waiting_;  // by pid, for a map read
  size_t waiting_records_ = 0;
  uint64_t waiting_samples_ = 0;
  uint64_t waits_overflowed_ = 0;
  size_t held_entries_ = 0;
  uint64_t held_samples_ = 0;  // in the counts the last TakeBatch held back
  uint64_t carried_ = 0;       // those and the waiting ones, then
  std::optional<int32_t> kernel_image_;
  std::map<std::string, int32_t, std::less<>> module_images_;
  std::set<int32_t> symbols_stored_;  // kernel and vDSO images whose symbols are in the database
  uint64_t symbols_generation_ = 0;   // bumped when kallsyms is read again
  std::vector<VdsoSymbol> vdso_symbols_;  // lcpid's own vDSO: every 64-bit process maps it

  // A pair of 32-bit keys as one hashable key.
  static uint64_t Key(uint32_t high, uint32_t low) { return (uint64_t{high} << 32) | low; }

  // (Key(image, event), offset) -> count: one flat open-addressing table,
  // so a record costs one probe in one array, not two node lookups.
  struct CountKey {
    uint64_t image_event;
    uint64_t offset;
    bool operator==(const CountKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const CountKey& k) {
      return H::combine(std::move(h), k.image_event, k.offset);
    }
  };
  absl::flat_hash_map<CountKey, uint64_t> counts_;
  // One buffer's (or waiting list's) (key, count) pairs, added to counts_
  // after its records are resolved: a table of a million entries misses the
  // cache on nearly every probe, so each probe's memory is fetched a few
  // records ahead (without: 80 ns a record in bench/daemon's resolve part,
  // with: 64).
  std::vector<std::pair<CountKey, uint64_t>> adds_;
  // (pid, image, event, cgroup) -> count and the newest name: a record
  // costs one probe; a name is copied only when a row starts or its process
  // renames. The cgroup is in the key (shared, interned: hashed by pointer),
  // so the samples a pid had in one cgroup stay there when a read comes
  // back, it re-execs elsewhere or the pid is reused within a flush.
  struct ProcessCount {
    std::string comm;
    uint64_t count = 0;
  };
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t, CgroupRef>, ProcessCount> processes_;
  // (comm, cgroup, image, event) -> count of the pids beyond the cap; the
  // cgroup by its shared path (no copy per record: one path let go and read
  // again is two keys, whose rows the store adds up)
  absl::flat_hash_map<std::tuple<std::string, CgroupRef, uint32_t, uint32_t>, uint64_t> rolled_up_;
  // comm -> its unknown image, until the next TakeBatch; MarkImages marks
  // them, so the table does not forget one and give its index away.
  absl::flat_hash_map<std::string, int32_t> unknown_images_;
  std::map<std::string, int64_t> stats_;
  StackTable stacks_;
  AggregateTotals totals_;
  // The window's pids with rows of their own (at most max_processes_), and
  // those rolled up, to count each once: a bit per pid, since a host that
  // forks all day can run every pid of its pid space (Linux: below 2^22)
  // within one window, at most 512 KiB.
  size_t max_processes_ = 0;
  absl::flat_hash_set<uint32_t> admitted_;
  std::vector<bool> rolled_pids_;
  bool FirstRolledUp(uint32_t pid);
  uint64_t processes_rolled_up_ = 0;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_AGGREGATE_AGGREGATOR_H
