// stack_end.cpp - the names of the reasons a call stack ends.
#include "libprofile/base/stack_end.h"

namespace lcpi {

std::string StackEndName(uint8_t end) {
  switch (static_cast<StackEnd>(end)) {
    case StackEnd::kWalkEnded:
      return "walk ended";
    case StackEnd::kDepthCap:
      return "depth cap";
    case StackEnd::kKernelOnly:
      return "kernel only";
    case StackEnd::kNoUnwindTable:
      return "no unwind table";
    case StackEnd::kStackCopyShort:
      return "stack copy too short";
    case StackEnd::kJitCode:
      return "JIT code without frame information";
    case StackEnd::kUnwindFailed:
      return "unwind failed";
    case StackEnd::kNotUnwound:
      return "not unwound in time";
    case StackEnd::kBudget:
      return "unwind budget";
  }
  return "reason " + std::to_string(end);
}

}  // namespace lcpi
