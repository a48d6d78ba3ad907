// callers.h - lcpiprof --callers SYM and --callees SYM: of the call stacks
// that pass through the procedure SYM (its frames named as -p names them),
// the share that goes through each immediate caller (the frame above SYM's)
// or each immediate callee (the frame below; "[self]" where SYM is the
// sampled procedure itself). A stack is counted once per caller however
// often SYM recurs in it.
#ifndef LCPI_LIBPROFILE_REPORT_CALLERS_H
#define LCPI_LIBPROFILE_REPORT_CALLERS_H

#include <cstdint>
#include <string>
#include <vector>

#include "libprofile/report/report.h"
#include "libprofile/report/table.h"

namespace lcpi::report {

struct CallersOptions {
  std::string epoch;  // as ProfOptions::epoch
  TimeRange range;
  std::string symbol;    // the procedure's name as -p shows it
  bool callees = false;  // --callees instead of --callers
  size_t top = 0;        // at most this many rows; 0: all
};

struct CallerRow {
  std::string name;    // a procedure, "[self]", or "[stack end: REASON]"
  std::string image;   // its image's path ("" for the bracketed rows)
  uint64_t count = 0;  // stack samples through SYM and this caller (callee)
};

struct Callers {
  Header header;
  std::string symbol;
  bool callees = false;
  uint64_t stack_samples = 0;   // every stack sample of the epochs
  uint64_t through = 0;         // those that pass through the symbol
  std::vector<CallerRow> rows;  // by count, descending
  size_t omitted = 0;           // cut by --top
  std::vector<std::string> warnings;
};

// kNotFound: no stack of the epochs names the symbol (the message says
// whether any stacks were stored at all).
Expected<Callers> BuildCallers(ProfileDb& db, const CallersOptions& options);
Document CallersDocument(const Callers& callers);
std::string RenderCallers(const Callers& callers, const RenderOptions& options);

// lcpidiff --callers SYM / --callees SYM: BuildCallers on A (options'
// epoch_a, range_a) and on B, each neighbour's share of the stack samples
// through SYM in each, sorted by the largest change (FinishDiff). A side
// whose stacks do not pass through SYM is an error naming the side.
Expected<Diff> BuildCallersDiff(ProfileDb& db_a, ProfileDb& db_b, const DiffOptions& options);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_CALLERS_H
