// slope_fit_test.cpp - the calibration's line fits on synthetic data whose
// answer is known: exact lines, noisy lines whose interval must cover the
// true slope, the instrument undoing the 1/rate lean, and refusals.
#include "libprofile/budget/slope_fit.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

using lcpi::FitInstrumented;
using lcpi::FitLine;
using lcpi::T95;

TEST_CASE("Student's t critical values") {
  CHECK(T95(1) == Approx(12.706));
  CHECK(T95(10) == Approx(2.228));
  CHECK(T95(30) == Approx(2.042));
  CHECK(T95(50) == Approx(2.000));
  CHECK(T95(1000) == Approx(1.960));
  CHECK(std::isnan(T95(0)));
}

TEST_CASE("an exact line has its slope, intercept, no interval and R^2 1") {
  std::vector<double> xs{0, 1000, 2000, 3000, 4000}, ys;
  for (double x : xs) ys.push_back(5e7 + 16000 * x);  // 16 us a sample on a 50 ms loop
  auto f = FitLine(xs, ys);
  REQUIRE(f);
  CHECK(f->slope == Approx(16000));
  CHECK(f->intercept == Approx(5e7));
  CHECK(f->half95 == Approx(0).margin(1e-6));
  CHECK(f->r2 == Approx(1));
  CHECK(f->n == 5);
}

TEST_CASE("a noisy line's interval covers the true slope and narrows with more points") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 2e5);  // 0.2 ms of noise on each point
  auto fit_of = [&](int reps) {
    std::vector<double> xs, ys;
    for (int r = 0; r < reps; r++)
      for (double x : {0.0, 500.0, 1000.0}) {
        xs.push_back(x);
        ys.push_back(4e7 + 2000 * x + noise(rng));
      }
    return FitLine(xs, ys);
  };
  auto few = fit_of(3), many = fit_of(30);
  REQUIRE(few);
  REQUIRE(many);
  CHECK(std::abs(few->slope - 2000) <= few->half95);
  CHECK(std::abs(many->slope - 2000) <= many->half95);
  CHECK(many->half95 < few->half95);
  CHECK(few->half95 == Approx(T95(few->n - 2) * few->se));
  CHECK(many->r2 > 0.5);
  CHECK(many->r2 < 1);
}

TEST_CASE("the instrument finds the cost where least squares leans to 1/rate") {
  // The loop's own CPU time wanders (other jobs' load); samples are the rate
  // times it, so within one rate the points lie on a line through the origin
  // and least squares mixes that line into the slope. The rate does not wander.
  std::mt19937_64 rng(11);
  std::normal_distribution<double> wander(0, 0.1);
  const double cost = 1e-5;  // seconds of work lost per sample
  std::vector<double> xs, ys, zs;
  for (int r = 0; r < 40; r++)
    for (double rate : {0.0, 2500.0, 5000.0}) {
      double base = 0.05 * (1 + wander(rng));  // seconds of work, before sampling
      double t = base / (1 - cost * rate);     // with the samples' cost
      xs.push_back(rate * t);
      ys.push_back(t);
      zs.push_back(rate);
    }
  auto ols = FitLine(xs, ys), iv = FitInstrumented(xs, ys, zs);
  REQUIRE(ols);
  REQUIRE(iv);
  CHECK(std::abs(iv->slope - cost) <= iv->half95);
  CHECK(std::abs(iv->slope - cost) < std::abs(ols->slope - cost));
  CHECK(std::isfinite(iv->half95));
  CHECK(iv->half95 > 0);
}

TEST_CASE("no line without enough points or variation, or with non-finite values") {
  CHECK_FALSE(FitLine({1, 2}, {3, 4}));
  CHECK_FALSE(FitLine({1, 1, 1}, {3, 4, 5}));
  CHECK_FALSE(FitLine({1, 2, 3}, {3, 4}));
  CHECK_FALSE(FitLine({1, 2, std::numeric_limits<double>::quiet_NaN()}, {3, 4, 5}));
  CHECK_FALSE(FitLine({1, 2, 3}, {3, std::numeric_limits<double>::infinity(), 5}));
  CHECK_FALSE(FitInstrumented({1, 2, 3}, {3, 4, 5}, {7, 7, 7}));
  CHECK_FALSE(FitInstrumented({1, 2, 3}, {3, 4, 5}, {1, 2}));
}
