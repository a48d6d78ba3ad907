// rate_governor_test.cpp - the governed rate moves smoothly: toward what
// the budget allows by bounded steps, not at all for a rise under the
// hysteresis nor a step down under its dead band, never below the floor nor above the asked rate,
// back to the asked rate when the budget is off; and the periods that give a rate.
#include "libprofile/budget/rate_governor.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

using lcpi::NextRate;
using lcpi::PeriodsForRate;
using lcpi::RateSteps;

TEST_CASE("a rate over the budget is lowered at once when one step reaches the target") {
  // 7.8 us a sample (this VM): 1 % allows ~1,282/s; from 5,000/s, a step down of at most x10
  auto d = NextRate(5000, 5000, 1, 7800);
  CHECK(d.changed);
  CHECK(d.rate == Approx(1e7 / 7800));
  CHECK(d.target.rate == Approx(1e7 / 7800));
  CHECK_FALSE(d.target.exceeded);
  // no rate in use yet: the asked one is
  CHECK(NextRate(0, 5000, 1, 7800).rate == Approx(1e7 / 7800));
}

TEST_CASE("a large change is made in bounded steps, one per window") {
  // 400 us a sample: 1 % allows 25/s, the floor is 100: 5,000 -> 500 -> 100
  double rate = 5000;
  std::vector<double> seen;
  for (int window = 0; window < 4; ++window) {
    auto d = NextRate(rate, 5000, 1, 400000);
    seen.push_back(d.rate);
    rate = d.rate;
  }
  REQUIRE(seen.size() == 4);
  CHECK(seen[0] == Approx(500));
  CHECK(seen[1] == Approx(100));
  CHECK(seen[2] == Approx(100));  // there: no more changes
  CHECK(seen[3] == Approx(100));
  // up again more slowly (x2 a window) when the budget grows
  auto up = NextRate(200, 5000, 100, 50000);
  CHECK(up.rate == Approx(400));
  up = NextRate(up.rate, 5000, 100, 50000);
  CHECK(up.rate == Approx(800));
}

TEST_CASE("a rise under the hysteresis is not made: no oscillation between windows") {
  // The estimate wanders 7.8 -> 8.2 -> 7.6 us, each under 10 % of the rate
  // in use: the rate follows it down once (over the budget it steps
  // however little), and not back up
  double rate = NextRate(5000, 5000, 1, 7800).rate;
  auto down = NextRate(rate, 5000, 1, 8200);
  CHECK(down.changed);
  CHECK(down.rate == Approx(1e7 / 8200));
  rate = down.rate;
  for (double cost : {7600.0, 8000.0, 7700.0, 8200.0}) {
    auto d = NextRate(rate, 5000, 1, cost);
    CHECK_FALSE(d.changed);
    CHECK(d.rate == down.rate);
    rate = d.rate;
  }
  // a real change (the cost doubled) is made
  auto d = NextRate(rate, 5000, 1, 16000);
  CHECK(d.changed);
  CHECK(d.rate == Approx(625));
}

TEST_CASE("never below the floor: the budget is then said to be exceeded") {
  // 1 ms a sample: 1 % allows 10/s, the floor is 100/s (10 % of a CPU)
  double rate = 5000;
  for (int i = 0; i < 8; ++i) rate = NextRate(rate, 5000, 1, 1e6).rate;
  CHECK(rate == Approx(100));
  auto d = NextRate(rate, 5000, 1, 1e6);
  CHECK_FALSE(d.changed);
  CHECK(d.target.exceeded);
  CHECK(d.target.over_by_pct == Approx(9));
  // a custom floor is kept too
  RateSteps s;
  s.floor = 500;
  CHECK(NextRate(600, 5000, 1, 1e6, s).rate == Approx(500));
  // an asked rate under the floor is never raised
  CHECK(NextRate(50, 50, 1, 1e6).rate == Approx(50));
}

TEST_CASE("off (budget 0) or no estimate: back to the asked rate, by the same steps") {
  CHECK(NextRate(1000, 5000, 0, 7800).rate == Approx(2000));
  CHECK(NextRate(3000, 5000, 0, 7800).rate == Approx(5000));
  // within the hysteresis of the asked rate: back to it exactly
  auto d = NextRate(4800, 5000, 1, 100);
  CHECK(d.changed);
  CHECK(d.rate == 5000);
  CHECK(NextRate(5000, 5000, 1, 0).rate == 5000);  // no estimate yet
  CHECK_FALSE(NextRate(5000, 5000, 1, 0).changed);
}

