// rate_governor.h - the rate lcpid samples at under a cost budget, moved
// smoothly (issue #27, part 2): Govern (governor.h) says what the budget
// allows; NextRate takes one bounded step toward it, at a window's end,
// and only when the step is larger than a hysteresis, so a cost estimate
// that wanders by a few percent between calibrations does not make the
// rate (and the period stored per window) swing from window to window.
#ifndef LCPI_LIBPROFILE_BUDGET_RATE_GOVERNOR_H
#define LCPI_LIBPROFILE_BUDGET_RATE_GOVERNOR_H

#include <cstdint>
#include <vector>

#include "libprofile/budget/governor.h"

namespace lcpi {

// The default budget: percent of each CPU (lcpid --max-overhead).
constexpr double kDefaultMaxOverheadPct = 1;
// The lowest rate the governor goes to, samples/s/CPU: below it a profile
// of a window says too little to be worth its cost.
constexpr double kGovernorFloorRate = 100;

struct RateSteps {
  // A change smaller than this share of the rate in use is not made.
  double hysteresis = 0.10;
  // One step moves the rate by at most this factor, down or up.
  double max_step = 4;
  double floor = kGovernorFloorRate;
};

struct RateDecision {
  double rate = 0;       // samples/s/CPU from the next window on
  bool changed = false;  // differs from the rate in use
  GovernedRate target;   // what the budget allows, before smoothing
};

// in_use: the rate sampled at now (0: none yet, taken as asked); asked:
// the rate lcpid was asked for; budget_pct: 0 turns the governor off (the
// rate goes back to the asked one, by the same steps); cost_ns: one
// sample's cost (no estimate: the asked rate is the target). The result
// never exceeds asked nor goes below min(asked, floor).
RateDecision NextRate(double in_use, double asked, double budget_pct, double cost_ns,
                      const RateSteps& steps = {});

// The periods that sample at `rate` where `asked_periods` sample at
// `asked_rate`: each stretched by asked_rate / rate (at least 1).
std::vector<uint64_t> PeriodsForRate(const std::vector<uint64_t>& asked_periods, double asked_rate,
                                     double rate);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_RATE_GOVERNOR_H
