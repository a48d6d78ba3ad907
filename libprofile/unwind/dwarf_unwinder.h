// dwarf_unwinder.h - a user call stack from a copy of its top: the
// sampled registers (PERF_SAMPLE_REGS_USER) and up to kUserStackCopy bytes
// of stack (PERF_SAMPLE_STACK_USER), walked frame by frame.
//
// Each frame's pc is looked up in the process's executable mappings (a
// snapshot taken on lcpid's loop when the stack came) and its image's
// unwind table (UnwindTables: .eh_frame / .debug_frame through libdw's
// CFI). The frame's CFA and saved registers follow its rules, their
// location expressions (libdw hands them decoded: a few ops such as
// "register + offset", "CFA + offset", a dereference) evaluated against
// the registers and the copied stack. Where an image has no table for the
// pc (a JIT's anonymous code, a file without .eh_frame), a frame pointer
// leads on if the frame has one: frame pointers where they work, DWARF
// elsewhere. A walk that cannot go on ends with its StackEnd reason.
//
// Runs on the lookups' threads: it touches nothing but its request and
// the tables.
#ifndef LCPI_LIBPROFILE_UNWIND_DWARF_UNWINDER_H
#define LCPI_LIBPROFILE_UNWIND_DWARF_UNWINDER_H

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "libprofile/base/stack_end.h"
#include "libprofile/collect/stack_sample.h"
#include "libprofile/unwind/unwind_tables.h"

namespace lcpi {

struct UnwindImage {
  std::string identity;
  std::string path;
};

// One executable mapping: image indexes UnwindRequest::images, -1 for
// anonymous memory (JIT code).
struct UnwindMapping {
  uint64_t start = 0, end = 0, pgoff = 0;
  int32_t image = -1;
};

// A process's executable mappings as the walk sees them: built once per
// change of its address space and shared, read-only, by every stack of it
// in flight (the aggregator's snapshot).
struct UnwindSpace {
  std::vector<UnwindMapping> maps;  // sorted by start, none overlapping
  std::vector<UnwindImage> images;
};

struct UnwindRequest {
  UserRegs regs;
  std::vector<uint8_t> stack;                // from regs' sp up
  std::shared_ptr<const UnwindSpace> space;  // null: no mappings
  uint32_t max_frames = kMaxStackDepth;
  // The walk's budget: checked before each frame, a walk past it ends
  // with StackEnd::kBudget (a frame's CFI program is user-chosen, and so
  // is its length).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

struct UnwindResult {
  std::vector<uint64_t> pcs;  // the sampled pc first, then return addresses
  StackEnd end = StackEnd::kWalkEnded;
  uint32_t dwarf_frames = 0;  // steps taken through an unwind table
  uint32_t fp_frames = 0;     // steps taken through a frame pointer
  uint64_t ns = 0;            // the walk's time (set by the caller that measures it)
  uint64_t cpu_ns = 0;        // its thread's CPU time (set by the caller, too)
};

UnwindResult UnwindUserStack(const UnwindRequest& request, UnwindTables& tables);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_UNWIND_DWARF_UNWINDER_H