TEST_CASE("the periods for a rate stretch each event's asked period alike") {
  const std::vector<uint64_t> asked{200000, 400000};  // cpu-clock ns, cycles
  auto p = PeriodsForRate(asked, 5000, 1250);
  CHECK(p == std::vector<uint64_t>{800000, 1600000});
  CHECK(PeriodsForRate(asked, 5000, 5000) == asked);
  CHECK(PeriodsForRate(asked, 5000, 10000) == asked);  // never shorter than asked
  CHECK(PeriodsForRate({1}, 5000, 0) == std::vector<uint64_t>{1});
}

// Review finding 10: the governor acts on a trustworthy estimate; lcpid's
// own CPU per sample is shown beside it.
using lcpi::RateGovernor;

TEST_CASE("a calibration whose interval is over 25 % of its slope is refused and counted") {
  RateGovernor g(1, 5000, {200000});
  CHECK(g.Offer(7800, 500) != RateGovernor::Offered::kRefused);
  // a contended calibration CPU: 40 us +- 20 us
  CHECK(g.Offer(40000, 20000) == RateGovernor::Offered::kRefused);
  CHECK(g.refused() == 1);
  CHECK(g.cost_ns() == Approx(7800));  // the previous estimate is kept
  // nor is a slope that is not a cost at all
  CHECK(g.Offer(-100, 10) == RateGovernor::Offered::kRefused);
  CHECK(g.Offer(0, 0) == RateGovernor::Offered::kRefused);
  CHECK(g.refused() == 3);
  CHECK(g.cost_ns() == Approx(7800));
}

TEST_CASE(
    "one unconfirmed calibration lowers the rate by at most x2, one that agrees confirms it") {
  RateGovernor g(1, 5000, {200000});
  // 40 us a sample: 1 % allows 250/s, ten times under what is asked
  CHECK(g.Offer(40000, 2000) == RateGovernor::Offered::kAccepted);
  CHECK_FALSE(g.confirmed());
  auto p = g.Decide();
  REQUIRE(p);
  g.Applied(*p);
  CHECK(g.rate() == Approx(2500));
  CHECK(g.awaits_confirmation());
  // later windows on the same calibration go no further
  CHECK_FALSE(g.Decide());
  CHECK(g.rate() == Approx(2500));
  // a second calibration that agrees (the intervals overlap) confirms it
  CHECK(g.Offer(41000, 2000) == RateGovernor::Offered::kConfirmed);
  CHECK(g.confirmed());
  CHECK_FALSE(g.awaits_confirmation());
  p = g.Decide();
  REQUIRE(p);
  g.Applied(*p);
  CHECK(g.rate() == Approx(std::max(2500.0 / 10, 1e7 / 41000)));  // x10 at most once confirmed
  // one that disagrees is a new, unconfirmed estimate: x2 at most again
  CHECK(g.Offer(200000, 10000) == RateGovernor::Offered::kAccepted);
  const double before = g.rate();
  p = g.Decide();
  REQUIRE(p);
  g.Applied(*p);
  CHECK(g.rate() == Approx(std::max(100.0, before / 2)));
}

TEST_CASE("lcpid's own CPU per sample is shown beside the estimate, not governed") {
  RateGovernor g(1, 5000, {200000});
  REQUIRE(g.Offer(7800, 500) == RateGovernor::Offered::kAccepted);
  REQUIRE(g.Offer(7900, 500) == RateGovernor::Offered::kConfirmed);
  // at a low rate lcpid's work per window, divided by few samples, is many
  // times a sample's cost: it must not push the rate to the floor
  g.set_daemon_ns_per_sample(60000);
  CHECK(g.daemon_ns_per_sample() == Approx(60000));
  CHECK(g.cost_ns() == Approx(7900));
  auto p = g.Decide();
  REQUIRE(p);
  g.Applied(*p);
  // 1 % of a CPU at 7.9 us a sample: ~1,266/s
  CHECK(g.rate() == Approx(1e7 / 7900).epsilon(0.01));
  // nonsense (no samples yet: 0/0) counts as nothing
  g.set_daemon_ns_per_sample(std::nan(""));
  CHECK(g.daemon_ns_per_sample() == 0);
}

