// stack_rings.h - the call-stack event (--stack-frequency) that both
// sources take stacks through: a cpu-clock event per CPU at a rate of its
// own, with the kernel's call chain (PERF_SAMPLE_CALLCHAIN) and, on x86-64,
// a copy of the top of the user stack and the registers to unwind it from
// (unwind/), read from perf rings into buffers of StackSamples. The flat
// profile, from perf rings or from lcpi.ko's handler, keeps its rate and
// its cost; the module's handler walks no stack (docs/kmod.md says why).
#ifndef LCPI_LIBPROFILE_COLLECT_STACK_RINGS_H
#define LCPI_LIBPROFILE_COLLECT_STACK_RINGS_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "libprofile/base/error.h"
#include "libprofile/collect/perf_ring.h"
#include "libprofile/collect/source.h"

namespace lcpi {

// The bytes of user stack copied with each stack sample (x86-64): 8 KiB,
// perf --call-graph dwarf's default, holds the frames of the innermost ten
// to twenty procedures of most C and C++ code (a frame is tens to hundreds
// of bytes); a stack larger than that ends "stack copy too short". Each
// sample's copy passes through the ring and the loop's queue (the bytes in
// use only: dyn_size), and is dropped once unwound, never stored.
inline constexpr uint32_t kUserStackCopy = 8192;

// The deepest call stack asked of perf: kMaxStackDepth, or less where the
// sysctl kernel.perf_event_max_stack is lower.
uint32_t MaxStackDepth(const std::string& sysctl = "/proc/sys/kernel/perf_event_max_stack");

class StackRings {
 public:
  // Opens the event, disabled, on each of `cpus` at `frequency` stacks per
  // second per CPU. A CPU that refuses it is logged and goes without: the
  // flat profile does not depend on stacks.
  void Open(const std::vector<int>& cpus, uint64_t frequency);
  Expected<void> Enable();
  void Disable();
  // The rings' descriptors (POLLIN once a quarter full).
  std::vector<int> PollFds() const;
  // Reads every CPU's ring, handing each CPU's stacks to sink as one
  // buffer of that CPU.
  void Read(const Source::BufferSink& sink);
  // Sets s's stacks, stacks_lost and stack_copy_bytes, and adds the stack
  // rings' records of impossible size to its bad_records.
  void FillStats(SourceStats* s) const;

 private:
  struct CpuRing {
    int cpu;
    std::unique_ptr<PerfRing> ring;
  };
  void ReadRing(CpuRing& r, const Source::BufferSink& sink);

  std::vector<CpuRing> rings_;
  uint32_t depth_ = 0;  // asked of perf (MaxStackDepth)
  uint64_t stacks_ = 0;
  uint64_t lost_ = 0;        // stacks the kernel lost: not in the flat samples' lost
  uint64_t copy_bytes_ = 0;  // of user stack copied into StackSamples
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_COLLECT_STACK_RINGS_H
