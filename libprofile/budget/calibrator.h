// calibrator.h - runs the calibration (calibration.h) on a thread of its
// own, so lcpid's loop never waits for it, and keeps the latest result for
// status. One at a time: a request while one runs is the one running.
#ifndef LCPI_LIBPROFILE_BUDGET_CALIBRATOR_H
#define LCPI_LIBPROFILE_BUDGET_CALIBRATOR_H

#include <sys/types.h>

#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "libprofile/budget/calibration.h"

namespace lcpi {

struct CalibratorState {
  bool running = false;
  uint64_t runs = 0;                // finished, successful or not
  uint64_t failures = 0;            // of them, failed
  uint64_t cpu_ns = 0;              // every calibration's own CPU time, since start
  std::optional<Calibration> last;  // the latest that succeeded
  std::string last_error;           // of the latest run, if it failed
};

class Calibrator {
 public:
  Calibrator() = default;
  ~Calibrator();  // stops a run under way between units and joins it
  Calibrator(const Calibrator&) = delete;
  Calibrator& operator=(const Calibrator&) = delete;

  // Starts a calibration unless one runs; false if one was running.
  bool Start(const CalibrationConfig& config);
  CalibratorState State() const;
  // The calibration thread while it runs (its CPU is not lcpid's cost per
  // sample), else 0.
  pid_t running_tid() const { return __atomic_load_n(&tid_, __ATOMIC_RELAXED); }

 private:
  void RunOne(CalibrationConfig config);

  mutable std::mutex mu_;
  CalibratorState state_;
  std::thread thread_;
  bool stop_ = false;  // read by the calibration between units
  pid_t tid_ = 0;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_CALIBRATOR_H
