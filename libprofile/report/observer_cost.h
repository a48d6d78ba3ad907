// observer_cost.h - what a profile cost the host that took it, as every
// report's header states it (issue #27): from the window_costs rows of the
// epochs read (ProfileDb::Cost), summed, so that over several windows each
// counts by its samples and its CPU time.
//
//   cost %   = (interrupt ns + lcpid's ns) / CPU time covered x 100
//   ± %      = the interrupt estimate's 95 % half-width, the same way
//   interrupt = ns one sample costs the code it interrupts (the calibration),
//               flat samples and call stacks alike (schema/009)
//   daemon    = lcpid's own threads' ns per flat sample (unwinding included)
//   rate      = flat samples / s / CPU; stacks the same for call stacks
#ifndef LCPI_LIBPROFILE_REPORT_OBSERVER_COST_H
#define LCPI_LIBPROFILE_REPORT_OBSERVER_COST_H

#include <optional>
#include <string>

#include "libprofile/store/profile_db.h"

namespace lcpi::report {

struct CostFigures {
  double percent = 0, ci95_percent = 0;  // of each CPU
  double interrupt_ns = 0;               // per sample
  double daemon_ns = 0;                  // per sample
  std::optional<double> module_ns;       // lcpi.ko's handler per sample, where it timed it
  double rate = 0;                       // samples/s/CPU
  double stack_rate = 0;                 // call stacks/s/CPU
};

// The figures of summed rows; nothing when there are none (a database or
// windows older than schema 7, or merged before lcpid's first calibration)
// or they cover no samples (flat or stacks) or no time.
std::optional<CostFigures> FiguresOf(const std::optional<WindowCost>& cost);

// The header's sentence: "lcpi cost 0.80 % ± 0.10 of CPU in this window
// (interrupt 16.0 µs/sample, daemon 900 ns/sample, 5000 samples/s/CPU)",
// with ", 100 stacks/s/CPU" where call stacks were taken,
// "... in these 3 windows ...", or "lcpi cost not measured (no estimate
// stored for these windows)".
std::string CostSentence(const std::optional<WindowCost>& cost, size_t windows);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_OBSERVER_COST_H
