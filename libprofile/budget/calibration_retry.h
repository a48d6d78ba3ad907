// calibration_retry.h - when lcpid calibrates again after a calibration
// that settled nothing: one the governor refused (rate_governor.h: an
// interval too wide to act on) while it has no estimate or awaits a
// confirmation, or a confirmation that disagreed with the estimate it was
// to confirm. A noisy moment must not hold the rate until the next hourly
// calibration, nor a host where calibrating cannot measure (an emulated
// CPU) calibrate without end. A few tries at once, then one 10 s later,
// 20 s, 40 s ... never later than the periodic calibration.
#ifndef LCPI_LIBPROFILE_BUDGET_CALIBRATION_RETRY_H
#define LCPI_LIBPROFILE_BUDGET_CALIBRATION_RETRY_H

#include <cstdint>

#include "libprofile/budget/rate_governor.h"

namespace lcpi {

class CalibrationRetry {
 public:
  static constexpr int kAtOnce = 3;            // tries at once after one that settled nothing
  static constexpr int64_t kFirstLaterS = 10;  // then 10 s, doubling

  // every_s: the periodic calibration's interval (--calibrate-every; 0:
  // only on request, and then no later try is scheduled).
  explicit CalibrationRetry(int64_t every_s) : every_s_(every_s) {}

  // A calibration settled nothing: seconds until the next try (0: at
  // once), or -1: none scheduled (only on request).
  int64_t Unsettled();
  // One settled the estimate: the next unsettled one starts afresh.
  void Settled() { at_once_ = 0, later_ = 0; }
  int later_tries() const { return later_; }

  // What follows a calibration the governor was offered (v), given whether
  // it was the confirmation of the one before and whether the governor
  // wants another (refused: it has no estimate or awaits a confirmation;
  // accepted: its estimate awaits one). after_s as Unsettled's, or -1 where
  // none is wanted; confirming: the next one confirms the estimate.
  struct Next {
    int64_t after_s = -1;
    bool confirming = false;
  };
  Next AfterOffer(RateGovernor::Offered v, bool was_confirming, bool wanted);

 private:
  int64_t every_s_;
  int at_once_ = 0;  // tries at once since the estimate was last settled
  int later_ = 0;    // tries scheduled later since then
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_CALIBRATION_RETRY_H
