// rate_governor.cpp - one bounded step toward the budget's rate, past a hysteresis.
#include "libprofile/budget/rate_governor.h"

#include <algorithm>
#include <cmath>

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
  double next = std::clamp(d.target.rate, in_use / steps.max_step, in_use * steps.max_step);
  next = std::clamp(next, low, asked);
  // Back to the asked rate exactly when the budget allows it: no rate a few
  // percent under it is kept for ever by the hysteresis.
  const bool to_asked = next == asked && in_use != asked;
  if (!to_asked && std::fabs(next - in_use) <= steps.hysteresis * in_use) next = in_use;
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

}  // namespace lcpi
