// observer_cost.cpp - sums to figures, figures to the header's sentence.
#include "libprofile/report/observer_cost.h"

#include <cmath>

#include "libprofile/report/cell_format.h"

namespace lcpi::report {

std::optional<CostFigures> FiguresOf(const std::optional<WindowCost>& cost) {
  // a window of call stacks and no flat sample (a hardware event on idle
  // CPUs) still cost its stacks' interrupts
  if (!cost || cost->samples + cost->stack_samples == 0 || cost->cpu_ns == 0) return std::nullopt;
  const double samples = static_cast<double>(cost->samples);
  const double cpu_ns = static_cast<double>(cost->cpu_ns);
  CostFigures f;
  f.percent = 100.0 *
              (static_cast<double>(cost->interrupt_ns) + static_cast<double>(cost->daemon_ns)) /
              cpu_ns;
  f.ci95_percent = 100.0 * static_cast<double>(cost->interrupt_ci95_ns) / cpu_ns;
  // every interrupt: the flat samples' and the call stacks'
  f.interrupt_ns = static_cast<double>(cost->interrupt_ns) /
                   (samples + static_cast<double>(cost->stack_samples));
  f.daemon_ns = cost->samples ? static_cast<double>(cost->daemon_ns) / samples : 0;
  if (cost->module_samples)
    f.module_ns =
        static_cast<double>(cost->module_handler_ns) / static_cast<double>(cost->module_samples);
  f.rate = samples / (cpu_ns / 1e9);
  f.stack_rate = static_cast<double>(cost->stack_samples) / (cpu_ns / 1e9);
  return f;
}

std::string CostSentence(const std::optional<WindowCost>& cost, size_t windows) {
  const std::string where =
      windows == 1 ? "this window" : "these " + std::to_string(windows) + " windows";
  const std::optional<CostFigures> f = FiguresOf(cost);
  if (!f) return "lcpi cost not measured in " + where + " (no estimate stored)";
  std::string out = "lcpi cost " + Fixed(f->percent, 2) + " % \u00b1 " + Fixed(f->ci95_percent, 2) +
                    " of CPU in " + where + " (interrupt " + Fixed(f->interrupt_ns / 1000.0, 1) +
                    " \u00b5s/sample, daemon " + Fixed(std::round(f->daemon_ns), 0) + " ns/sample";
  if (f->module_ns) out += ", module handler " + Fixed(std::round(*f->module_ns), 0) + " ns/sample";
  out += ", " + Fixed(std::round(f->rate), 0) + " samples/s/CPU";
  if (cost->stack_samples) out += ", " + Fixed(std::round(f->stack_rate), 0) + " stacks/s/CPU";
  return out + ")";
}

}  // namespace lcpi::report
