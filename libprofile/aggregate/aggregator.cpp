// aggregator.cpp - record resolution and the pending batch.
#include "libprofile/aggregate/aggregator.h"

#include <sys/utsname.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>

#include <string_view>
#include <unordered_map>

#include "libprofile/base/clock_ns.h"
#include "libprofile/image/image_id.h"
#include "libprofile/image/symbol_end.h"

namespace lcpi {
namespace {

// A pc as the offset of an image that has no base (unknown, unresolved
// kernel): the raw address without bit 63, since the database keeps signed
// 64-bit offsets (a kernel address kept whole would make every merge fail).
// Enough to tell code regions apart.
uint64_t RawPcOffset(uint64_t pc) { return pc & ~(1ull << 63); }

bool IsVdso(const ImageEntry& e) { return e.identity.rfind("vdso:", 0) == 0; }

}  // namespace

Aggregator::Aggregator(ImageTable& images, const ProcessTracker& tracker, KernelSymbols* kernel,
                       JitMaps* jit, KernelSymbolsReloader* reload)
    : images_(images), tracker_(tracker), kernel_(kernel), jit_(jit), reload_(reload) {
  // The tools cannot read the vDSO (it has no file): its names are stored
  // like the kernel's. Without them its samples are still counted, as ranges.
  if (Expected<std::vector<VdsoSymbol>> vdso = ReadOwnVdsoSymbols())
    vdso_symbols_ = std::move(*vdso);
}

int32_t Aggregator::KernelImage(const KernelLocation& r) {
  if (r.kind == KernelImageKind::kKernel) {
    if (!kernel_image_) {
      Expected<ImageIdentity> id = IdentifyRunningKernel();
      std::string identity = id ? id->identity : "kernel:unknown";
      kernel_image_ = images_.Intern(identity, "[kernel.kallsyms]", ImageKind::kKernel);
    }
    return *kernel_image_;
  }
  auto it = module_images_.find(r.module);
  if (it != module_images_.end()) return it->second;
  std::string module(r.module);
  Expected<ImageIdentity> id = IdentifyKernelModule(module);
  std::string identity = id ? id->identity : "module:" + module;
  int32_t index = images_.Intern(identity, "[" + module + "]", ImageKind::kModule);
  module_images_.emplace(std::move(module), index);
  return index;
}

void Aggregator::SetLookups(LookupWorker* lookups) {
  lookups_ = lookups;
  if (!jit_) return;
  jit_->SetLookups(lookups);
  jit_->SetOnRead([this](uint32_t pid) {
    auto it = jit_waiting_.find(pid);
    if (it == jit_waiting_.end()) return;
    std::vector<Waiting> list = std::move(it->second);
    jit_waiting_.erase(it);
    Resume(std::move(list));
  });
}

std::pair<int32_t, uint64_t> Aggregator::ResolveFrame(uint32_t pid, uint64_t pc, bool kernel,
                                                      uint64_t time) {
  if (kernel) {
    if (std::optional<KernelLocation> r = kernel_ ? kernel_->Locate(pc) : std::nullopt)
      return {KernelImage(*r), r->offset};
    return {images_.Intern("kernel:unresolved", "[kernel]", ImageKind::kKernel), RawPcOffset(pc)};
  }
  Resolution r = tracker_.Resolve(pid, pc, time, time);
  if (r.mapped && r.image != kNoImage) return {r.image, r.offset};
  if (jit_)
    if (std::optional<JitLocation> j = jit_->Resolve(pid, std::string(r.comm), pc, time))
      return {j->image, j->offset};
  std::string_view comm = r.comm;
  if (pid == 0 && comm.empty()) comm = "swapper";
  return {UnknownImage(comm), RawPcOffset(pc)};
}

void Aggregator::AddStack(const StackSample& stack) {
  StackKey key;
  key.end = static_cast<uint8_t>(stack.end);
  key.frames.reserve(stack.pcs.size());
  for (size_t i = 0; i < stack.pcs.size(); i++) {
    // Every frame past the leaf is a return address: the call is the
    // instruction before it (the next procedure's, after a call that never
    // returns, would be named otherwise).
    uint64_t pc = i == 0 ? stack.pcs[i] : stack.pcs[i] - 1;
    key.frames.push_back(ResolveFrame(stack.pid, pc, i < stack.kernel_frames, stack.time));
  }
  stats_[kStackSamplesStat]++;
  if (stack.end == StackEnd::kDepthCap) stats_[kStacksTruncatedStat]++;
  if (!stacks_.Add(std::move(key), 1)) stats_[kStacksOverLimitStat]++;
}

LookupWorker::Limits Aggregator::UnwindWorkerLimits() {
  LookupWorker::Limits limits;
  // Two threads, a user's walks on one at most: a user whose walk is slow
  // or stuck (its image on a mount that stopped answering) holds up only
  // its own next walks; the users take turns on the other.
  limits.threads = 2;
  limits.max_running_per_user = 1;
  limits.max_queued = kMaxUnwinding;
  limits.max_queued_per_user = kMaxUnwindingPerUser;
  // A walk is over in kUnwindBudget: one on a thread idle this long waits
  // for a file system, and its thread is replaced.
  limits.stuck_after = std::chrono::milliseconds(2000);
  limits.max_run = std::chrono::milliseconds(5000);
  limits.nice = 0;
  return limits;
}

const Aggregator::SpaceSnapshot* Aggregator::SnapshotOf(uint32_t pid, uint64_t time) {
  uint64_t generation = 0;
  auto [first, last] = tracker_.MappingsAt(pid, time, &generation);
  const size_t n = static_cast<size_t>(last - first);
  if (n > kMaxUnwindMappings) return nullptr;
  auto it = snapshots_.find(pid);
  if (it != snapshots_.end()) {
    const SpaceSnapshot& old = it->second;
    const bool identified = std::any_of(old.pending.begin(), old.pending.end(),
                                        [&](int32_t image) { return !images_.at(image).pending; });
    if (old.generation == generation && !identified) return &old;
    snapshot_bytes_ -= old.bytes;
    snapshots_.erase(it);
  }
  SpaceSnapshot snap;
  snap.generation = generation;
  snap.uid = ProcessUid(pid);
  auto space = std::make_shared<UnwindSpace>();
  // Each image once, whether identified or not: a pending image by the
  // first mapping of it (any of them is the same file).
  std::unordered_map<int32_t, int32_t> index;  // image table -> space->images
  space->maps.reserve(n);
  size_t strings = 0;
  for (const Mapping* m = first; m != last; ++m) {
    UnwindMapping& u = space->maps.emplace_back();
    u.start = m->start;
    u.end = m->end;
    u.pgoff = m->pgoff;
    if (m->image == kNoImage) continue;
    auto [at, added] = index.emplace(m->image, static_cast<int32_t>(space->images.size()));
    u.image = at->second;
    if (!added) continue;
    const ImageEntry& e = images_.at(m->image);
    UnwindImage& image = space->images.emplace_back();
    if (e.kind != ImageKind::kUser) continue;  // no file: no table
    if (e.pending) {
      // Its identity is still being looked up (a process just started):
      // the very file it maps, through the process, while it lives.
      char name[96];
      std::snprintf(name, sizeof(name), "/proc/%u/map_files/%lx-%lx", pid,
                    static_cast<unsigned long>(m->start), static_cast<unsigned long>(m->end));
      image = {std::string(kMappedIdentity) + name, name};
      snap.pending.push_back(m->image);
    } else {
      image = {e.identity, e.path};
    }
    strings += image.identity.size() + image.path.size();
  }
  snap.bytes = sizeof(UnwindSpace) + space->maps.size() * sizeof(UnwindMapping) +
               space->images.size() * sizeof(UnwindImage) + strings;
  snap.space = std::move(space);
  if (snapshot_bytes_ + snap.bytes > kMaxSnapshotBytes) {
    snapshots_.clear();
    snapshot_bytes_ = 0;
  }
  snapshot_bytes_ += snap.bytes;
  unwind_.snapshots++;
  return &(snapshots_[pid] = std::move(snap));
}

void Aggregator::NotUnwound(const StackSample& stack) {
  unwind_.not_unwound++;
  StackSample kept = stack;
  kept.end = StackEnd::kNotUnwound;
  AddStack(kept);
}

void Aggregator::UnwindEnded(uint32_t user, size_t bytes) {
  unwind_.in_flight--;
  unwind_.in_flight_bytes -= bytes;
  auto it = unwinding_by_user_.find(user);
  if (it == unwinding_by_user_.end()) return;
  it->second.stacks--;
  it->second.bytes -= bytes;
  if (it->second.stacks == 0) unwinding_by_user_.erase(it);
}

void Aggregator::TakeStack(const StackSample& stack) {
  if (stack.user_stack.empty() || !stack.user_regs.Has(kDwarfPc)) return AddStack(stack);
  const SpaceSnapshot* snap = nullptr;
  if (unwind_tables_ && unwind_worker_ && unwind_.in_flight < kMaxUnwinding)
    snap = SnapshotOf(stack.pid, stack.time);
  if (!snap) return NotUnwound(stack);
  // Its user's share: the stacks and bytes it has in flight.
  const uint32_t user = snap->uid;
  const size_t bytes = stack.user_stack.size() + stack.pcs.size() * sizeof(uint64_t) + snap->bytes;
  if (!unwind_allowance_.Allows(user, MonotonicNs())) {
    unwind_.over_cpu++;
    return NotUnwound(stack);
  }
  UserUnwinds& share = unwinding_by_user_[user];
  if (share.stacks >= kMaxUnwindingPerUser || share.bytes + bytes > kMaxUnwindBytesPerUser) {
    if (share.stacks == 0) unwinding_by_user_.erase(user);
    unwind_.over_share++;
    return NotUnwound(stack);
  }
  share.stacks++;
  share.bytes += bytes;
  unwind_.in_flight++;
  unwind_.in_flight_bytes += bytes;
  auto request = std::make_shared<UnwindRequest>();
  request->regs = stack.user_regs;
  request->stack = stack.user_stack;
  request->space = snap->space;  // shared, not copied
  request->max_frames = kMaxStackDepth - std::min(stack.kernel_frames, kMaxStackDepth - 1);
  // What the completion keeps: the stack without its copy.
  StackSample base = stack;
  base.user_stack.clear();
  base.user_stack.shrink_to_fit();
  UnwindTables* tables = unwind_tables_;
  // When the walk started on its thread (0: not yet): a walk the worker
  // abandons is charged its time there, an upper bound on its CPU.
  auto started = std::make_shared<std::atomic<int64_t>>(0);
  // The work touches only its request, the tables and `started`; its
  // result comes back to this thread.
  unwind_worker_->Submit(
      [request, tables, base, self = this, hook = unwind_hook_, user, bytes,
       started]() -> std::function<void()> {
        started->store(MonotonicNs());
        const uint64_t cpu0 = ThreadCpuNs();  // a test's hook stands for part of the walk
        if (hook) hook(base.pid, *request);
        const auto t0 = std::chrono::steady_clock::now();
        request->deadline = t0 + kUnwindBudget;  // from the walk's start, not its queueing
        UnwindResult r = UnwindUserStack(*request, *tables);
        r.ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now() - t0)
                                         .count());
        const uint64_t cpu1 = ThreadCpuNs();
        r.cpu_ns = cpu1 > cpu0 ? cpu1 - cpu0 : 0;  // 0 from a clock that failed
        return [self, base, r = std::move(r), user, bytes] {
          self->UnwindEnded(user, bytes);
          self->unwind_allowance_.Charge(user, r.cpu_ns, MonotonicNs());
          self->FinishUnwind(base, r);
        };
      },
      [this, base, user, bytes, started](const std::string&) {
        UnwindEnded(user, bytes);
        const int64_t since = started->load();
        if (since > 0) {
          const int64_t now = MonotonicNs();
          unwind_allowance_.Charge(user, static_cast<uint64_t>(std::max<int64_t>(now - since, 0)),
                                   now);
        }
        NotUnwound(base);
      },
      user);
}

