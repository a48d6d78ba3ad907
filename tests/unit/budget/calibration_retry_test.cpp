// calibration_retry_test.cpp - when lcpid calibrates again after refusals.
#include "libprofile/budget/calibration_retry.h"

#include <catch2/catch.hpp>

using lcpi::CalibrationRetry;

TEST_CASE(
    "calibrations that settle nothing are tried again at once three times, then later and later") {
  CalibrationRetry r(3600);
  CHECK(r.Unsettled() == 0);
  CHECK(r.Unsettled() == 0);
  CHECK(r.Unsettled() == 0);
  CHECK(r.Unsettled() == 10);
  CHECK(r.Unsettled() == 20);
  CHECK(r.Unsettled() == 40);
  CHECK(r.later_tries() == 3);
  // never later than the periodic calibration, however many in a row
  for (int i = 0; i < 100; ++i) CHECK(r.Unsettled() <= 3600);
  CHECK(r.Unsettled() == 3600);
}

TEST_CASE("a calibration that settles the estimate starts the tries afresh") {
  CalibrationRetry r(3600);
  for (int i = 0; i < 5; ++i) r.Unsettled();
  r.Settled();
  CHECK(r.later_tries() == 0);
  CHECK(r.Unsettled() == 0);
  for (int i = 0; i < 2; ++i) r.Unsettled();
  CHECK(r.Unsettled() == 10);
}

TEST_CASE("with calibrations only on request, no later try is scheduled") {
  CalibrationRetry r(0);
  for (int i = 0; i < 3; ++i) CHECK(r.Unsettled() == 0);
  CHECK(r.Unsettled() == -1);
  CHECK(r.Unsettled() == -1);
}

TEST_CASE("a short --calibrate-every caps the first later try too") {
  CalibrationRetry r(60);
  for (int i = 0; i < 3; ++i) r.Unsettled();
  CHECK(r.Unsettled() == 10);
  CHECK(r.Unsettled() == 20);
  CHECK(r.Unsettled() == 40);
  CHECK(r.Unsettled() == 60);
  CHECK(r.Unsettled() == 60);
}

TEST_CASE("a confirmation that disagrees is confirmed again, at once three times, then later") {
  using Offered = lcpi::RateGovernor::Offered;
  CalibrationRetry r(3600);
  // the first estimate of a step over x2: its confirmation at once
  CalibrationRetry::Next n = r.AfterOffer(Offered::kAccepted, false, true);
  CHECK(n.after_s == 0);
  CHECK(n.confirming);
  // it disagreed (a loaded host: 30 then 47 us a sample), and the new
  // estimate awaits its own: again, and not at once without end
  for (int i = 0; i < 3; ++i) {
    n = r.AfterOffer(Offered::kAccepted, true, true);
    CHECK(n.after_s == 0);
    CHECK(n.confirming);
  }
  n = r.AfterOffer(Offered::kAccepted, true, true);
  CHECK(n.after_s == 10);
  // the later try's estimate is confirmed at once, not counted as a try
  n = r.AfterOffer(Offered::kAccepted, false, true);
  CHECK(n.after_s == 0);
  n = r.AfterOffer(Offered::kAccepted, true, true);
  CHECK(n.after_s == 20);
  // confirmed: settled, and the next disagreement starts afresh
  n = r.AfterOffer(Offered::kConfirmed, true, false);
  CHECK(n.after_s == -1);
  CHECK(r.later_tries() == 0);
  CHECK(r.AfterOffer(Offered::kAccepted, true, true).after_s == 0);
}

TEST_CASE("a refused calibration is tried again only where the governor wants one") {
  using Offered = lcpi::RateGovernor::Offered;
  CalibrationRetry r(3600);
  CHECK(r.AfterOffer(Offered::kRefused, false, false).after_s == -1);
  CalibrationRetry::Next n = r.AfterOffer(Offered::kRefused, true, true);
  CHECK(n.after_s == 0);
  CHECK(n.confirming);  // still the confirmation of the estimate before
  for (int i = 0; i < 2; ++i) CHECK(r.AfterOffer(Offered::kRefused, true, true).after_s == 0);
  CHECK(r.AfterOffer(Offered::kRefused, true, true).after_s == 10);
  CHECK(r.later_tries() == 1);
  // an estimate that needs no confirmation settles it: the next starts afresh
  CHECK(r.AfterOffer(Offered::kAccepted, false, false).after_s == -1);
  CHECK(r.later_tries() == 0);
  CHECK(r.AfterOffer(Offered::kRefused, false, true).after_s == 0);
}
