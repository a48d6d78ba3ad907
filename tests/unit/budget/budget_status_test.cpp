// budget_status_test.cpp - the budget's status lines: what counts against
// the budget (the flat rate's cost, the calibrations' share and what the
// stacks cost) and when it is exceeded: more than the hysteresis over it,
// or any excess at the floor; never with the budget off.
#include "libprofile/budget/budget_status.h"

#include <catch2/catch.hpp>

#include <map>
#include <sstream>
#include <string>

using lcpi::BudgetFigures;

namespace {

std::map<std::string, std::string> Lines(const BudgetFigures& f) {
  std::ostringstream o;
  lcpi::WriteBudgetStatus(o, f);
  std::map<std::string, std::string> out;
  std::istringstream in(o.str());
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.find(' ');
    out[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(space + 1);
  }
  return out;
}

// A 1 % budget, 8 us a sample, 1,000/s governed (0.8 %), 10 % hysteresis.
BudgetFigures Governed() {
  BudgetFigures f;
  f.asked_rate = 5000;
  f.budget_pct = 1;
  f.governed_rate = 1000;
  f.hysteresis = 0.10;
  f.governor_cost_ns = 8000;
  return f;
}

}  // namespace

TEST_CASE("within the budget: the flat rate, calibrations and stacks together") {
  BudgetFigures f = Governed();
  f.calibration_reserved_pct = 0.05;
  f.stacks_reserved_pct = f.stacks_cost_pct = 0.15;
  auto st = Lines(f);
  CHECK(std::stod(st["governed_cost_pct"]) == Approx(0.8));
  CHECK(std::stod(st["budget_cost_pct"]) == Approx(1.0));
  CHECK(st["budget_exceeded"] == "0");
  CHECK(st["stacks_reserved_pct"] == "0.15");
}

TEST_CASE("stacks costing more than their share exceed the budget, by what they cost") {
  BudgetFigures f = Governed();
  // the stacks' share capped at half the budget, their cost 0.9 %
  f.stacks_reserved_pct = 0.5;
  f.stacks_cost_pct = 0.9;
  f.governed_rate = 600;  // 0.48 %
  auto st = Lines(f);
  CHECK(std::stod(st["budget_cost_pct"]) == Approx(1.38));
  CHECK(st["budget_exceeded"] == "1");
  CHECK(std::stod(st["budget_exceeded_by_pct"]) == Approx(0.38));
}

TEST_CASE("within the hysteresis over the budget is not exceeded, but at the floor it is") {
  BudgetFigures f = Governed();
  f.stacks_cost_pct = f.stacks_reserved_pct = 0.25;  // 1.05 % in all: 5 % over
  CHECK(Lines(f)["budget_exceeded"] == "0");
  f.governed_rate = 100;  // at the floor: 0.08 % + 1.0 % of stacks
  f.stacks_cost_pct = 1.0;
  auto st = Lines(f);
  CHECK(st["budget_exceeded"] == "1");
  CHECK(std::stod(st["budget_exceeded_by_pct"]) == Approx(0.08));
}

TEST_CASE("with the budget off nothing is exceeded") {
  BudgetFigures f = Governed();
  f.budget_pct = 0;
  f.governed_rate = 5000;
  f.stacks_cost_pct = 3;
  auto st = Lines(f);
  CHECK(st["budget_exceeded"] == "0");
  CHECK(std::stod(st["budget_exceeded_by_pct"]) == 0);
}

TEST_CASE("the governor's target and its pool are shown beside the last calibration's rate") {
  BudgetFigures f = Governed();
  f.target_rate = 1250;
  f.calibrations_pooled = 2;
  f.pooled_offers = 1;
  auto l = Lines(f);
  CHECK(l["governor_target_per_cpu"] == "1250");
  CHECK(l["calibrations_pooled"] == "2");
  CHECK(l["pooled_offers"] == "1");
}
