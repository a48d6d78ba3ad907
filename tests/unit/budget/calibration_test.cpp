// calibration_test.cpp - sizing the calibration's unit of work from its probe.
#include "libprofile/budget/calibration.h"

#include <catch2/catch.hpp>

using lcpi::UnitIterations;

TEST_CASE("a unit is sized from the probe's CPU time when the clocks agree") {
  // 1 M iterations in 3 ms: 25 ms is 8.33 M
  CHECK(UnitIterations(1'000'000, 3'000'000, 3'000'000, 25'000'000) == 8'333'333);
}

TEST_CASE("a thread CPU clock that did not advance over the probe does not size the unit") {
  // A QEMU TCG guest's thread CPU clock read 0 over 1 M iterations (3 ms of
  // wall time): sized from it, one unit was 2.5e13 iterations, a calibration
  // thread that spun for hours and kept lcpid from stopping (kmod.late-module).
  const uint64_t n = UnitIterations(1'000'000, 0, 3'000'000, 25'000'000);
  CHECK(n == 8'333'333);
}

TEST_CASE("a probe preempted for part of its length is sized by its CPU time") {
  // 3 ms on the CPU over 6 ms of wall time (another task took the rest):
  // the units are timed by CPU time, so sized by it, not cut in half
  CHECK(UnitIterations(1'000'000, 3'000'000, 6'000'000, 25'000'000) == 8'333'333);
  // a quarter of the wall time still counts as the CPU clock's
  CHECK(UnitIterations(1'000'000, 3'000'000, 12'000'000, 25'000'000) == 8'333'333);
}

TEST_CASE("a thread CPU clock far behind the wall time does not size the unit") {
  // under a quarter: a clock that loses time, or stood still for most of it
  CHECK(UnitIterations(1'000'000, 1'000'000, 6'000'000, 25'000'000) == 4'166'666);
}
