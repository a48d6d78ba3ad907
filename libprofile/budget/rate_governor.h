// rate_governor.h - the rate lcpid samples at under a cost budget, moved
// smoothly (issue #27, part 2): Govern (governor.h) says what the budget
// allows; NextRate takes one bounded step toward it, at a window's end,
// and only when the step is larger than a hysteresis, so a cost estimate
// that wanders by a few percent between calibrations does not make the
// rate (and the period stored per window) swing from window to window.
#ifndef LCPI_LIBPROFILE_BUDGET_RATE_GOVERNOR_H
#define LCPI_LIBPROFILE_BUDGET_RATE_GOVERNOR_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "libprofile/base/error.h"
#include "libprofile/budget/governor.h"

namespace lcpi {

// The default budget: percent of each CPU (lcpid --max-overhead); 0, off,
// until every sum over windows of different periods weighs them (fleet
// reports do not yet; docs/operators.md).
constexpr double kDefaultMaxOverheadPct = 0;
// The lowest rate the governor goes to, samples/s/CPU: below it a profile
// of a window says too little to be worth its cost.
constexpr double kGovernorFloorRate = 100;

struct RateSteps {
  // A change smaller than this share of the rate in use is not made.
  double hysteresis = 0.10;
  // One step lowers the rate by at most this factor, and raises it by at
  // most that one: down quickly, to keep the budget (5,000/s reaches 500/s
  // in one window), up slowly, so that one low estimate of the cost does
  // not make the rate jump.
  double max_down = 10;
  double max_up = 2;
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

// A budget as an operator writes it (lcpictl budget PCT): a number of
// percent from 0 (off) to 100, nothing else on the line.
Expected<double> ParseBudgetPct(const std::string& text);

// lcpid's governor: the budget, the asked rate and periods, and the ones
// the current window samples at. The loop decides at a window's end
// (Decide), the drain thread applies the periods at the window's mark,
// and the loop records what was applied (Applied) or refused (Refused):
// every window is sampled at one period, the one stored with it.
class RateGovernor {
 public:
  // asked_rate: samples/s/CPU of asked_periods (one per event sampled).
  RateGovernor(double budget_pct, double asked_rate, std::vector<uint64_t> asked_periods,
               RateSteps steps = {});

  double budget_pct() const { return budget_pct_; }
  // A new budget (lcpictl budget): applied at the next window's end.
  void set_budget_pct(double pct) { budget_pct_ = pct; }
  double asked_rate() const { return asked_rate_; }
  double rate() const { return rate_; }  // the current window's
  const std::vector<uint64_t>& periods() const { return periods_; }
  const RateSteps& steps() const { return steps_; }
  // The last decision (its target: what the budget allows at the cost it used).
  const std::optional<RateDecision>& last() const { return last_; }
  uint64_t changes() const { return changes_; }
  const std::string& error() const { return error_; }  // the source's last refusal

  // The periods the next window should sample at, if they differ from the
  // current window's; cost_ns: the latest estimate (0: none).
  std::optional<std::vector<uint64_t>> Decide(double cost_ns);
  // Decide would change the rate (the loop then closes the window early).
  bool WouldChange(double cost_ns) const;
  // The source samples at `periods` from the mark on (they came from Decide).
  void Applied(const std::vector<uint64_t>& periods);
  // The source refused them: the current window keeps its periods.
  void Refused(std::string why) { error_ = std::move(why); }

 private:
  double budget_pct_;
  double asked_rate_;
  std::vector<uint64_t> asked_periods_;
  RateSteps steps_;
  double rate_;
  std::vector<uint64_t> periods_;
  std::optional<RateDecision> last_;
  double pending_rate_ = 0;  // Decide's, until Applied
  uint64_t changes_ = 0;
  std::string error_;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_RATE_GOVERNOR_H
