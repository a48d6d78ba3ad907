// stack_end.h - why a call stack has no more frames: taken with the stack
// (collect/stack_sample.h), stored with it (one byte, store/stack_codec.h)
// and shown by the reports ("[stack end: walk ended]"). Values are stored:
// never renumbered, new ones added at the end.
#ifndef LCPI_LIBPROFILE_BASE_STACK_END_H
#define LCPI_LIBPROFILE_BASE_STACK_END_H

#include <cstdint>
#include <string>

namespace lcpi {

enum class StackEnd : uint8_t {
  // The walk ended there: the outermost frame (its unwind table says the
  // return address is undefined, or it is 0), a return address outside
  // every mapping, or (frame pointers only) a frame without a frame pointer.
  kWalkEnded = 0,
  kDepthCap = 1,    // cut at kMaxStackDepth frames
  kKernelOnly = 2,  // a kernel thread, or no user frames were given
  // The DWARF unwinder (unwind/) stopped: the image has no unwind table
  // for the pc (no file, no .eh_frame / .debug_frame entry) and no frame
  // pointer led on.
  kNoUnwindTable = 3,
  // A frame's saved registers lie beyond the copy of the user stack
  // (PERF_SAMPLE_STACK_USER's bytes): a deeper stack than the copy holds.
  kStackCopyShort = 4,
  // A pc in anonymous executable memory (JIT code) without frame
  // information, where no frame pointer led on either.
  kJitCode = 5,
  // The unwind table asked for a register the sample does not hold, or
  // gave a frame that does not move up the stack.
  kUnwindFailed = 6,
  // The DWARF unwinder could not take the stack in time (its queue, or
  // its user's share of it, was full, or it was stopped): the
  // frame-pointer chain is kept.
  kNotUnwound = 7,
  // The DWARF unwinder gave up on the walk: past its time budget (a user's
  // CFI made its frames slow), the frames found so far kept.
  kBudget = 8,
};

// "walk ended", "depth cap", "kernel only"; a stored value this build does
// not know: "reason N".
std::string StackEndName(uint8_t end);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_STACK_END_H
