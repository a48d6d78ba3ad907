// calibration_retry.cpp - a few tries at once, then later and later.
#include "libprofile/budget/calibration_retry.h"

#include <algorithm>

namespace lcpi {

int64_t CalibrationRetry::Refused() {
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

}  // namespace lcpi
