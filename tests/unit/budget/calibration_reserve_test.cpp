// calibration_reserve_test.cpp - what is held back for calibrating: one
// calibration's average over the interval on a quiet host, every
// calibration of the last interval where tries again came on top, back to
// the average once they are an interval old.
#include "libprofile/budget/calibration_reserve.h"

#include <catch2/catch.hpp>

using lcpi::CalibrationReserve;

namespace {

constexpr int64_t kS = 1'000'000'000;
constexpr uint64_t kCalibrationNs = 450'000'000;  // about one calibration's CPU here

}  // namespace

TEST_CASE("one calibration an interval: its CPU over the interval and the CPUs") {
  CalibrationReserve r(3600);
  CHECK(r.Pct(0, 2) == 0);  // none ran yet
  r.Add(10 * kS, kCalibrationNs);
  // 0.45 s of CPU an hour over 2 CPUs: 0.00625 % of each
  CHECK(r.Pct(10 * kS, 2) == Approx(100.0 * 0.45 / 3600 / 2));
  // an hour later it has aged out, and the next one is still held for
  CHECK(r.Pct(4000 * kS, 2) == Approx(100.0 * 0.45 / 3600 / 2));
}

TEST_CASE("tries again count while they are within the interval") {
  CalibrationReserve r(3600);
  // a noisy start: 1 refused, 3 at once, then 10 s, 20 s, 40 s later
  int64_t t = 0;
  for (int64_t after : {0, 1, 2, 3, 13, 33, 73}) {
    t = after * kS;
    r.Add(t, kCalibrationNs);
  }
  const double seven = 100.0 * 7 * 0.45 / 3600 / 2;
  CHECK(r.Pct(t, 2) == Approx(seven));
  // an hour after the first four, the three later ones still count
  CHECK(r.Pct(3604 * kS, 2) == Approx(100.0 * 3 * 0.45 / 3600 / 2));
  // all an interval old: back to one calibration's average
  CHECK(r.Pct(4000 * kS, 2) == Approx(100.0 * 0.45 / 3600 / 2));
}

TEST_CASE("several ended between two looks count as their CPU") {
  CalibrationReserve r(60);
  r.Add(kS, 3 * kCalibrationNs, 3);
  CHECK(r.Pct(kS, 1) == Approx(100.0 * 3 * 0.45 / 60));
  r.Add(2 * kS, 0, 0);  // none ended: nothing changes
  CHECK(r.Pct(2 * kS, 1) == Approx(100.0 * 3 * 0.45 / 60));
}

TEST_CASE("nothing is held back without periodic calibrations or CPUs") {
  CalibrationReserve off(0);
  off.Add(kS, kCalibrationNs);
  CHECK(off.Pct(kS, 2) == 0);
  CalibrationReserve r(3600);
  r.Add(kS, kCalibrationNs);
  CHECK(r.Pct(kS, 0) == 0);
}

TEST_CASE("what is remembered is bounded, and the average still holds") {
  CalibrationReserve r(3600);
  for (size_t i = 0; i < 10 * CalibrationReserve::kMaxRemembered; i++)
    r.Add(static_cast<int64_t>(i) * kS / 100, kCalibrationNs);
  const double most = 100.0 * CalibrationReserve::kMaxRemembered * 0.45 / 3600 / 2;
  CHECK(r.Pct(30 * kS, 2) == Approx(most));
}
