// calibration_reserve.cpp - the calibrations of the last interval, as a
// share of each CPU.
#include "libprofile/budget/calibration_reserve.h"

#include <algorithm>

namespace lcpi {

void CalibrationReserve::Add(int64_t now_ns, uint64_t cpu_ns, uint64_t runs) {
  if (runs == 0) return;
  cpu_ns_ += cpu_ns;
  runs_ += runs;
  recent_.push_back({now_ns, cpu_ns});
  if (recent_.size() > kMaxRemembered) recent_.pop_front();
}

double CalibrationReserve::Pct(int64_t now_ns, long cpus) {
  if (every_s_ <= 0 || cpus <= 0 || runs_ == 0) return 0;
  const double every_ns = static_cast<double>(every_s_) * 1e9;
  while (!recent_.empty() && static_cast<double>(now_ns - recent_.front().at_ns) > every_ns)
    recent_.pop_front();
  double last_interval = 0;
  for (const Ended& e : recent_) last_interval += static_cast<double>(e.cpu_ns);
  const double one = static_cast<double>(cpu_ns_) / static_cast<double>(runs_);
  return 100.0 * std::max(last_interval, one) / every_ns / static_cast<double>(cpus);
}

}  // namespace lcpi
