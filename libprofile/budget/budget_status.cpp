// budget_status.cpp - one "key value" line per figure.
#include "libprofile/budget/budget_status.h"

#include "libprofile/base/time_spec.h"
#include "libprofile/budget/governor.h"
#include "libprofile/budget/rate_governor.h"

namespace lcpi {

void WriteBudgetStatus(std::ostream& o, const BudgetFigures& f) {
  const CalibratorState& c = f.calibration;
  o << "calibration_state "
    << (c.running               ? "running"
        : c.last                ? "done"
        : !c.last_error.empty() ? "failed"
        : !f.periodic           ? "off"
                                : "waiting")
    << "\n";
  o << "calibration_every " << (f.periodic ? FormatDuration(f.every_s) : std::string("on request"))
    << "\n";
  o << "calibrations " << c.runs << "\n";
  o << "calibration_failures " << c.failures << "\n";
  // every calibration's own CPU since start: what measuring has cost
  o << "calibrations_cpu_ms " << c.cpu_ns / 1'000'000 << "\n";
  if (!c.last_error.empty()) o << "calibration_error " << c.last_error << "\n";
  if (c.last) {
    const Calibration& l = *c.last;
    // What one sample costs the code it interrupts, kernel side included,
    // with the half-width of its 95 % interval.
    o << "sample_cost_ns " << static_cast<int64_t>(l.fit.slope) << "\n";
    o << "sample_cost_ci95_ns " << static_cast<int64_t>(l.fit.half95) << "\n";
    o << "sample_cost_r2 " << l.fit.r2 << "\n";
    o << "calibration_points " << l.points.size() << "\n";
    o << "calibration_cpu " << l.cpu << "\n";
    o << "calibration_rates ";
    for (size_t i = 0; i < l.rates.size(); i++) o << (i ? "," : "") << l.rates[i];
    o << "\n";
    o << "calibration_at " << FormatUtc(l.finished_unix) << "\n";
    o << "calibration_ms " << l.wall_ns / 1'000'000 << "\n";
    o << "calibration_cpu_ms " << l.cpu_ns / 1'000'000 << "\n";
    if (f.asked_rate > 0) {
      // What sampling at the asked rate costs each CPU, by this estimate,
      // and the rate the budget allows by it: this calibration's, refused
      // or not (governor_target_per_cpu: the governor's, by what it holds).
      const double budget = f.budget_pct > 0 ? f.budget_pct : 100;
      const GovernedRate g = Govern(f.asked_rate, budget, l.fit.slope);
      o << "sampling_rate_per_cpu " << static_cast<uint64_t>(f.asked_rate) << "\n";
      o << "sampling_cost_pct " << l.fit.slope * f.asked_rate / 1e7 << "\n";
      o << "sampling_cost_ci95_pct " << l.fit.half95 * f.asked_rate / 1e7 << "\n";
      o << "rate_within_budget " << static_cast<uint64_t>(g.rate) << "\n";
    }
  }
  // The governor: the budget, what lcpid asked for and what the current
  // window samples at, what that costs by the estimate, and whether the
  // budget is kept. It is exceeded where even the floor (100/s/CPU) costs
  // more, or the source cannot change its rate (kmod); within the
  // hysteresis (10 %) over it: a new estimate's rate takes effect from the
  // next window (which it ends early).
  o << "max_overhead_pct " << f.budget_pct << "\n";
  o << "asked_rate_per_cpu " << static_cast<uint64_t>(f.asked_rate) << "\n";
  o << "governed_rate_per_cpu " << static_cast<uint64_t>(f.governed_rate) << "\n";
  o << "governor_target_per_cpu " << static_cast<uint64_t>(f.target_rate) << "\n";
  o << "governor_changes " << f.governor_changes << "\n";
  if (!f.governor_error.empty()) o << "governor_error " << f.governor_error << "\n";
  o << "governor_cost_ns " << static_cast<int64_t>(f.governor_cost_ns) << "\n";
  o << "governor_interrupt_ns " << static_cast<int64_t>(f.governor_interrupt_ns) << "\n";
  o << "governor_daemon_ns " << static_cast<int64_t>(f.governor_daemon_ns) << "\n";
  o << "calibration_reserved_pct " << f.calibration_reserved_pct << "\n";
  o << "stacks_reserved_pct " << f.stacks_reserved_pct << "\n";
  o << "stacks_cost_pct " << f.stacks_cost_pct << "\n";
  // the stacks cost more than the share held back for them (half the budget)
  o << "stacks_share_capped " << (f.stacks_cost_pct > f.stacks_reserved_pct * (1 + 1e-9) ? 1 : 0)
    << "\n";
  o << "stacks_unwind_ns_per_s " << static_cast<uint64_t>(f.stacks_unwind_ns_per_s) << "\n";
  o << "governor_reserved_pct " << f.governor_reserved_pct << "\n";
  o << "estimate_confirmed " << (f.estimate_confirmed ? 1 : 0) << "\n";
  o << "calibrations_refused " << f.calibrations_refused << "\n";
  o << "calibrations_confirming " << f.calibrations_confirming << "\n";
  o << "calibrations_pooled " << f.calibrations_pooled << "\n";
  o << "pooled_offers " << f.pooled_offers << "\n";
  o << "calibration_later_tries " << f.calibration_later_tries << "\n";
  o << "cpus_online " << f.cpus_online << "\n";
  o << "cpu_online_calibrations " << f.cpu_online_calibrations << "\n";
  if (f.governor_cost_ns > 0 && f.governed_rate > 0) {
    // by the cost the governor holds to the budget, the flat rate's, and
    // what calibrations and stacks cost (the stacks' whole cost, not their
    // capped share): all of it counts
    const double now_pct = f.governor_cost_ns * f.governed_rate / 1e7;
    const double total_pct = now_pct + f.calibration_reserved_pct + f.stacks_cost_pct;
    const bool over = f.budget_pct > 0 && total_pct > f.budget_pct * (1 + 1e-9);
    const bool exceeded = over && (total_pct > f.budget_pct * (1 + f.hysteresis) ||
                                   f.governed_rate <= kGovernorFloorRate);
    o << "governed_cost_pct " << now_pct << "\n";
    o << "budget_cost_pct " << total_pct << "\n";
    o << "budget_exceeded " << (exceeded ? 1 : 0) << "\n";
    o << "budget_exceeded_by_pct " << (exceeded ? total_pct - f.budget_pct : 0) << "\n";
  }
  // lcpid's own threads (drain, loop, lookups, merges) per sample taken;
  // start-up work included.
  o << "daemon_cpu_ms " << f.daemon_cpu_ns / 1'000'000 << "\n";
  o << "daemon_ns_per_sample " << (f.samples ? f.daemon_cpu_ns / f.samples : 0) << "\n";
  // lcpi.ko: its handler's own time, one part of sample_cost_ns, apart.
  if (f.module_timed)
    o << "module_handler_ns_per_sample "
      << (f.module_samples ? f.module_handler_ns / f.module_samples : 0) << "\n";
}

}  // namespace lcpi
