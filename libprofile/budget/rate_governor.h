// rate_governor.h - the rate lcpid samples at under a cost budget, moved
// smoothly (issue #27, part 2): Govern (governor.h) says what the budget
// allows; NextRate takes one bounded step toward it, at a window's end:
// down when the rate is over the budget by more than 2 %, up only past a
// 10 % hysteresis, so a cost estimate that wanders by a few percent between
// calibrations does not make the rate (and the period stored per window)
// swing from window to window: it follows the highest estimate down once,
// and stays.
#ifndef LCPI_LIBPROFILE_BUDGET_RATE_GOVERNOR_H
#define LCPI_LIBPROFILE_BUDGET_RATE_GOVERNOR_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "libprofile/base/error.h"
#include "libprofile/budget/governor.h"

namespace lcpi {

// The default budget: percent of each CPU (lcpid --max-overhead). Every
// sum over windows of different periods weighs them (local and fleet
// reports), and both sources change their periods while they sample.
constexpr double kDefaultMaxOverheadPct = 1;
// The lowest rate the governor goes to, samples/s/CPU: below it a profile
// of a window says too little to be worth its cost.
constexpr double kGovernorFloorRate = 100;

struct RateSteps {
  // A rise smaller than this share of the rate in use is not made, nor a
  // step down (the rate over the budget) smaller than down_dead_band.
  double hysteresis = 0.10;
  double down_dead_band = 0.02;
  // One step lowers the rate by at most this factor, and raises it by at
  // most that one: down quickly, to keep the budget (5,000/s reaches 500/s
  // in one window), up slowly, so that one low estimate of the cost does
  // not make the rate jump.
  double max_down = 10;
  double max_up = 2;
  // One calibration no other has confirmed lowers the rate by at most this
  // factor from the rate it found, however many windows follow: a noisy or
  // contended calibration cannot cut every user's rate by 50x for an hour.
  double unconfirmed_max_down = 2;
  // A calibration whose 95 % half-width is over this share of its slope
  // is refused (the previous estimate stays).
  double max_relative_half95 = 0.25;
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
  // The share of each CPU lcpid's periodic calibrations take (one's CPU
  // over --calibrate-every, per CPU): held back from the budget, so the
  // rate is governed to budget - reserved (never below the floor).
  void set_reserved_pct(double pct);
  double reserved_pct() const { return reserved_pct_; }
  double asked_rate() const { return asked_rate_; }
  double rate() const { return rate_; }  // the current window's
  // What the budget, less the reserves, allows now at the cost held: the
  // rate Decide's steps lead toward (held within their hysteresis, at
  // most 2x down while the estimate is unconfirmed). The asked rate with
  // no estimate or no budget; 0 where no rate is known in time.
  double target_rate() const;
  const std::vector<uint64_t>& periods() const { return periods_; }
  const RateSteps& steps() const { return steps_; }
  // The last decision (its target: what the budget allows at the cost it used).
  const std::optional<RateDecision>& last() const { return last_; }
  uint64_t changes() const { return changes_; }
  const std::string& error() const { return error_; }  // the source's last refusal

