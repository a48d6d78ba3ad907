// calibration_retry_test.cpp - when lcpid calibrates again after refusals.
#include "libprofile/budget/calibration_retry.h"

#include <catch2/catch.hpp>

using lcpi::CalibrationRetry;

TEST_CASE("refused calibrations are tried again at once three times, then later and later") {
  CalibrationRetry r(3600);
  CHECK(r.Refused() == 0);
  CHECK(r.Refused() == 0);
  CHECK(r.Refused() == 0);
  CHECK(r.Refused() == 10);
  CHECK(r.Refused() == 20);
  CHECK(r.Refused() == 40);
  CHECK(r.later_tries() == 3);
  // never later than the periodic calibration, however many in a row
  for (int i = 0; i < 100; ++i) CHECK(r.Refused() <= 3600);
  CHECK(r.Refused() == 3600);
}

TEST_CASE("an accepted calibration starts the tries afresh") {
  CalibrationRetry r(3600);
  for (int i = 0; i < 5; ++i) r.Refused();
  r.Accepted();
  CHECK(r.later_tries() == 0);
  CHECK(r.Refused() == 0);
  for (int i = 0; i < 2; ++i) r.Refused();
  CHECK(r.Refused() == 10);
}

TEST_CASE("with calibrations only on request, no later try is scheduled") {
  CalibrationRetry r(0);
  for (int i = 0; i < 3; ++i) CHECK(r.Refused() == 0);
  CHECK(r.Refused() == -1);
  CHECK(r.Refused() == -1);
}

TEST_CASE("a short --calibrate-every caps the first later try too") {
  CalibrationRetry r(60);
  for (int i = 0; i < 3; ++i) r.Refused();
  CHECK(r.Refused() == 10);
  CHECK(r.Refused() == 20);
  CHECK(r.Refused() == 40);
  CHECK(r.Refused() == 60);
  CHECK(r.Refused() == 60);
}
