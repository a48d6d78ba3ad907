// budget_status.h - the cost budget's lines of `lcpictl status`: the
// calibration's estimate of what one sample costs the sampled code, its
// 95 % interval and its own cost, and lcpid's own CPU per sample
// (docs/operators.md, "What a sample costs").
#ifndef LCPI_LIBPROFILE_BUDGET_BUDGET_STATUS_H
#define LCPI_LIBPROFILE_BUDGET_BUDGET_STATUS_H

#include <cstdint>
#include <ostream>
#include <string>

#include "libprofile/budget/calibrator.h"

namespace lcpi {

struct BudgetFigures {
  CalibratorState calibration;
  bool periodic = true;        // calibrations run on their own (else only on request)
  int64_t every_s = 0;         // how often, if periodic
  uint64_t daemon_cpu_ns = 0;  // lcpid's threads' CPU, the calibration's left out
  uint64_t samples = 0;        // samples taken since start
  // samples/s/CPU lcpid asks for (its first event), 0 where unknown in
  // time (a hardware event's period is in its own unit)
  double asked_rate = 0;
  // The cost budget (rate_governor.h): percent of each CPU (0: off), the
  // rate the current window samples at, the share over the budget status
  // leaves unflagged (the rise hysteresis, 10 %), how often it changed, and why the source refused
  // a change (kmod), if it did.
  double budget_pct = 0;
  double governed_rate = 0;
  double target_rate = 0;  // what the budget allows at the cost held (RateGovernor::target_rate)
  double hysteresis = 0;
  uint64_t governor_changes = 0;
  std::string governor_error;
  // What the governor holds to the budget (review finding 10): the
  // estimate it kept (interrupt) plus lcpid's own CPU per sample, whether
  // a second calibration confirmed it, the calibrations it refused (too
  // wide an interval) and those started to confirm one; and the
  // calibrations a change in the online CPUs started.
  double governor_cost_ns = 0, governor_interrupt_ns = 0, governor_daemon_ns = 0;
  double calibration_reserved_pct = 0;  // held back from the budget for calibrations
  double stacks_reserved_pct = 0;       // and for call stacks (stack_reserve.h)...
  double stacks_cost_pct = 0;           // ...what they cost (over it where capped)...
  double stacks_unwind_ns_per_s = 0;    // ...of which lcpid's unwinding, all CPUs'
  double governor_reserved_pct = 0;     // what the governor holds back in all
  bool estimate_confirmed = false;
  uint64_t calibrations_refused = 0, calibrations_confirming = 0;
  // refused calibrations pooled now, and pooled estimates offered since start
  uint64_t calibrations_pooled = 0, pooled_offers = 0;
  int calibration_later_tries = 0;  // since the estimate last settled (calibration_retry.h)
  uint64_t cpu_online_calibrations = 0;
  long cpus_online = 0;
  bool module_timed = false;  // lcpi.ko timed its handler (1 sample in 64)
  uint64_t module_handler_ns = 0, module_samples = 0;
};

void WriteBudgetStatus(std::ostream& o, const BudgetFigures& f);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_BUDGET_STATUS_H