void Aggregator::FinishUnwind(StackSample stack, const UnwindResult& r) {
  if (!r.pcs.empty()) {  // the kernel's frames, then the unwound user frames
    stack.pcs.resize(stack.kernel_frames);
    stack.pcs.insert(stack.pcs.end(), r.pcs.begin(), r.pcs.end());
    stack.end = r.end;
  }
  unwind_.unwound++;
  unwind_.dwarf_frames += r.dwarf_frames;
  unwind_.fp_frames += r.fp_frames;
  unwind_.ns += r.ns;
  unwind_.cpu_ns += r.cpu_ns;
  switch (r.end) {
    case StackEnd::kNoUnwindTable:
      unwind_.no_table++;
      break;
    case StackEnd::kStackCopyShort:
      unwind_.copy_short++;
      break;
    case StackEnd::kJitCode:
      unwind_.jit++;
      break;
    case StackEnd::kUnwindFailed:
      unwind_.failed++;
      break;
    case StackEnd::kBudget:
      unwind_.budget++;
      break;
    default:
      break;
  }
  AddStack(stack);
}

void Aggregator::Add(const RecordBuffer& buffer) {
  for (const StackSample& s : buffer.stacks)
    if (!s.pcs.empty()) TakeStack(s);
  if (buffer.records.empty() && !buffer.stacks.empty()) return;  // a buffer of stacks only
  const lcpi_buffer_header& h = buffer.header;
  totals_.buffers++;
  totals_.dropped += h.dropped;
  if (h.dropped) stats_["dropped"] += static_cast<int64_t>(h.dropped);
  uint64_t attributed = 0, unknown = 0;
  for (const lcpi_record& rec : buffer.records) {
    if (rec.count == 0) continue;
    Added added = AddRecord(rec, h.t_first, h.t_last, nullptr);
    if (added != Added::kWaiting) (added == Added::kUnknown ? unknown : attributed) += rec.count;
  }
  AddCounts();
  totals_.attributed += attributed;
  totals_.unknown += unknown;
  if (attributed) stats_["attributed"] += static_cast<int64_t>(attributed);
  if (unknown) stats_["unknown"] += static_cast<int64_t>(unknown);
}

