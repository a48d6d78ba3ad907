// aggregator.cpp - record resolution and the pending batch.
#include "libprofile/aggregate/aggregator.h"

#include <sys/utsname.h>

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

void Aggregator::Add(const RecordBuffer& buffer) {
  const lcpi_buffer_header& h = buffer.header;
  totals_.buffers++;
  totals_.dropped += h.dropped;
  if (h.dropped) stats_["dropped"] += static_cast<int64_t>(h.dropped);
  uint64_t attributed = 0, unknown_samples = 0;
  for (const lcpi_record& rec : buffer.records) {
    if (rec.count == 0) continue;
    int32_t image = kNoImage;
    uint64_t offset = rec.pc;
    std::string comm;
    bool kernel = rec.flags & LCPI_RECORD_KERNEL;
    bool unresolved_kernel = false;
    if (kernel) {
      std::optional<KernelLocation> r = kernel_ ? kernel_->Locate(rec.pc) : std::nullopt;
      if (!r && kernel_ && reload_ && reload_->OnUnresolved(*kernel_, h.t_last)) {
        // A module or BPF program loaded since the last read. Modules'
        // symbols are stored again (the store keeps those it has): one that
        // was unloaded and loaded again may hold new ones.
        for (const auto& [name, image] : module_images_) symbols_stored_.erase(image);
        symbols_generation_++;  // a batch in flight must not mark them stored again
        r = kernel_->Locate(rec.pc);
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
      comm = tracker_.Resolve(rec.pid, 0, h.t_first, h.t_last).comm;
    } else {
      Resolution r = tracker_.Resolve(rec.pid, rec.pc, h.t_first, h.t_last);
      comm = std::move(r.comm);
      if (r.mapped && r.image != kNoImage) {
        image = r.image;
        offset = r.offset;
      } else if (jit_) {
        if (std::optional<JitLocation> j = jit_->Resolve(rec.pid, comm, rec.pc, h.t_last)) {
          image = j->image;
          offset = j->offset;
        }
      }
    }
    if (rec.pid == 0 && comm.empty()) comm = "swapper";
    // perf gives no task for some samples (pid -1): they join the rolled-up
    // rows (the same pid) under a name that says so.
    if (rec.pid == kRolledUpPid && comm.empty()) comm = "[no pid]";
    bool unknown = image == kNoImage || unresolved_kernel;
    if (image == kNoImage) {
      image = images_.Unknown(comm);
      offset = RawPcOffset(rec.pc);
    }
    counts_[{Key(static_cast<uint32_t>(image), rec.event), offset}] += rec.count;
    AddProcess(rec.pid, std::move(comm), static_cast<uint32_t>(image), rec.event, rec.count);
    totals_.records++;
    totals_.samples += rec.count;
    (unknown ? unknown_samples : attributed) += rec.count;
    if (kernel && !unknown) totals_.kernel += rec.count;
  }
  totals_.attributed += attributed;
  totals_.unknown += unknown_samples;
  if (attributed) stats_["attributed"] += static_cast<int64_t>(attributed);
  if (unknown_samples) stats_["unknown"] += static_cast<int64_t>(unknown_samples);
}

void Aggregator::AddProcess(uint32_t pid, std::string comm, uint32_t image, uint32_t event,
                            uint64_t count) {
  if (pid == kRolledUpPid) {  // no task: not a pid to admit or count
    rolled_up_[{std::move(comm), image, event}] += count;
    return;
  }
  bool own = max_processes_ == 0 || admitted_.count(pid) != 0;
  if (!own && admitted_.size() < max_processes_) {
    admitted_.insert(pid);
    own = true;
  }
  if (!own) {
    rolled_up_[{std::move(comm), image, event}] += count;
    if (FirstRolledUp(pid)) {
      processes_rolled_up_++;
      stats_["processes_rolled_up"]++;
    }
    return;
  }
  ProcessCount& p = processes_[Key(pid, image)][event];
  if (p.comm != comm) p.comm = std::move(comm);
  p.count += count;
}

Aggregator::TakenBatch Aggregator::TakeBatch(int64_t epoch, const std::vector<RealEvent>& events) {
  TakenBatch taken;
  MergeBatch& b = taken.batch;
  b.epoch = epoch;
  // Times enabled and running are the source's, per merge: lcpid adds them.
  for (const RealEvent& e : events)
    b.events.push_back({e.requested.name, e.used, e.period, 0, 0, e.precise});
  // Only the images this batch names, re-indexed.
  std::map<int32_t, uint32_t> index;
  auto image_index = [&](int32_t image) {
    auto [it, fresh] = index.emplace(image, static_cast<uint32_t>(b.images.size()));
    if (fresh) {
      const ImageEntry& e = images_.at(image);
      b.images.push_back({e.identity, e.path, e.kind});
    }
    return it->second;
  };
  b.counts.reserve(counts_.size());
  for (const auto& [key, count] : counts_) {
    uint32_t img = image_index(static_cast<int32_t>(key.image_event >> 32));
    b.counts.push_back({img, static_cast<uint32_t>(key.image_event), key.offset, count});
  }
  for (const auto& [key, events] : processes_) {
    uint32_t img = image_index(static_cast<int32_t>(key & 0xffffffffu));
    for (const auto& [event, p] : events)
      b.processes.push_back({static_cast<uint32_t>(key >> 32), p.comm, img, event, p.count});
  }
  for (const auto& [key, count] : rolled_up_) {
    const auto& [comm, image, event] = key;
    b.processes.push_back(
        {kRolledUpPid, comm, image_index(static_cast<int32_t>(image)), event, count});
  }
  for (const auto& [name, value] : stats_) b.stats.emplace_back(name, value);
  for (const auto& [image, img] : index) {
    if (!IsVdso(images_.at(image)) || symbols_stored_.count(image)) continue;
    for (const VdsoSymbol& s : vdso_symbols_) b.symbols.push_back({img, s.offset, s.size, s.name});
  }
  // Nor a JIT map once its process is gone: store the names of the JIT
  // code this batch has samples in.
  if (jit_) {
    taken.marks.jit_offsets = JitOffsets();
    for (const auto& [image, offsets] : taken.marks.jit_offsets) {
      uint32_t img = index.at(image);
      for (const PerfMapSymbol* s : jit_->Unstored(image, offsets))
        b.symbols.push_back({img, s->start, s->size, s->name});
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
        b.symbols.push_back({img, s.addr - base, size, kernel_->Name(s)});
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
  // fresh maps (swapped, not cleared, so the old buckets are freed too).
  decltype(counts_)().swap(counts_);
  decltype(processes_)().swap(processes_);
  rolled_up_.clear();
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
    for (const auto& [image, offsets] : marks.jit_offsets) jit_->MarkStored(image, offsets);
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
  admitted_.clear();
  rolled_pids_.assign(rolled_pids_.size(), false);
}

size_t Aggregator::entries() const { return counts_.size(); }

void Aggregator::MarkImages(std::vector<bool>& in_use) const {
  for (const auto& [key, count] : counts_) in_use[key.image_event >> 32] = true;
  for (const auto& [key, events] : processes_) in_use[key & 0xffffffffu] = true;
  for (const auto& [key, count] : rolled_up_) in_use[std::get<1>(key)] = true;
}

}  // namespace lcpi
