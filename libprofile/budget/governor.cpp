// governor.cpp - min(asked, budget / cost), held at the floor.
#include "libprofile/budget/governor.h"

#include <algorithm>
#include <cmath>

namespace lcpi {

GovernedRate Govern(double asked, double budget_pct, double cost_ns, double floor) {
  GovernedRate g;
  if (!std::isfinite(cost_ns) || cost_ns <= 0) {
    g.rate = asked;
    return g;
  }
  // cost_ns x rate / 1e9 is the share of a CPU; x 100, percent
  auto pct = [cost_ns](double rate) { return cost_ns * rate / 1e7; };
  const double allowed = budget_pct * 1e7 / cost_ns;
  g.rate = std::min(asked, std::max(allowed, std::min(asked, floor)));
  g.cost_pct = pct(g.rate);
  g.exceeded = g.cost_pct > budget_pct * (1 + 1e-9);
  if (g.exceeded) g.over_by_pct = g.cost_pct - budget_pct;
  return g;
}

}  // namespace lcpi
