// stack_reserve.h - the share of each CPU held back from the budget for
// call stacks (issue #29: stacks "counted in the cost budget"). Stacks keep
// the rate asked of them (--stack-frequency) and the flat profile's rate is
// governed to what the budget leaves: the share is what the stacks of the
// last window cost, each priced at the calibrated interrupt's estimate (a
// stack is a cpu-clock sample too), plus lcpid's CPU unwinding them (its
// walks' thread CPU time, which grows with the stacks, unlike the rest of
// lcpid's CPU: rate_governor.h). What a stack adds to the interrupt (the
// kernel's call chain, the 8 KiB user-stack copy) is left out: on this host
// it was not resolved from noise (bench/results/stacks.md, 4 +- 43 us).
// Before a window has measured them, the asked rate at the interrupt's
// estimate.
#ifndef LCPI_LIBPROFILE_BUDGET_STACK_RESERVE_H
#define LCPI_LIBPROFILE_BUDGET_STACK_RESERVE_H

#include <cstdint>

namespace lcpi {

class StackReserve {
 public:
  // An interval shorter than this (a window ended early for the governor)
  // is measured with the next one.
  static constexpr int64_t kMinIntervalNs = 1'000'000'000;

  // asked_rate: stacks/s/CPU (0: none, nothing held back); start_ns: when
  // sampling started (a monotonic clock).
  StackReserve(double asked_rate, int64_t start_ns)
      : asked_rate_(asked_rate), since_ns_(start_ns) {}

  // At a window's end: the stacks taken and lcpid's CPU unwinding them,
  // both since start.
  void Update(uint64_t stacks, uint64_t unwind_cpu_ns, int64_t now_ns);
  // Percent of each of `cpus` CPUs the stacks cost, a stack's interrupt at
  // interrupt_ns (0: no estimate yet, the unwinding alone).
  double Pct(double interrupt_ns, long cpus) const;
  // The last interval's stacks/s (over all CPUs) and unwinding CPU ns/s,
  // once one is measured.
  bool measured() const { return measured_; }
  double stacks_per_s() const { return stacks_per_s_; }
  double unwind_ns_per_s() const { return unwind_ns_per_s_; }

 private:
  double asked_rate_;
  int64_t since_ns_;
  uint64_t stacks_ = 0, unwind_cpu_ns_ = 0;  // at since_ns_
  bool measured_ = false;
  double stacks_per_s_ = 0, unwind_ns_per_s_ = 0;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_STACK_RESERVE_H
