// calibration.h - what one sample costs the sampled code on this host, now
// (issue #27, part 1), by bench/cost's slope method in miniature: a loop
// doing fixed units of work, pinned to one CPU, runs under extra samples of
// lcpid's own event at two or more rates (0 among them), each unit's CPU
// time against the samples taken in it; the slope is the work lost per
// sample, kernel side included (the interrupt and perf's handling are
// charged to the interrupted thread, as on this kernel; with
// CONFIG_IRQ_TIME_ACCOUNTING they would not be). The rates run in a fresh
// random order each repetition, so slow drift in the machine's load does
// not line up with the rate, and the line is fitted with the rate as
// instrument (slope_fit.h). What the calibration itself costs (its
// thread's CPU time) is part of the result.
#ifndef LCPI_LIBPROFILE_BUDGET_CALIBRATION_H
#define LCPI_LIBPROFILE_BUDGET_CALIBRATION_H

#include <cstdint>
#include <string>
#include <vector>

#include "libprofile/base/error.h"
#include "libprofile/budget/slope_fit.h"

namespace lcpi {

struct CalibrationConfig {
  // lcpid's first event as perf_event_attr names it (after any fallback).
  uint32_t type = 1;    // PERF_TYPE_SOFTWARE
  uint64_t config = 0;  // PERF_COUNT_SW_CPU_CLOCK
  int cpu = -1;         // the CPU the loop is pinned to; -1: the last one this process may use
  // Extra samples per second on the loop, each a point of the line; at
  // least two different rates.
  std::vector<uint64_t> rates{0, 5000, 10000};
  int repetitions = 6;
  // One unit of work: about this much CPU time without extra samples. The
  // calibration costs about rates x repetitions x unit, plus what the
  // samples add: 6 x 3 x 25 ms, 0.45 s of one CPU and ~0.1 s more at 16 us
  // a sample.
  uint64_t unit_ns = 25'000'000;
};

struct CalibrationPoint {
  uint64_t rate = 0;     // asked, samples/s
  uint64_t samples = 0;  // taken on the loop during the unit
  uint64_t cpu_ns = 0;   // the unit's CPU time
};

struct Calibration {
  SlopeFit fit;  // loop CPU ns against samples: slope = ns one sample costs
  int cpu = -1;
  std::vector<uint64_t> rates;  // the rates asked, ascending
  std::vector<CalibrationPoint> points;
  uint64_t cpu_ns = 0;   // the calibration's own CPU time, all of it
  uint64_t wall_ns = 0;  // its length
  int64_t finished_unix = 0;
};

// How many iterations of the loop make a unit of unit_ns, from a probe of
// probe_iterations that took probe_cpu_ns of the thread's CPU time and
// probe_wall_ns of wall time. By the CPU time, as the units are timed,
// unless it is under a quarter of the wall time: a thread CPU clock that
// stands still (a QEMU TCG guest's, where sched_clock is unstable, read 0
// over a probe) would size a unit that spins for hours, so the wall time
// sizes it then. A probe preempted for most of its length (a loaded CPU,
// or one a local user loads on purpose) would otherwise make every unit
// short and the calibration likely refused; at most it makes them 4x
// longer in wall time than unit_ns at the probe's speed.
uint64_t UnitIterations(uint64_t probe_iterations, uint64_t probe_cpu_ns, uint64_t probe_wall_ns,
                        uint64_t unit_ns);

// The largest rate perf lets an event ask for (kernel.perf_event_max_sample_rate),
// or fallback when it cannot be read.
uint64_t MaxSampleRate(uint64_t fallback);

// Runs the calibration on the calling thread (pinned to config.cpu for its
// length, then given back its former CPUs). Fails if the event cannot be
// opened on the thread, the CPU cannot be had, or the points give no line.
// stop, if set, is read between units: the calibration gives up.
Expected<Calibration> CalibrateSampleCost(const CalibrationConfig& config,
                                          const bool* stop = nullptr);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_CALIBRATION_H
