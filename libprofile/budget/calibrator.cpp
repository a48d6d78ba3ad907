// calibrator.cpp - the calibration's thread and its latest result.
#include "libprofile/budget/calibrator.h"

#include <unistd.h>

#include "libprofile/base/clock_ns.h"
#include "libprofile/base/quiet_thread.h"

namespace lcpi {

Calibrator::~Calibrator() {
  __atomic_store_n(&stop_, true, __ATOMIC_RELAXED);
  if (thread_.joinable()) thread_.join();
}

bool Calibrator::Start(const CalibrationConfig& config) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_.running) return false;
  if (thread_.joinable()) thread_.join();  // the last one has finished
  state_.running = true;
  thread_ = QuietThread([this, config] { RunOne(config); });
  return true;
}

void Calibrator::RunOne(CalibrationConfig config) {
  __atomic_store_n(&tid_, gettid(), __ATOMIC_RELAXED);
  const uint64_t cpu0 = ThreadCpuNs();
  Expected<Calibration> c = CalibrateSampleCost(config, &stop_);
  // A calibration that failed ran its loop too: its CPU counts.
  const uint64_t cpu1 = ThreadCpuNs();
  __atomic_store_n(&tid_, 0, __ATOMIC_RELAXED);
  std::lock_guard<std::mutex> lock(mu_);
  state_.running = false;
  state_.runs++;
  state_.cpu_ns += cpu1 > cpu0 ? cpu1 - cpu0 : 0;
  if (c) {
    state_.last = std::move(*c);
    state_.last_error.clear();
  } else {
    state_.failures++;
    state_.last_error = c.error().ToString();
  }
}

CalibratorState Calibrator::State() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

}  // namespace lcpi