bool Aggregator::Wait(std::vector<Waiting>& list, const lcpi_record& rec, uint64_t t_first,
                      uint64_t t_last, std::string_view comm, const CgroupRef* cgroup) {
  if (waiting_records_ >= kMaxWaiting) {
    waits_overflowed_++;
    return false;
  }
  list.push_back({rec, t_first, t_last, std::string(comm), cgroup ? *cgroup : nullptr});
  waiting_records_++;
  waiting_samples_ += rec.count;
  return true;
}

void Aggregator::Resume(std::vector<Waiting> list) {
  uint64_t attributed = 0, unknown = 0;
  for (const Waiting& w : list) {
    waiting_records_--;
    waiting_samples_ -= w.rec.count;
    Added added = AddRecord(w.rec, w.t_first, w.t_last, &w);
    (added == Added::kUnknown ? unknown : attributed) += w.rec.count;
  }
  AddCounts();
  totals_.attributed += attributed;
  totals_.unknown += unknown;
  if (attributed) stats_["attributed"] += static_cast<int64_t>(attributed);
  if (unknown) stats_["unknown"] += static_cast<int64_t>(unknown);
}

void Aggregator::StartKernelReload() {
  kernel_reloading_ = true;
  RunLookup<KernelSymbols>(
      lookups_,
      [kallsyms = reload_->kallsyms_path(), modules = reload_->modules_path()] {
        return KernelSymbols::Load(kallsyms, modules);
      },
      [this](Expected<KernelSymbols> fresh) {
        kernel_reloading_ = false;
        if (reload_->Finish(std::move(fresh), *kernel_)) {
          // A module or BPF program loaded since the last read. Modules'
          // symbols are stored again (the store keeps those it has): one
          // that was unloaded and loaded again may hold new ones.
          for (const auto& [name, image] : module_images_) symbols_stored_.erase(image);
          symbols_generation_++;  // a batch in flight must not mark them stored again
        }
        Resume(std::move(kernel_waiting_));
        kernel_waiting_.clear();
      });
}