  // A new calibration of one sample's cost (slope and 95 % half-width, ns):
  // refused if its interval is too wide (RateSteps::max_relative_half95)
  // or its slope is no cost; confirmed if it agrees with the estimate in
  // use (the intervals overlap), else the new, unconfirmed estimate: the
  // rate goes at most x2 below the rate in use when the last confirmed
  // estimate was replaced (however many unconfirmed ones followed it).
  // While no confirmed estimate is held, calibrations refused for their
  // interval (a slope above zero, a half-width over 25 % of it) are pooled,
  // each a noisy measurement of the one cost: their mean, its 95 %
  // interval from their spread (Student's t on n - 1 degrees of freedom),
  // not from their own intervals, so that one out of line with the others
  // (a tight one near zero, which inverse-variance weights would let
  // decide) moves the mean by its share and widens the interval. Once the
  // pool's interval is narrow enough (3 at least), the pool is offered as
  // one calibration would be, and Offer returns what became of it.
  enum class Offered { kAccepted, kConfirmed, kRefused };
  Offered Offer(double slope_ns, double half95_ns);
  // Where no estimate was ever accepted and calibrations keep being refused
  // (a loaded host), the lower end of the refused ones' pooled interval,
  // taken as an unconfirmed estimate, and taken again as the pool grows:
  // the governor does not sample at the full asked rate for an hour, and
  // one wide interval reaching near zero no longer decides (run 32: the
  // last one's lower end, 778 ns of 9,464 +- 8,686). Its step is not held
  // to x2: a lower end overstates the rate the budget allows. False if an
  // accepted estimate is held, no refused one is pooled, the lower end is
  // no cost, or it is the one held.
  bool TakeLowerBound();
  // Pooled estimates offered since start, and the refused calibrations in
  // the pool now.
  uint64_t pooled() const { return pooled_; }
  uint64_t pool_size() const { return pool_.n; }
  // The pooled calibrations measured a machine that changed (CPUs came or
  // went): let go.
  void ForgetPool() { pool_ = {}; }
  // A cost per sample the operator measured (lcpid --sample-cost): held,
  // confirmed, and calibrations are no longer offered.
  void SetKnownCost(double ns);
  // lcpid's own CPU per sample (its threads' CPU over the samples of the
  // last window), shown beside the estimate and not governed: most of it
  // is work per window and per process (merges, lookups) that a lower rate
  // does not remove, so divided by fewer samples it grows as the rate
  // falls, and governing on it drove the rate to the floor (60 us a sample
  // at 148/s on a loaded 2-CPU host).
  void set_daemon_ns_per_sample(double ns);
  // What the governor compares with the budget: the estimate of the
  // sampling interrupt's cost (0: no estimate yet).
  double cost_ns() const;
  double interrupt_ns() const { return estimate_ns_; }
  double interrupt_half95_ns() const { return estimate_half95_ns_; }
  double daemon_ns_per_sample() const { return daemon_ns_; }
  bool confirmed() const { return confirmed_; }
  // The rate is held above the target by an unconfirmed estimate (a second
  // calibration would let it go further), or the estimate is only a refused
  // calibration's lower end (TakeLowerBound): lcpid calibrates again until
  // one is accepted.
  bool awaits_confirmation() const;
  uint64_t refused() const { return refused_; }

  // The periods the next window should sample at, if they differ from the
  // current window's, by cost_ns().
  std::optional<std::vector<uint64_t>> Decide();
  // Decide would change the rate (the loop then closes the window early).
  bool WouldChange() const;
  // Whether Decide would lower the rate: the current one is over what the
  // budget allows and a step is open (not held by an unconfirmed estimate).
  bool WouldStepDown() const;
  // The source samples at `periods` from the mark on (they came from Decide).
  void Applied(const std::vector<uint64_t>& periods);
  // The source refused them: the current window keeps its periods.
  void Refused(std::string why) { error_ = std::move(why); }

 private:
  double budget_pct_;
  double reserved_pct_ = 0;
  // What sampling may cost: the budget less the calibrations' share (0
  // stays 0, off; a budget all reserved leaves the floor).
  double SamplingBudgetPct() const;
  // The estimate held from now on, and the rate in use as it came.
  void Hold(double ns, double half95_ns, bool confirmed);
  double asked_rate_;
  std::vector<uint64_t> asked_periods_;
  RateSteps steps_;
  double rate_;
  std::vector<uint64_t> periods_;
  std::optional<RateDecision> last_;
  double pending_rate_ = 0;  // Decide's, until Applied
  uint64_t changes_ = 0;
  std::string error_;
  double estimate_ns_ = 0, estimate_half95_ns_ = 0;
  bool confirmed_ = false;
  bool lower_bound_ = false;  // the estimate is TakeLowerBound's
  // The refused calibrations since the last accepted one (Offer).
  struct Pool {
    double sum = 0, sum_squares = 0;  // of the slopes
    uint64_t n = 0;
    void Add(double slope_ns);
    double mean() const { return sum / static_cast<double>(n); }
    double half95() const;  // infinite below 2
  };
  Pool pool_;
  static constexpr uint64_t kMinPooled = 3;  // offered from this many on
  uint64_t pooled_ = 0;
  // Offer's verdict on an interval narrow enough: confirms the estimate
  // held, or replaces it, unconfirmed.
  Offered Judge(double slope_ns, double half95_ns);
  double estimate_rate_ = 0;  // the rate in use when the first unconfirmed estimate came
  double daemon_ns_ = 0;
  uint64_t refused_ = 0;

  // The steps for the next decision: an unconfirmed estimate's lower bound
  // on the rate folded into max_down.
  RateSteps StepsNow() const;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_RATE_GOVERNOR_H
