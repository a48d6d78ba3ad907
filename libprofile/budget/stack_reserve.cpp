// stack_reserve.cpp - the last window's stacks, as a share of each CPU.
#include "libprofile/budget/stack_reserve.h"

#include <cmath>

namespace lcpi {

void StackReserve::Update(uint64_t stacks, uint64_t unwind_cpu_ns, int64_t now_ns) {
  if (now_ns - since_ns_ < kMinIntervalNs) return;
  const double s = static_cast<double>(now_ns - since_ns_) / 1e9;
  // Totals never go back; a source that started again counts from 0.
  stacks_per_s_ = stacks >= stacks_ ? static_cast<double>(stacks - stacks_) / s : 0;
  unwind_ns_per_s_ =
      unwind_cpu_ns >= unwind_cpu_ns_ ? static_cast<double>(unwind_cpu_ns - unwind_cpu_ns_) / s : 0;
  measured_ = true;
  stacks_ = stacks;
  unwind_cpu_ns_ = unwind_cpu_ns;
  since_ns_ = now_ns;
}

double StackReserve::Pct(double interrupt_ns, long cpus) const {
  if (asked_rate_ <= 0 || cpus <= 0) return 0;
  const double interrupt = std::isfinite(interrupt_ns) && interrupt_ns > 0 ? interrupt_ns : 0;
  const double n = static_cast<double>(cpus);
  // ns of CPU per second per CPU, as a percent of it
  const double per_cpu =
      measured_ ? (stacks_per_s_ * interrupt + unwind_ns_per_s_) / n : asked_rate_ * interrupt;
  return per_cpu / 1e7;
}

}  // namespace lcpi