Aggregator::Added Aggregator::AddRecord(const lcpi_record& rec, uint64_t t_first, uint64_t t_last,
                                        const Waiting* waited) {
  const bool may_wait = lookups_ && !waited;
  int32_t image = kNoImage;
  uint64_t offset = rec.pc;
  // Point into the tracker (or *waited), which nothing below changes.
  std::string_view comm;
  const CgroupRef* cgroup = waited ? &waited->cgroup : nullptr;
  bool kernel = rec.flags & LCPI_RECORD_KERNEL;
  bool unresolved_kernel = false;
  if (kernel) {
    comm = waited ? std::string_view(waited->comm) : tracker_.Comm(rec.pid, t_last);
    if (!waited) cgroup = tracker_.CgroupRefOf(rec.pid, t_last);
    std::optional<KernelLocation> r = kernel_ ? kernel_->Locate(rec.pc) : std::nullopt;
    if (!r && kernel_ && reload_) {
      if (!lookups_) {
        // No lookups: kallsyms is read here (tests, tools).
        if (reload_->OnUnresolved(*kernel_, t_last)) {
          for (const auto& [name, img] : module_images_) symbols_stored_.erase(img);
          symbols_generation_++;
          r = kernel_->Locate(rec.pc);
        }
      } else if (may_wait && (kernel_reloading_ || reload_->Due(t_last))) {
        if (!kernel_reloading_) StartKernelReload();
        if (Wait(kernel_waiting_, rec, t_first, t_last, comm, cgroup)) return Added::kWaiting;
      }
    }
    if (r) {
      image = KernelImage(*r);
      offset = r->offset;
    } else {
      // No kallsyms, or code outside the kernel and every module known at
      // start (a module loaded since, a BPF program): still kernel code,
      // never a user process's unknown image.
      image = images_.Intern("kernel:unresolved", "[kernel]", ImageKind::kKernel);
      offset = RawPcOffset(rec.pc);
      unresolved_kernel = true;
    }
  } else {
    Resolution r = tracker_.Resolve(rec.pid, rec.pc, t_first, t_last);
    comm = waited ? std::string_view(waited->comm) : r.comm;
    if (!waited) cgroup = r.cgroup_ref;
    if (r.mapped && r.image != kNoImage) {
      image = r.image;
      offset = r.offset;
    } else if (jit_) {
      if (std::optional<JitLocation> j =
              jit_->Resolve(rec.pid, std::string(comm), rec.pc, t_last)) {
        image = j->image;
        offset = j->offset;
      } else if (may_wait && jit_->Reading(rec.pid) &&
                 Wait(jit_waiting_[rec.pid], rec, t_first, t_last, comm, cgroup)) {
        return Added::kWaiting;
      }
    }
  }
  if (rec.pid == 0 && comm.empty()) comm = "swapper";
  // perf gives no task for some samples (pid -1): they join the rolled-up
  // rows (the same pid) under a name that says so.
  if (rec.pid == kRolledUpPid && comm.empty()) comm = "[no pid]";
  bool unknown = image == kNoImage || unresolved_kernel;
  if (image == kNoImage) {
    image = UnknownImage(comm);
    offset = RawPcOffset(rec.pc);
  }
  // Counted in counts_ by AddCounts, once the caller's records are resolved.
  adds_.push_back({{Key(static_cast<uint32_t>(image), rec.event), offset}, rec.count});
  AddProcess(rec.pid, comm, cgroup, static_cast<uint32_t>(image), rec.event, rec.count);
  totals_.records++;
  totals_.samples += rec.count;
  if (kernel && !unknown) totals_.kernel += rec.count;
  return unknown ? Added::kUnknown : Added::kAttributed;
}

