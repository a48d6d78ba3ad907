// rate_governor.cpp - one bounded step toward the budget's rate, past a hysteresis.
#include "libprofile/budget/rate_governor.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "libprofile/budget/slope_fit.h"

namespace lcpi {

RateDecision NextRate(double in_use, double asked, double budget_pct, double cost_ns,
                      const RateSteps& steps) {
  RateDecision d;
  if (!(in_use > 0)) in_use = asked;
  if (budget_pct > 0) {
    d.target = Govern(asked, budget_pct, cost_ns, steps.floor);
  } else {
    d.target.rate = asked;  // off: what was asked, whatever it costs
    if (std::isfinite(cost_ns) && cost_ns > 0) d.target.cost_pct = cost_ns * asked / 1e7;
  }
  const double low = std::min(asked, steps.floor);
  double next = std::clamp(d.target.rate, in_use / steps.max_down, in_use * steps.max_up);
  next = std::clamp(next, low, asked);
  // Back to the asked rate exactly when the budget allows it: no rate a few
  // percent under it is kept for ever by the hysteresis.
  const bool to_asked = next == asked && in_use != asked;
  // A rise waits for the hysteresis; a rate over the budget steps down past
  // a small dead band only (held within 10 % of its target, it was up to
  // 11 % over the budget, and status said the budget exceeded; with none, a
  // budget that allows about the asked rate flipped 5,000 -> 4,990 -> 5,000).
  const bool small = next > in_use ? next - in_use <= steps.hysteresis * in_use
                                   : in_use - next <= steps.down_dead_band * in_use;
  if (!to_asked && small) next = in_use;
  d.rate = next;
  d.changed = next != in_use;
  return d;
}

std::vector<uint64_t> PeriodsForRate(const std::vector<uint64_t>& asked_periods, double asked_rate,
                                     double rate) {
  std::vector<uint64_t> out;
  out.reserve(asked_periods.size());
  const double stretch = rate > 0 && asked_rate > rate ? asked_rate / rate : 1;
  for (uint64_t p : asked_periods)
    out.push_back(std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(p * stretch))));
  return out;
}

Expected<double> ParseBudgetPct(const std::string& text) {
  const std::string why = "a budget is a percent of each CPU from 0 (off) to 100, e.g. 1 or 0.5";
  if (text.empty() || text.size() > 32) return Error(Errc::kInvalidArgument, why);
  // strtod alone takes "inf", "nan", hex and leading blanks: digits and one point only
  if (text.find_first_not_of("0123456789.") != std::string::npos)
    return Error(Errc::kInvalidArgument, why + ", not '" + text + "'");
  char* end = nullptr;
  const double pct = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(pct) || pct < 0 || pct > 100)
    return Error(Errc::kInvalidArgument, why + ", not '" + text + "'");
  return pct;
}

RateGovernor::RateGovernor(double budget_pct, double asked_rate,
                           std::vector<uint64_t> asked_periods, RateSteps steps)
    : budget_pct_(budget_pct),
      asked_rate_(asked_rate),
      asked_periods_(std::move(asked_periods)),
      steps_(steps),
      rate_(asked_rate),
      periods_(asked_periods_) {}

void RateGovernor::Pool::Add(double slope_ns) {
  sum += slope_ns;
  sum_squares += slope_ns * slope_ns;
  n++;
}

double RateGovernor::Pool::half95() const {
  if (n < 2) return std::numeric_limits<double>::infinity();
  const double k = static_cast<double>(n);
  const double variance = std::max(sum_squares - sum * sum / k, 0.0) / (k - 1);
  return T95(static_cast<int>(std::min<uint64_t>(n - 1, 1000))) * std::sqrt(variance / k);
}

RateGovernor::Offered RateGovernor::Offer(double slope_ns, double half95_ns) {
  const bool measured = std::isfinite(slope_ns) && std::isfinite(half95_ns) && half95_ns >= 0;
  if (!measured || !(slope_ns > 0) || half95_ns > steps_.max_relative_half95 * slope_ns) {
    refused_++;
    // a noisy measurement still, pooled while nothing confirmed is held (a
    // slope at or below zero measured nothing)
    if (measured && !confirmed_ && slope_ns > 0) pool_.Add(slope_ns);
    if (pool_.n < kMinPooled || !(pool_.mean() > 0) ||
        pool_.half95() > steps_.max_relative_half95 * pool_.mean())
      return Offered::kRefused;
    slope_ns = pool_.mean();
    half95_ns = pool_.half95();
    pooled_++;
  }
  pool_ = {};
  return Judge(slope_ns, half95_ns);
}