TEST_CASE("with no estimate, the refused calibrations' lower end is taken, unconfirmed") {
  RateGovernor g(1, 5000, {200000});
  // 40 us +- 20 us: refused, and nothing to govern by
  CHECK(g.Offer(40000, 20000) == RateGovernor::Offered::kRefused);
  CHECK(g.cost_ns() == 0);
  CHECK_FALSE(g.Decide());
  CHECK_FALSE(g.TakeLowerBound());  // one has no spread to take an interval from
  // 40, 30 and 50 us: 40 +- 24.8 (Student's t on 2 degrees of freedom)
  CHECK(g.Offer(30000, 15000) == RateGovernor::Offered::kRefused);
  CHECK(g.Offer(50000, 25000) == RateGovernor::Offered::kRefused);
  CHECK(g.TakeLowerBound());
  CHECK(g.cost_ns() == Approx(15157).epsilon(0.001));
  CHECK_FALSE(g.confirmed());
  auto p = g.Decide();
  REQUIRE(p);
  g.Applied(*p);
  // the whole step: a lower end of the cost overstates the rate the budget
  // allows (1 % at 15.2 us: 660/s), so no step to it goes too far
  CHECK(g.rate() == Approx(660).epsilon(0.01));
  // never over an accepted estimate, nor from an interval reaching zero
  REQUIRE(g.Offer(90000, 1000) == RateGovernor::Offered::kAccepted);
  CHECK(g.Offer(80000, 30000) == RateGovernor::Offered::kRefused);
  CHECK_FALSE(g.TakeLowerBound());
  CHECK(g.cost_ns() == Approx(90000));
  RateGovernor h(1, 5000, {200000});
  for (double slope : {1000, 200, 3000})
    CHECK(h.Offer(slope, 1500) == RateGovernor::Offered::kRefused);
  CHECK_FALSE(h.TakeLowerBound());  // 1,400 +- 3,500
  CHECK(h.cost_ns() == 0);
}

// 2026-11-30, a quiet but noisy host: 15 calibrations in 2 minutes all
// refused (8,773 +- 3,078 ns, 7,352 +- 5,054, 8,891 +- 8,125, 4,631 +-
// 11,079, 9,048 +- 8,006 first); the last one's lower end, 1,042 ns, let
// the asked 5,000/s through at about 4 % of a 1 % budget for 2 minutes.
TEST_CASE(
    "refused calibrations are pooled: the lower end follows them, and a narrow pool is "
    "offered") {
  RateGovernor g(1, 5000, {200000});
  const std::vector<std::pair<double, double>> refused = {
      {8773, 3078}, {7352, 5054}, {8891, 8125}, {4631, 11079}, {9048, 8006}};
  for (auto [slope, half95] : refused)
    REQUIRE(g.Offer(slope, half95) == RateGovernor::Offered::kRefused);
  CHECK(g.pool_size() == 5);
  REQUIRE(g.TakeLowerBound());
  // their mean, 7,739 ns, less its half-width, 2,316: 5,423 ns, not the
  // last one's 1,042
  CHECK(g.cost_ns() == Approx(5423).epsilon(0.001));
  CHECK(g.awaits_confirmation());
  auto p = g.Decide();
  REQUIRE(p);
  g.Applied(*p);
  CHECK(g.rate() == Approx(1e7 / g.cost_ns()).epsilon(0.01));  // 1,844/s, not 5,000
  // one more refused, 9,000 +- 3,000: the pool's interval is 1,833 of
  // 7,949 ns, within 25 %, and offered as one calibration
  CHECK(g.Offer(9000, 3000) == RateGovernor::Offered::kAccepted);
  CHECK(g.pooled() == 1);
  CHECK(g.pool_size() == 0);
  CHECK(g.cost_ns() == Approx(7949).epsilon(0.001));
  CHECK_FALSE(g.confirmed());
  // a second pool that agrees (8,600 +- 248) confirms it
  CHECK(g.Offer(8500, 2800) == RateGovernor::Offered::kRefused);
  CHECK(g.Offer(8600, 2800) == RateGovernor::Offered::kRefused);
  CHECK(g.Offer(8700, 2800) == RateGovernor::Offered::kConfirmed);
  CHECK(g.pooled() == 2);
  CHECK(g.confirmed());
  // confirmed, refused ones are not pooled: the estimate stands
  for (int i = 0; i < 10; i++) CHECK(g.Offer(4000, 2000) == RateGovernor::Offered::kRefused);
  CHECK(g.pool_size() == 0);
}