int32_t Aggregator::UnknownImage(std::string_view comm) {
  std::string name(comm);  // a process name: short enough for no allocation
  if (auto it = unknown_images_.find(name); it != unknown_images_.end()) return it->second;
  int32_t image = images_.Unknown(name);
  unknown_images_.emplace(std::move(name), image);
  return image;
}

void Aggregator::AddCounts() {
  // Far enough ahead that a fetch from memory (~100 ns) is done when its
  // probe comes, near enough that the prefetched lines are still cached.
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < adds_.size(); i++) {
    if (i + kAhead < adds_.size()) counts_.prefetch(adds_[i + kAhead].first);
    counts_[adds_[i].first] += adds_[i].second;
  }
  adds_.clear();
}

void Aggregator::AddProcess(uint32_t pid, std::string_view comm, const CgroupRef* cgroup,
                            uint32_t image, uint32_t event, uint64_t count) {
  if (pid == kRolledUpPid) {  // no task: not a pid to admit or count
    rolled_up_[{std::string(comm), cgroup ? *cgroup : nullptr, image, event}] += count;
    return;
  }
  bool own = max_processes_ == 0 || admitted_.count(pid) != 0;
  if (!own && admitted_.size() < max_processes_) {
    admitted_.insert(pid);
    own = true;
  }
  if (!own) {
    rolled_up_[{std::string(comm), cgroup ? *cgroup : nullptr, image, event}] += count;
    if (FirstRolledUp(pid)) {
      processes_rolled_up_++;
      stats_["processes_rolled_up"]++;
    }
    return;
  }
  ProcessCount& p = processes_[{pid, image, event, cgroup ? *cgroup : nullptr}];
  if (p.comm != comm) p.comm.assign(comm);
  p.count += count;
}

