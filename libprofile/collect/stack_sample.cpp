// stack_sample.cpp - the kernel's callchain array as a StackSample.
#include "libprofile/collect/stack_sample.h"

#include <linux/perf_event.h>

namespace lcpi {

void ParseCallchain(const uint64_t* ips, uint64_t nr, uint32_t max_depth, StackSample* out) {
  if (max_depth == 0 || max_depth > kMaxStackDepth) max_depth = kMaxStackDepth;
  out->pcs.clear();
  out->kernel_frames = 0;
  out->end = StackEnd::kWalkEnded;
  bool kernel = false, user = false;
  for (uint64_t i = 0; i < nr; i++) {
    uint64_t ip = ips[i];
    if (ip >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) {  // a context marker
      kernel = ip == static_cast<uint64_t>(PERF_CONTEXT_KERNEL) ||
               ip == static_cast<uint64_t>(PERF_CONTEXT_GUEST_KERNEL);
      user = !kernel;
      continue;
    }
    if (out->pcs.size() == max_depth) break;
    out->pcs.push_back(ip);
    // Kernel frames come first in a callchain; a marker-less chain is the
    // kernel's own (kernel threads).
    if (kernel || (!user && out->pcs.size() == out->kernel_frames + 1 && ip >> 63))
      out->kernel_frames = static_cast<uint32_t>(out->pcs.size());
  }
  if (out->pcs.size() == max_depth)
    out->end = StackEnd::kDepthCap;
  else if (!out->pcs.empty() && out->kernel_frames == out->pcs.size())
    out->end = StackEnd::kKernelOnly;
}

}  // namespace lcpi