// A tight calibration near zero among the others (2026-11-30's review: a
// user loading the calibration CPU's sibling in its rate-0 units) would
// decide an inverse-variance pool; the pool's spread keeps it one of many.
TEST_CASE("one refused calibration out of line with the others does not decide the pool") {
  RateGovernor g(1, 5000, {200000});
  REQUIRE(g.Offer(300, 100) == RateGovernor::Offered::kRefused);
  int offers = 1;
  while (g.pooled() == 0 && offers < 40) g.Offer(offers++ % 2 ? 9000 : 7000, 3000);
  // the first pool offered, by its spread: near 7,750 after 30 or so (by
  // inverse variance about 600 ns)
  INFO(offers << " offers");
  CHECK(g.pooled() == 1);
  CHECK(g.cost_ns() > 7000);
  CHECK(g.cost_ns() < 8500);
}

// Run 32: on a loaded host every calibration was refused, and the lower end
// of the last one's interval (9,464 +- 8,686 ns: 778 ns) said the asked
// 5,000/s cost 0.39 %: the rate held nothing up, so lcpid wanted no other
// calibration and sampled at 3.7 % of a 1 % budget until the hourly one.
TEST_CASE("an estimate that is only the refused calibrations' lower end awaits an accepted one") {
  RateGovernor g(1, 5000, {200000});
  const std::vector<std::pair<double, double>> refused = {{9464, 8686}, {6000, 5000}, {8000, 6000}};
  for (auto [slope, half95] : refused)
    REQUIRE(g.Offer(slope, half95) == RateGovernor::Offered::kRefused);
  REQUIRE(g.TakeLowerBound());
  CHECK(g.cost_ns() == Approx(3501).epsilon(0.001));  // 7,821 +- 4,320
  CHECK(g.awaits_confirmation());
  // a refused one leaves it waiting; an accepted one replaces it, and then
  // waits only where its step is over x2, as any first estimate
  CHECK(g.Offer(2000, 6000) == RateGovernor::Offered::kRefused);
  CHECK(g.awaits_confirmation());
  REQUIRE(g.Offer(1000, 100) == RateGovernor::Offered::kAccepted);
  CHECK_FALSE(g.awaits_confirmation());
  // with the budget off, nothing is awaited
  RateGovernor off(0, 5000, {200000});
  for (double slope : {9464, 6000, 8000}) off.Offer(slope, slope);
  off.TakeLowerBound();
  CHECK_FALSE(off.awaits_confirmation());
}

TEST_CASE("the periodic calibrations' share of each CPU is held back from the budget") {
  RateGovernor g(1, 5000, {200000});
  REQUIRE(g.Offer(8000, 400) == RateGovernor::Offered::kAccepted);
  REQUIRE(g.Offer(8100, 400) == RateGovernor::Offered::kConfirmed);
  // one calibration of 0.45 s of CPU an hour on 2 CPUs: 0.00625 % each;
  // a large share here so that the step shows: 0.2 %
  g.set_reserved_pct(0.2);
  auto p = g.Decide();
  REQUIRE(p);
  g.Applied(*p);
  CHECK(g.rate() == Approx(0.8e7 / 8100).epsilon(0.01));
  // all of it reserved: the floor, not off
  g.set_reserved_pct(5);
  for (int i = 0; i < 3; i++)
    if (auto q = g.Decide()) g.Applied(*q);
  CHECK(g.rate() == Approx(100));
  // off stays off whatever is reserved
  RateGovernor off(0, 5000, {200000});
  REQUIRE(off.Offer(8000, 400) == RateGovernor::Offered::kAccepted);
  off.set_reserved_pct(0.2);
  CHECK_FALSE(off.Decide());
  // nonsense reserves nothing
  g.set_reserved_pct(std::nan(""));
  CHECK(g.reserved_pct() == 0);
}