namespace {

// A shared cgroup path as a process row stores it ("": not known).
std::string PathOf(const CgroupRef& cgroup) { return cgroup ? *cgroup : std::string(); }

}  // namespace

Aggregator::TakenBatch Aggregator::TakeBatch(int64_t epoch, const std::vector<RealEvent>& events) {
  TakenBatch taken;
  MergeBatch& b = taken.batch;
  b.epoch = epoch;
  // Times enabled and running are the source's, per merge: lcpid adds them.
  for (const RealEvent& e : events)
    b.events.push_back({e.requested.name, e.used, e.period, 0, 0, e.precise});
  // Only the images this batch names, re-indexed; two entries of one
  // identity (one content found at two paths) are one image in the batch.
  std::map<int32_t, uint32_t> index;
  std::unordered_map<std::string_view, uint32_t> by_identity;
  auto image_index = [&](int32_t image) {
    auto it = index.find(image);
    if (it != index.end()) return it->second;
    const ImageEntry& e = images_.at(image);
    auto [same, fresh] = by_identity.emplace(e.identity, static_cast<uint32_t>(b.images.size()));
    if (fresh) b.images.push_back({e.identity, e.path, e.kind});
    index.emplace(image, same->second);
    return same->second;
  };
  // The counts of an image still being identified stay for a later batch.
  auto held = [&](uint64_t image) { return images_.pending(static_cast<int32_t>(image)); };
  decltype(counts_) held_counts;
  decltype(processes_) held_processes;
  decltype(rolled_up_) held_rolled_up;
  b.counts.reserve(counts_.size());
  for (const auto& [key, count] : counts_) {
    if (held(key.image_event >> 32)) {
      held_counts.emplace(key, count);
      continue;
    }
    uint32_t img = image_index(static_cast<int32_t>(key.image_event >> 32));
    b.counts.push_back({img, static_cast<uint32_t>(key.image_event), key.offset, count});
  }
  for (auto& [key, p] : processes_) {
    const auto& [pid, image, event, cgroup] = key;
    if (held(image)) {
      held_processes.emplace(key, std::move(p));
      continue;
    }
    b.processes.push_back(
        {pid, p.comm, image_index(static_cast<int32_t>(image)), event, p.count, PathOf(cgroup)});
  }
  for (const auto& [key, count] : rolled_up_) {
    const auto& [comm, cgroup, image, event] = key;
    if (held(image)) {
      held_rolled_up.emplace(key, count);
      continue;
    }
    b.processes.push_back({kRolledUpPid, comm, image_index(static_cast<int32_t>(image)), event,
                           count, PathOf(cgroup)});
  }
  for (auto& [key, count] : stacks_.Take()) {
    bool wait = false;
    for (const auto& frame : key.frames) wait = wait || held(static_cast<uint64_t>(frame.first));
    if (wait) {
      stacks_.PutBack(key, count);
      continue;
    }
    StackRow& row = b.stacks.emplace_back();
    row.end = key.end;
    row.count = count;
    for (const auto& [image, offset] : key.frames)
      row.frames.emplace_back(image_index(image), offset);
  }
  // Held counts' samples go with their counts into a later batch, and so do
  // the samples of records still waiting for a lookup (not counted yet).
  uint64_t held_samples = 0;
  for (const auto& [key, count] : held_counts) held_samples += count;
  const uint64_t carried = held_samples + waiting_samples_;
  taken.held_samples_change = static_cast<int64_t>(carried) - static_cast<int64_t>(carried_);
  carried_ = carried;
  // (A held image is a mapped file's: its samples were counted as attributed.)
  const int64_t held_change =
      static_cast<int64_t>(held_samples) - static_cast<int64_t>(held_samples_);
  held_samples_ = held_samples;
  if (held_change) stats_["attributed"] -= held_change;
  for (const auto& [name, value] : stats_)
    if (value) b.stats.emplace_back(name, value);
  for (const auto& [image, img] : index) {
    if (!IsVdso(images_.at(image)) || symbols_stored_.count(image)) continue;
    for (const VdsoSymbol& s : vdso_symbols_) b.symbols.push_back({img, s.offset, s.size, s.name});
  }
  // Nor a JIT map once its process is gone: store the names of the JIT
  // code this batch has samples in.
  if (jit_) {
    for (const auto& [image, offsets] : JitOffsets()) {
      uint32_t img = index.at(image);
      std::vector<const PerfMapSymbol*> carried = jit_->Unstored(image, offsets);
      for (const PerfMapSymbol* s : carried) b.symbols.push_back({img, s->start, s->size, s->name});
      if (!carried.empty()) taken.marks.jit_symbols[image] = std::move(carried);
    }
  }
  // The tools cannot read kallsyms of this boot later: store kernel symbols once.
  if (kernel_) {
    for (const auto& [image, img] : index) {
      const ImageEntry& e = images_.at(image);
      if (symbols_stored_.count(image) || !IsKernelSide(e.kind)) continue;
      std::string module;
      if (e.kind == ImageKind::kModule) module = e.path.substr(1, e.path.size() - 2);
      const std::vector<KernelSymbol>* syms = kernel_->SymbolsOf(module);
      if (!syms) continue;
      uint64_t base = kernel_->text_base(), limit = kernel_->text_end();
      if (e.kind == ImageKind::kModule)
        for (const KernelModule& m : kernel_->modules())
          if (m.name == module) base = m.base, limit = m.base + m.size;
      // Stored with the extent the reports will use (SymbolEnd): kallsyms
      // has no sizes, so each runs to the next symbol or the image's end.
      for (size_t i = 0; i < syms->size(); i++) {
        const KernelSymbol& s = (*syms)[i];
        if (s.addr < base) continue;
        std::optional<uint64_t> next;
        if (i + 1 < syms->size()) next = (*syms)[i + 1].addr;
        uint64_t size = SymbolEnd(s.addr, 0, next, limit) - s.addr;
        b.symbols.push_back({img, s.addr - base, size, std::string(kernel_->Name(s))});
      }
    }
  }
  StoredMarks& marks = taken.marks;
  marks.symbols_generation = symbols_generation_;
  for (const auto& [image, img] : index) {
    const ImageEntry& e = images_.at(image);
    if (IsKernelSide(e.kind) || IsVdso(e)) marks.symbol_images.push_back(image);
  }
  // Double buffering: the counts leave with the batch, new samples go to
  // fresh maps (swapped, not cleared, so the old buckets are freed too),
  // which start with what was held back.
  held_entries_ = held_counts.size();
  counts_.swap(held_counts);
  decltype(counts_)().swap(held_counts);
  processes_.swap(held_processes);
  rolled_up_.swap(held_rolled_up);
  unknown_images_.clear();  // bounded by the names of one batch
  stats_.clear();
  return taken;
}

