// calibration_reserve.h - the share of each CPU held back from the budget
// for calibrating (issue #27: the calibration's own cost "counted in the
// budget"): the CPU of the calibrations that ended over the last
// --calibrate-every, the tries again and confirmations included, or one
// calibration's average where fewer ran, spread over that interval and the
// online CPUs. On a quiet host that is one calibration an hour; on a noisy
// one, where calibrations are refused and tried again (calibration_retry.h),
// up to about 20 in the first hour, and the rate is governed below them.
#ifndef LCPI_LIBPROFILE_BUDGET_CALIBRATION_RESERVE_H
#define LCPI_LIBPROFILE_BUDGET_CALIBRATION_RESERVE_H

#include <cstddef>
#include <cstdint>
#include <deque>

namespace lcpi {

class CalibrationReserve {
 public:
  // Calibrations remembered at most: far more than an hour's tries.
  static constexpr size_t kMaxRemembered = 256;

  // every_s: --calibrate-every (0: only on request, nothing held back).
  explicit CalibrationReserve(int64_t every_s) : every_s_(every_s) {}

  // `runs` calibrations ended by now_ns (a monotonic clock) and used cpu_ns
  // of CPU together.
  void Add(int64_t now_ns, uint64_t cpu_ns, uint64_t runs = 1);
  // Percent of each of `cpus` CPUs held back at now_ns.
  double Pct(int64_t now_ns, long cpus);

 private:
  struct Ended {
    int64_t at_ns;
    uint64_t cpu_ns;
  };
  int64_t every_s_;
  std::deque<Ended> recent_;        // oldest first
  uint64_t cpu_ns_ = 0, runs_ = 0;  // every calibration's, for the average
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_CALIBRATION_RESERVE_H
