// stack_reserve.cpp - the stacks' interrupts at the asked rate and the last
// window's unwinding, as a share of each CPU.
#include "libprofile/budget/stack_reserve.h"

#include <algorithm>
#include <cmath>

namespace lcpi {

void StackReserve::Update(uint64_t unwind_cpu_ns, int64_t now_ns) {
  if (now_ns - since_ns_ < kMinIntervalNs) return;
  const double s = static_cast<double>(now_ns - since_ns_) / 1e9;
  // The total never goes back; were it to, that window counts as none.
  unwind_ns_per_s_ =
      unwind_cpu_ns >= unwind_cpu_ns_ ? static_cast<double>(unwind_cpu_ns - unwind_cpu_ns_) / s : 0;
  unwind_cpu_ns_ = unwind_cpu_ns;
  since_ns_ = now_ns;
}

double StackReserve::CostPct(double interrupt_ns, long cpus) const {
  if (asked_rate_ <= 0 || cpus <= 0) return 0;
  const double interrupt = std::isfinite(interrupt_ns) && interrupt_ns > 0 ? interrupt_ns : 0;
  // ns of CPU per second per CPU, as a percent of it
  const double per_cpu = asked_rate_ * interrupt + unwind_ns_per_s_ / static_cast<double>(cpus);
  return per_cpu / 1e7;
}

double StackReserve::HeldPct(double interrupt_ns, long cpus, double budget_pct) const {
  const double budget = std::isfinite(budget_pct) && budget_pct > 0 ? budget_pct : 0;
  return std::min(CostPct(interrupt_ns, cpus), kMaxBudgetShare * budget);
}

uint64_t StackReserve::UnwindAllowanceNsPerS(double budget_pct, long cpus) {
  if (!(std::isfinite(budget_pct) && budget_pct > 0)) return 0;
  // percent of a CPU is 1e7 ns a second
  return static_cast<uint64_t>(kMaxBudgetShare * budget_pct * 1e7 *
                               static_cast<double>(std::max(1L, cpus)));
}

}  // namespace lcpi