void Aggregator::Committed(const StoredMarks& marks) {
  for (int32_t image : marks.symbol_images) {
    // A module's symbols read again since the batch was taken may hold new
    // names: the next batch stores them.
    if (marks.symbols_generation != symbols_generation_ &&
        images_.at(image).kind == ImageKind::kModule)
      continue;
    symbols_stored_.insert(image);
  }
  if (jit_)
    for (const auto& [image, symbols] : marks.jit_symbols) jit_->MarkStored(image, symbols);
}

std::map<int32_t, std::vector<uint64_t>> Aggregator::JitOffsets() const {
  std::map<int32_t, std::vector<uint64_t>> out;
  for (const auto& [key, count] : counts_) {
    int32_t image = static_cast<int32_t>(key.image_event >> 32);
    if (images_.at(image).kind == ImageKind::kJit) out[image].push_back(key.offset);
  }
  return out;
}

bool Aggregator::FirstRolledUp(uint32_t pid) {
  constexpr uint32_t kPidLimit = 1u << 22;  // the kernel's PID_MAX_LIMIT on 64-bit
  if (pid >= kPidLimit) return true;        // not a Linux pid: counted each time
  if (pid >= rolled_pids_.size()) rolled_pids_.resize(pid + 1, false);
  if (rolled_pids_[pid]) return false;
  rolled_pids_[pid] = true;
  return true;
}