TEST_CASE("the target is where the rate is headed: the budget at the cost held, reserves out") {
  RateGovernor g(1, 5000, {200000});
  CHECK(g.target_rate() == Approx(5000));  // no estimate: the asked rate
  REQUIRE(g.Offer(40000, 2000) == RateGovernor::Offered::kAccepted);
  REQUIRE(g.Offer(40000, 2000) == RateGovernor::Offered::kConfirmed);
  g.set_reserved_pct(0.2);
  // 40 us a sample in 0.8 %: 200/s, where one step from 5,000 reaches 500
  CHECK(g.target_rate() == Approx(200));
  auto p = g.Decide();
  REQUIRE(p);
  g.Applied(*p);
  CHECK(g.rate() == Approx(500));
  CHECK(g.target_rate() == Approx(200));
  // a refused calibration (status's rate_within_budget, the last
  // calibration's, is then its own) leaves the target where it was
  CHECK(g.Offer(4000, 3000) == RateGovernor::Offered::kRefused);
  CHECK(g.target_rate() == Approx(200));
  g.set_budget_pct(0);  // off: the asked rate
  CHECK(g.target_rate() == Approx(5000));
  RateGovernor unknown(1, 0, {200000});  // no rate known in time
  CHECK(unknown.target_rate() == 0);
}

TEST_CASE("a cost the operator gives is held at once, confirmed") {
  RateGovernor g(20, 5000, {200000});
  g.SetKnownCost(200000);  // an emulated CPU: 200 us a sample
  CHECK(g.confirmed());
  auto p = g.Decide();
  REQUIRE(p);
  g.Applied(*p);
  CHECK(g.rate() == Approx(1000));  // 20 % of a CPU at 200 us: x5, no confirmation waited for
  RateGovernor h(1, 5000, {200000});
  h.SetKnownCost(std::nan(""));
  h.SetKnownCost(-5);
  CHECK(h.cost_ns() == 0);
}

TEST_CASE("a step down under the dead band is not made: no flip at the asked rate") {
  // the budget allows 4,975/s (0.5 % under the asked 5,000): kept, not
  // 5,000 -> 4,975 -> 5,000 at each calibration
  auto d = NextRate(5000, 5000, 1, 2010);
  CHECK_FALSE(d.changed);
  CHECK(d.rate == 5000);
  // 3 % over: made
  d = NextRate(5000, 5000, 1, 2060);
  CHECK(d.changed);
  CHECK(d.rate == Approx(1e7 / 2060));
}

TEST_CASE("a step that leaves the rate over the budget says another is due") {
  // 46 us a sample (a loaded host's calibration): 1 % allows ~217/s, two
  // steps below 5,000/s at most x10 each
  RateGovernor g(1, 5000, {200000});
  g.SetKnownCost(46000);
  CHECK(g.WouldStepDown());
  auto p = g.Decide();
  REQUIRE(p);
  g.Applied(*p);
  CHECK(g.rate() == Approx(500));
  CHECK(g.WouldStepDown());  // lcpid ends the next window early for it
  p = g.Decide();
  REQUIRE(p);
  g.Applied(*p);
  CHECK(g.rate() == Approx(1e7 / 46000).epsilon(0.01));
  CHECK_FALSE(g.WouldStepDown());
  // under the budget a step up is due, but is no step down
  g.set_budget_pct(5);
  CHECK(g.WouldChange());
  CHECK_FALSE(g.WouldStepDown());
}

TEST_CASE(
    "disagreeing calibrations in a row lower the rate by x2 at most in all, until two agree") {
  // a loaded host: each calibration higher than the last, no two agreeing
  RateGovernor g(1, 5000, {200000});
  for (double ns : {30000.0, 47000.0, 55000.0, 62000.0, 70000.0}) {
    INFO(ns << " ns a sample");
    CHECK(g.Offer(ns, 1000) == RateGovernor::Offered::kAccepted);
    CHECK(g.awaits_confirmation());
    if (auto p = g.Decide()) g.Applied(*p);
    // the step's base stays the rate of the last confirmed estimate (here
    // the asked one): not 5,000 -> 2,500 -> 1,250 -> ... -> 156
    CHECK(g.rate() == Approx(2500));
  }
  // two that agree: confirmed, and the rate goes to what the budget allows
  CHECK(g.Offer(70500, 1000) == RateGovernor::Offered::kConfirmed);
  auto p = g.Decide();
  REQUIRE(p);
  g.Applied(*p);
  CHECK(g.rate() == Approx(std::max(250.0, 1e7 / 70500)));
}
