// governor.h - the rate a cost budget allows (issue #27, part 2): samples
// per second per CPU = min(asked, budget / cost of one sample), never below
// a floor that keeps profiles useful; where even the floor costs more than
// the budget, the floor is kept and the excess said. The arithmetic only:
// RateGovernor (rate_governor.h) steps lcpid's rate toward it.
#ifndef LCPI_LIBPROFILE_BUDGET_GOVERNOR_H
#define LCPI_LIBPROFILE_BUDGET_GOVERNOR_H

namespace lcpi {

struct GovernedRate {
  double rate = 0;         // samples/s/CPU to sample at
  double cost_pct = 0;     // what that rate costs each CPU, percent
  bool exceeded = false;   // even the floor costs more than the budget
  double over_by_pct = 0;  // by how much (percentage points), if exceeded
};

// asked: samples/s/CPU asked for; budget_pct: share of each CPU (1 = 1 %);
// cost_ns: one sample's cost (calibration.h). A cost that is not a positive
// finite number (no estimate yet) leaves the asked rate; so does an asked
// rate under the floor that the budget allows.
GovernedRate Govern(double asked, double budget_pct, double cost_ns, double floor = 100);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_GOVERNOR_H