void Aggregator::NewWindow() {
  // The stacks held back with their image, as the process rows below.
  if (const uint64_t over = stacks_.NewWindow(); over > 0)
    stats_[kStacksOverLimitStat] += static_cast<int64_t>(over);
  // Snapshots of processes gone since go too (those in flight live on),
  // and the allowance's buckets full again.
  unwind_allowance_.Prune(MonotonicNs());
  snapshots_.clear();
  snapshot_bytes_ = 0;
  admitted_.clear();
  rolled_pids_.assign(rolled_pids_.size(), false);
  // The process rows the last TakeBatch held back (their image still being
  // identified) go out with this window: their pids are its first, admitted
  // as any other, or the window held them on top of max_processes_ (soak,
  // its lookups slowed by a busy host: 41 of 40).
  decltype(processes_) held;
  held.swap(processes_);
  for (const auto& [key, p] : held) {
    const auto& [pid, image, event, cgroup] = key;
    AddProcess(pid, p.comm, &cgroup, image, event, p.count);
  }
}

size_t Aggregator::entries() const { return counts_.size(); }

void Aggregator::MarkImages(std::vector<bool>& in_use) const {
  for (const auto& [key, count] : counts_) in_use[key.image_event >> 32] = true;
  for (const auto& [key, p] : processes_) in_use[std::get<1>(key)] = true;
  for (const auto& [key, count] : rolled_up_) in_use[std::get<2>(key)] = true;
  for (const auto& [comm, image] : unknown_images_) in_use[image] = true;
  for (const auto& [key, count] : stacks_.pending())
    for (const auto& frame : key.frames) in_use[frame.first] = true;
}

}  // namespace lcpi