RateGovernor::Offered RateGovernor::Judge(double slope_ns, double half95_ns) {
  // A lower bound's interval is a refused one's, wide: anything would agree
  // with it, and one calibration would pass for two.
  const bool agrees = !lower_bound_ && estimate_ns_ > 0 &&
                      std::fabs(slope_ns - estimate_ns_) <= half95_ns + estimate_half95_ns_;
  if (agrees) {
    // confirmed: the first one's rate stays the one its step is bounded from
    estimate_ns_ = slope_ns;
    estimate_half95_ns_ = half95_ns;
    confirmed_ = true;
    return Offered::kConfirmed;
  }
  // One unconfirmed estimate replacing another (a loaded host, no two
  // agreeing) keeps the base of the x2 bound: each re-based on the rate in
  // use would lower it x2 a calibration (5,000/s to 156 in five).
  const bool rebase = confirmed_ || estimate_ns_ <= 0;
  const double base = estimate_rate_;
  Hold(slope_ns, half95_ns, false);
  if (!rebase) estimate_rate_ = base;
  return Offered::kAccepted;
}

void RateGovernor::Hold(double ns, double half95_ns, bool confirmed) {
  lower_bound_ = false;
  estimate_ns_ = ns;
  estimate_half95_ns_ = half95_ns;
  confirmed_ = confirmed;
  estimate_rate_ = rate_;
}

void RateGovernor::SetKnownCost(double ns) {
  if (std::isfinite(ns) && ns > 0) Hold(ns, 0, true);
}

void RateGovernor::set_reserved_pct(double pct) {
  reserved_pct_ = std::isfinite(pct) && pct > 0 ? pct : 0;
}

double RateGovernor::SamplingBudgetPct() const {
  if (!(budget_pct_ > 0)) return 0;
  // a tiny positive budget, not 0: 0 would mean off, the asked rate
  return std::max(budget_pct_ - reserved_pct_, 1e-9);
}

bool RateGovernor::TakeLowerBound() {
  if ((estimate_ns_ > 0 && !lower_bound_) || pool_.n == 0) return false;
  const double low = pool_.mean() - pool_.half95();
  if (!std::isfinite(low) || !(low > 0) || (lower_bound_ && low == estimate_ns_)) return false;
  Hold(low, pool_.half95(), false);
  lower_bound_ = true;
  return true;
}

void RateGovernor::set_daemon_ns_per_sample(double ns) {
  daemon_ns_ = std::isfinite(ns) && ns > 0 ? ns : 0;
}

double RateGovernor::cost_ns() const { return estimate_ns_; }

RateSteps RateGovernor::StepsNow() const {
  RateSteps s = steps_;
  if (!confirmed_ && !lower_bound_ && estimate_ns_ > 0 && rate_ > 0) {
    // no lower than estimate_rate_ / unconfirmed_max_down: from rate_, a
    // step down of at most rate_ / that
    const double lowest = estimate_rate_ / steps_.unconfirmed_max_down;
    s.max_down = std::clamp(rate_ / lowest, 1.0, steps_.max_down);
  }
  return s;
}

bool RateGovernor::awaits_confirmation() const {
  if (confirmed_ || estimate_ns_ <= 0 || budget_pct_ <= 0) return false;
  // a refused calibration's lower end is no measurement, whatever rate it
  // allows (it may allow the asked one: 778 ns of 9,464 +- 8,686)
  if (lower_bound_) return true;
  return target_rate() < estimate_rate_ / steps_.unconfirmed_max_down;
}

double RateGovernor::target_rate() const {
  if (!(asked_rate_ > 0)) return 0;
  return NextRate(rate_, asked_rate_, SamplingBudgetPct(), cost_ns(), steps_).target.rate;
}

std::optional<std::vector<uint64_t>> RateGovernor::Decide() {
  if (!(asked_rate_ > 0)) return std::nullopt;  // no rate known in time: nothing to govern
  last_ = NextRate(rate_, asked_rate_, SamplingBudgetPct(), cost_ns(), StepsNow());
  if (!last_->changed) return std::nullopt;
  pending_rate_ = last_->rate;
  std::vector<uint64_t> p = PeriodsForRate(asked_periods_, asked_rate_, last_->rate);
  if (p == periods_) return std::nullopt;
  return p;
}

bool RateGovernor::WouldChange() const {
  return asked_rate_ > 0 &&
         NextRate(rate_, asked_rate_, SamplingBudgetPct(), cost_ns(), StepsNow()).changed;
}

bool RateGovernor::WouldStepDown() const {
  return asked_rate_ > 0 &&
         NextRate(rate_, asked_rate_, SamplingBudgetPct(), cost_ns(), StepsNow()).rate < rate_;
}

void RateGovernor::Applied(const std::vector<uint64_t>& periods) {
  periods_ = periods;
  rate_ = pending_rate_ > 0 ? pending_rate_ : rate_;
  pending_rate_ = 0;
  changes_++;
  error_.clear();
}

}  // namespace lcpi
