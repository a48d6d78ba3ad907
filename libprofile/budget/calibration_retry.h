// calibration_retry.h - when lcpid calibrates again after a calibration the
// governor refused (rate_governor.h: an interval too wide to act on) while
// it has no estimate or awaits a confirmation: a noisy moment must not hold
// the rate until the next hourly calibration, nor a host where calibrating
// cannot measure (an emulated CPU) calibrate without end. A few tries at
// once, then one 10 s later, 20 s, 40 s ... never later than the periodic
// calibration.
#ifndef LCPI_LIBPROFILE_BUDGET_CALIBRATION_RETRY_H
#define LCPI_LIBPROFILE_BUDGET_CALIBRATION_RETRY_H

#include <cstdint>

namespace lcpi {

class CalibrationRetry {
 public:
  static constexpr int kAtOnce = 3;            // tries right after a refusal
  static constexpr int64_t kFirstLaterS = 10;  // then 10 s, doubling

  // every_s: the periodic calibration's interval (--calibrate-every; 0:
  // only on request, and then no later try is scheduled).
  explicit CalibrationRetry(int64_t every_s) : every_s_(every_s) {}

  // A calibration was refused: seconds until the next try (0: at once),
  // or -1: none scheduled (only on request).
  int64_t Refused();
  // One was accepted: the next refusal starts afresh.
  void Accepted() { at_once_ = 0, later_ = 0; }
  int later_tries() const { return later_; }

 private:
  int64_t every_s_;
  int at_once_ = 0;  // tries at once since the last acceptance
  int later_ = 0;    // tries scheduled later since then
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_CALIBRATION_RETRY_H
