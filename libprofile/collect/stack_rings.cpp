// stack_rings.cpp - the stack event's attributes, its rings and the parse
// of its samples (call chain, user registers, user stack copy).
#include "libprofile/collect/stack_rings.h"

#include <algorithm>
#include <cstring>
#include <fstream>

#include <spdlog/spdlog.h>

namespace lcpi {
namespace {

// A sample is up to 127 frames (~1 KiB) and, on x86-64, the user registers
// and up to kUserStackCopy bytes of the user stack (~9 KiB in all): 1 MiB
// per CPU holds ~110 of them, a second's at 100 stacks/s/CPU; the reader
// wakes at a quarter.
#if defined(__x86_64__)
constexpr int kStackRingPageOrder = 8;
#else
constexpr int kStackRingPageOrder = 5;
#endif

#if defined(__x86_64__)
// The user registers asked of perf (PERF_SAMPLE_REGS_USER, by perf_regs.h
// index: bx 1, bp 6, sp 7, ip 8, r12-r15 20-23) and the DWARF number of
// each, in the mask's bit order: the pc, sp and bp to start the walk, and
// the callee-saved registers a caller's CFA may be computed from.
constexpr int kPerfRegs[] = {1, 6, 7, 8, 20, 21, 22, 23};
constexpr int kDwarfRegs[] = {3, 6, 7, 16, 12, 13, 14, 15};
uint64_t UserRegsMask() {
  uint64_t mask = 0;
  for (int r : kPerfRegs) mask |= 1ull << r;
  return mask;
}
#endif

// Reads the REGS_USER and STACK_USER parts of a stack sample at p (within
// [p, end)) into s. False when they do not fit the record.
bool ParseUserStack(const uint8_t* p, const uint8_t* end, StackSample* s) {
#if defined(__x86_64__)
  auto take = [&](uint64_t* v) {
    if (end - p < 8) return false;
    std::memcpy(v, p, 8);
    p += 8;
    return true;
  };
  uint64_t abi = 0;
  if (!take(&abi)) return false;
  if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
    for (int dwarf : kDwarfRegs) {
      uint64_t v;
      if (!take(&v)) return false;
      s->user_regs.Set(dwarf, v);
    }
  }
  uint64_t size = 0;
  if (!take(&size)) return false;
  if (size == 0) return true;
  const auto room = static_cast<uint64_t>(end - p);
  if (size > room || room - size < 8) return false;  // (size + 8 could wrap)
  uint64_t dyn_size;
  std::memcpy(&dyn_size, p + size, 8);
  // dyn_size: the bytes the kernel could copy (less near the stack's top).
  if (abi != PERF_SAMPLE_REGS_ABI_NONE) s->user_stack.assign(p, p + std::min(size, dyn_size));
  return true;
#else
  (void)p, (void)end, (void)s;
  return true;
#endif
}

}  // namespace

uint32_t MaxStackDepth(const std::string& sysctl) {
  std::ifstream in(sysctl);
  uint64_t limit = 0;
  if (!(in >> limit) || limit == 0) return kMaxStackDepth;
  return static_cast<uint32_t>(std::min<uint64_t>(limit, kMaxStackDepth));
}

void StackRings::Open(const std::vector<int>& cpus, uint64_t frequency) {
  rings_.clear();
  // cpu-clock: time, which every host has, the same share of each CPU's
  // time as a cycles profile where the clock does not stop.
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = frequency;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
#if defined(__x86_64__)
  // And a copy of the top of the user stack with the registers to unwind
  // it from (unwind/), for code built without frame pointers (Debian's).
  attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  attr.sample_regs_user = UserRegsMask();
  attr.sample_stack_user = kUserStackCopy;
#endif
  // The kernel refuses more than kernel.perf_event_max_stack (EOVERFLOW).
  depth_ = MaxStackDepth();
  attr.sample_max_stack = static_cast<uint16_t>(depth_);
  attr.disabled = 1;
  attr.exclude_guest = 1;
  attr.watermark = 1;
  attr.wakeup_watermark = (4096u << kStackRingPageOrder) / 4;
  for (int cpu : cpus) {
    Expected<std::unique_ptr<PerfRing>> ring = PerfRing::Open(attr, cpu, kStackRingPageOrder);
    if (!ring) {
      spdlog::warn("call stacks: cannot sample them on cpu {}: {}", cpu, ring.error().message());
      continue;
    }
    rings_.push_back({cpu, std::move(*ring)});
  }
}

Expected<void> StackRings::Enable() {
  for (CpuRing& r : rings_)
    if (Expected<void> e = r.ring->Enable(); !e) return e;
  return {};
}

void StackRings::Disable() {
  for (CpuRing& r : rings_) r.ring->Disable();
}

std::vector<int> StackRings::PollFds() const {
  std::vector<int> fds;
  for (const CpuRing& r : rings_) fds.push_back(r.ring->fd());
  return fds;
}

void StackRings::Read(const Source::BufferSink& sink) {
  for (CpuRing& r : rings_) ReadRing(r, sink);
}

void StackRings::ReadRing(CpuRing& r, const Source::BufferSink& sink) {
  RecordBuffer out;
  r.ring->Read([&](const perf_event_header& hdr, const uint8_t* body) {
    size_t len = hdr.size - sizeof(hdr);
    if (hdr.type == PERF_RECORD_LOST && len >= 16) {
      uint64_t lost;
      std::memcpy(&lost, body + 8, 8);
      lost_ += lost;
      return;
    }
    // ip, pid+tid, time, nr, ips[nr]: every length checked against the record.
    if (hdr.type != PERF_RECORD_SAMPLE || len < 32) return;
    uint64_t nr;
    std::memcpy(&nr, body + 24, 8);
    if (nr > (len - 32) / 8) return;
    StackSample& s = out.stacks.emplace_back();
    std::memcpy(&s.pid, body + 8, 4);
    std::memcpy(&s.time, body + 16, 8);
    std::vector<uint64_t> ips(nr);
    if (nr) std::memcpy(ips.data(), body + 32, nr * 8);
    ParseCallchain(ips.data(), nr, depth_, &s);
    if (!ParseUserStack(body + 32 + nr * 8, body + len, &s)) {
      s.user_regs = {};
      s.user_stack.clear();
    }
    copy_bytes_ += s.user_stack.size();
    if (s.pcs.empty()) out.stacks.pop_back();
  });
  if (out.stacks.empty()) return;
  out.header.magic = LCPI_BUFFER_MAGIC;
  out.header.version = LCPI_ABI_VERSION;
  out.header.header_size = sizeof(lcpi_buffer_header);
  out.header.cpu = static_cast<uint32_t>(r.cpu);
  out.header.t_first = out.stacks.front().time;
  out.header.t_last = out.stacks.back().time;
  stacks_ += out.stacks.size();
  sink(std::move(out));
}

void StackRings::FillStats(SourceStats* s) const {
  s->stacks = stacks_;
  s->stacks_lost = lost_;
  s->stack_copy_bytes = copy_bytes_;
  for (const CpuRing& r : rings_) s->bad_records += r.ring->bad_records();
}

}  // namespace lcpi
