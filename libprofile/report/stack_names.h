// stack_names.h - the stored call stacks of a report's epochs with each
// frame named as lcpiprof -p names its procedures (a symbol, or the
// "<image>+0x10" range of an offset no symbol covers): what --callers, the
// HTML page's flame graph and icicle, and lcpidiff --callers read.
#ifndef LCPI_LIBPROFILE_REPORT_STACK_NAMES_H
#define LCPI_LIBPROFILE_REPORT_STACK_NAMES_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "libprofile/report/report.h"

namespace lcpi::report {

// A frame's procedure: (name, image path).
using NamedFrame = std::pair<std::string, std::string>;

struct NamedStack {
  std::vector<NamedFrame> frames;  // innermost (the sampled procedure) first
  uint8_t end = 0;                 // why it has no more frames (base/stack_end.h)
  uint64_t count = 0;              // its samples in the epochs read
};

// The stacks of the header's epochs (QueryEpoch), named; each image's
// symbols loaded once. Warnings of images that cannot be read are added to
// *warnings, then those of StacksNotKept.
Expected<std::vector<NamedStack>> NamedStacks(ProfileDb& db, const Header& header,
                                              std::vector<std::string>* warnings);

// The stack samples the header's epochs took but did not keep, a warning
// per cause (over lcpid --max-stacks, dropped while the database refused
// merges, in a batch it refused, through an image it set aside): every
// view of stacks says them, since they are in none of its shares.
std::vector<std::string> StacksNotKept(const Header& header);

// "[stack end: depth cap]": the frame that says why a stack stopped.
std::string StackEndFrame(uint8_t end);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_STACK_NAMES_H
