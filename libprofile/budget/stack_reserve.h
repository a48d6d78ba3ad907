// stack_reserve.h - the share of each CPU held back from the budget for
// call stacks (issue #29: stacks "counted in the cost budget"). Stacks keep
// the rate asked of them (--stack-frequency) and the flat profile's rate is
// governed to what the budget leaves. What stacks cost each CPU is priced
// as the flat rate is: the asked stack rate at the calibrated interrupt's
// estimate (a stack is a cpu-clock sample too; what it adds, the kernel's
// call chain and the 8 KiB user-stack copy, was not resolved from noise on
// this host: bench/results/stacks.md, 4 +- 43 us), plus lcpid's CPU
// unwinding them over the last window (its walks' thread CPU time, which
// grows with the stacks, unlike the rest of lcpid's CPU: rate_governor.h),
// per CPU. What is held back is at most half the budget: the unwinding is
// work whose size the sampled users choose (their unwind tables, their
// images), and it must not take every user's flat profile to the floor.
#ifndef LCPI_LIBPROFILE_BUDGET_STACK_RESERVE_H
#define LCPI_LIBPROFILE_BUDGET_STACK_RESERVE_H

#include <cstdint>

namespace lcpi {

class StackReserve {
 public:
  // A window shorter than this (one ended early for the governor) is
  // measured with the next.
  static constexpr int64_t kMinIntervalNs = 1'000'000'000;
  // The most of the budget held back for stacks; what they cost beyond it
  // shows as the budget exceeded.
  static constexpr double kMaxBudgetShare = 0.5;

  // asked_rate: stacks/s/CPU (0: none, nothing held back); start_ns: when
  // sampling started (a monotonic clock).
  StackReserve(double asked_rate, int64_t start_ns)
      : asked_rate_(asked_rate), since_ns_(start_ns) {}

  // At a window's end: lcpid's CPU unwinding stacks since start.
  void Update(uint64_t unwind_cpu_ns, int64_t now_ns);
  // Percent of each of `cpus` CPUs the stacks cost, a stack's interrupt at
  // interrupt_ns (0: no estimate yet), the last window's unwinding (none
  // before one is measured) spread over the CPUs.
  double CostPct(double interrupt_ns, long cpus) const;
  // What is held back from a budget of budget_pct: the cost, at most
  // kMaxBudgetShare of it.
  double HeldPct(double interrupt_ns, long cpus, double budget_pct) const;
  // The last window's unwinding, CPU ns per second (all CPUs').
  double unwind_ns_per_s() const { return unwind_ns_per_s_; }
  // The most CPU lcpid's walks of user stacks may take, ns per second of
  // every CPU's (UnwindAllowance): the stacks' share of a budget of
  // budget_pct on each of `cpus`; 0, no bound, where the budget is off
  // (--max-overhead 0: what was asked, whatever it costs).
  static uint64_t UnwindAllowanceNsPerS(double budget_pct, long cpus);

 private:
  double asked_rate_;
  int64_t since_ns_;
  uint64_t unwind_cpu_ns_ = 0;  // at since_ns_
  double unwind_ns_per_s_ = 0;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_STACK_RESERVE_H
