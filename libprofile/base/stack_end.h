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
  // The frame-pointer walk (user) or the kernel's unwinder ended there: the
  // outermost frame, or a frame without a frame pointer (the DWARF
  // unwinder is not there yet: a binary built without them stops here).
  kWalkEnded = 0,
  kDepthCap = 1,    // cut at kMaxStackDepth frames
  kKernelOnly = 2,  // a kernel thread, or no user frames were given
};

// "walk ended", "depth cap", "kernel only"; a stored value this build does
// not know: "reason N".
std::string StackEndName(uint8_t end);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_STACK_END_H
