// governor_test.cpp - the rate a budget allows: kept when within it,
// lowered to budget / cost when not, held at the floor (and the excess
// said) when even that costs too much, untouched without an estimate.
#include "libprofile/budget/governor.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using lcpi::Govern;

TEST_CASE("a rate within the budget is kept, with what it costs") {
  // 1 us a sample at 5,000/s is 0.5 % of a CPU
  auto g = Govern(5000, 1, 1000);
  CHECK(g.rate == Approx(5000));
  CHECK(g.cost_pct == Approx(0.5));
  CHECK_FALSE(g.exceeded);
  CHECK(g.over_by_pct == 0);
}

TEST_CASE("a rate over the budget is lowered to budget / cost") {
  // 16 us a sample (this VM): 1 % of a CPU allows 625 samples/s
  auto g = Govern(5000, 1, 16000);
  CHECK(g.rate == Approx(625));
  CHECK(g.cost_pct == Approx(1));
  CHECK_FALSE(g.exceeded);
  // a bigger budget allows more, never more than asked
  CHECK(Govern(5000, 4, 16000).rate == Approx(2500));
  CHECK(Govern(5000, 50, 16000).rate == Approx(5000));
}

TEST_CASE("below the floor the floor is kept and the excess said") {
  // 100 us a sample: 1 % allows 100/s, 0.5 % would allow 50/s
  auto g = Govern(5000, 0.5, 100000);
  CHECK(g.rate == Approx(100));
  CHECK(g.cost_pct == Approx(1));
  CHECK(g.exceeded);
  CHECK(g.over_by_pct == Approx(0.5));
  // an asked rate under the floor is not raised to it
  auto low = Govern(50, 0.1, 100000);
  CHECK(low.rate == Approx(50));
  CHECK(low.exceeded);
  CHECK(low.over_by_pct == Approx(0.4));
}

TEST_CASE("without an estimate the asked rate stands") {
  for (double cost : {0.0, -5.0, std::numeric_limits<double>::quiet_NaN(),
                      std::numeric_limits<double>::infinity()}) {
    auto g = Govern(5000, 1, cost);
    CHECK(g.rate == Approx(5000));
    CHECK_FALSE(g.exceeded);
  }
}
