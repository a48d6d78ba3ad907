// calibration_retry.cpp - a few tries at once, then later and later.
#include "libprofile/budget/calibration_retry.h"

#include <algorithm>

namespace lcpi {

int64_t CalibrationRetry::Unsettled() {
  if (at_once_ < kAtOnce) {
    at_once_++;
    return 0;
  }
  if (every_s_ <= 0) return -1;
  // 10 s << 20 is 4 months: any --calibrate-every comes first
  const int64_t after = std::min(kFirstLaterS << std::min(later_, 20), every_s_);
  if (later_ < 1000000) later_++;  // a count for status, never wrapping
  return after;
}

CalibrationRetry::Next CalibrationRetry::AfterOffer(RateGovernor::Offered v, bool was_confirming,
                                                    bool wanted) {
  using Offered = RateGovernor::Offered;
  if (v == Offered::kRefused) {
    if (!wanted) return {};
    return {Unsettled(), was_confirming};
  }
  if (v == Offered::kAccepted && wanted) {
    // The first estimate of a step over x2: confirmed at once. A
    // confirmation that disagreed (now the estimate, unconfirmed) settled
    // nothing: tried again as a refused one is.
    return {was_confirming ? Unsettled() : 0, true};
  }
  Settled();  // confirmed, or needing no confirmation
  return {};
}

}  // namespace lcpi
