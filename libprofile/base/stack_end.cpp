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
  }
  return "reason " + std::to_string(end);
}

}  // namespace lcpi
