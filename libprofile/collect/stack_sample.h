// stack_sample.h - one call stack as a source takes it: the pcs from the
// sampled instruction outwards (kernel frames first, then user frames), and
// why the walk ended. The perf source fills it from PERF_SAMPLE_CALLCHAIN
// (frame pointers in user space, the kernel's own unwinder in the kernel)
// and, on x86-64, the user registers and a copy of the user stack, from
// which the DWARF unwinder (unwind/) replaces the user frames.
#ifndef LCPI_LIBPROFILE_COLLECT_STACK_SAMPLE_H
#define LCPI_LIBPROFILE_COLLECT_STACK_SAMPLE_H

#include <cstdint>
#include <vector>

#include "libprofile/base/stack_end.h"

namespace lcpi {

// The registers a DWARF unwinder needs to start from the sampled user
// instruction (PERF_SAMPLE_REGS_USER), by DWARF register number: on x86-64
// the stack and frame pointers, the pc and the callee-saved registers a
// frame's CFA rule may name (rbx, r12-r15). Other architectures take no
// user stack yet (the frame-pointer chain alone).
inline constexpr int kUnwindRegs = 17;  // x86-64: DWARF 0..16, 16 the return address (rip)
struct UserRegs {
  uint64_t value[kUnwindRegs] = {};
  uint32_t valid = 0;  // bit n: value[n] is known
  bool Has(int n) const { return (valid >> n) & 1; }
  void Set(int n, uint64_t v) {
    value[n] = v;
    valid |= 1u << n;
  }
};
inline constexpr int kDwarfSp = 7, kDwarfFp = 6, kDwarfPc = 16;

// The deepest stack kept: perf's own default (kernel.perf_event_max_stack).
// Frames beyond it are cut and the stack ends with kDepthCap.
inline constexpr uint32_t kMaxStackDepth = 127;

struct StackSample {
  uint32_t pid = 0;
  uint64_t time = 0;  // perf clock, as records' windows
  // Leaf first. pcs[0] is the sampled instruction; every later pc is a
  // return address (the instruction after a call).
  std::vector<uint64_t> pcs;
  uint32_t kernel_frames = 0;  // pcs[0, kernel_frames) are kernel addresses
  StackEnd end = StackEnd::kWalkEnded;
  // Set when the sample interrupted user code (PERF_SAMPLE_REGS_USER and
  // PERF_SAMPLE_STACK_USER): its registers and the bytes of its stack from
  // regs' sp up, for the DWARF unwinder; empty otherwise.
  UserRegs user_regs;
  std::vector<uint8_t> user_stack;
};

// Parses a PERF_SAMPLE_CALLCHAIN array (nr entries, context markers such as
// PERF_CONTEXT_KERNEL among them) into `out`: markers dropped, kernel frames
// counted, at most max_depth (<= kMaxStackDepth) frames. A chain of
// max_depth frames ends with kDepthCap: the kernel cuts its chains there
// without saying so, and a chain of exactly that depth cannot be told apart.
void ParseCallchain(const uint64_t* ips, uint64_t nr, uint32_t max_depth, StackSample* out);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_COLLECT_STACK_SAMPLE_H
