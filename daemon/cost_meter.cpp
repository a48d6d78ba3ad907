// cost_meter.cpp - differences since the last batch, times the calibration.
#include "daemon/cost_meter.h"

#include <algorithm>
#include <cmath>

namespace lcpi {

namespace {

uint64_t Since(uint64_t now, uint64_t before) { return now > before ? now - before : 0; }

// x ns per sample times n samples, as whole ns; a negative or non-finite
// estimate (a noisy fit) counts as nothing.
uint64_t Times(double ns_per_sample, uint64_t samples) {
  const double v = ns_per_sample * static_cast<double>(samples);
  if (!std::isfinite(v) || v <= 0) return 0;
  return v >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(std::llround(v));
}

}  // namespace

std::optional<WindowCost> CostMeter::Take(const SourceStats& now, uint64_t daemon_cpu_ns,
                                          uint64_t now_ns,
                                          const std::optional<Calibration>& calibration) {
  const SourceStats before = last_;
  const uint64_t daemon_before = last_daemon_ns_, ns_before = last_ns_;
  last_ = now;
  last_daemon_ns_ = daemon_cpu_ns;
  last_ns_ = now_ns;
  if (!calibration) return std::nullopt;
  WindowCost c;
  c.samples = Since(now.table.samples, before.table.samples);
  // The source's own clock when it keeps one (its counts go up to it),
  // else the caller's.
  const uint64_t wall = now.as_of_ns && before.as_of_ns ? Since(now.as_of_ns, before.as_of_ns)
                                                        : Since(now_ns, ns_before);
  c.cpu_ns = wall > UINT64_MAX / cpus_ ? UINT64_MAX : wall * cpus_;
  // a stack is a cpu-clock sample of its own: its interrupt costs as one
  c.stack_samples = Since(now.stacks, before.stacks);
  const uint64_t interrupts = c.samples + c.stack_samples;
  c.interrupt_ns = Times(calibration->fit.slope, interrupts);
  c.interrupt_ci95_ns = Times(calibration->fit.half95, interrupts);
  // A thread that ended takes its time with it (self_cpu.h): never negative.
  c.daemon_ns = Since(daemon_cpu_ns, daemon_before);
  const uint64_t handler_now = now.handler_ns_hit + now.handler_ns_miss;
  const uint64_t handler_before = before.handler_ns_hit + before.handler_ns_miss;
  if (handler_now) {  // lcpi.ko times its handler; the perf source does not
    c.module_handler_ns = Since(handler_now, handler_before);
    c.module_samples =
        Since(now.table.hits + now.table.misses, before.table.hits + before.table.misses);
  }
  return c;
}

}  // namespace lcpi
