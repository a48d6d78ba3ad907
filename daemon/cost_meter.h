// cost_meter.h - what the samples of each merge cost (issue #27, "the
// observer in the profile"): at each batch lcpid takes, the samples counted
// since the last one, the CPU time they were taken in (the source's clock
// times the CPUs sampled), the interrupt's cost by the latest calibration
// (ns per sample and its 95 % half-width, times the samples), lcpid's own
// threads' CPU since the last batch, and lcpi.ko's handler time. The sums go
// into the window's row of window_costs (ProfileDb, schema 7), from which
// every report's header states what its profile cost.
#ifndef LCPI_DAEMON_COST_METER_H
#define LCPI_DAEMON_COST_METER_H

#include <cstdint>
#include <optional>

#include "libprofile/budget/calibration.h"
#include "libprofile/collect/source.h"
#include "libprofile/store/profile_db.h"

namespace lcpi {

class CostMeter {
 public:
  // cpus: how many CPUs the source samples (wall time x cpus is the CPU
  // time the samples are a share of; sysconf's -1 counts as 1); start_ns:
  // the monotonic clock when sampling started, the first batch's baseline.
  CostMeter(long cpus, uint64_t start_ns)
      : cpus_(cpus > 0 ? static_cast<uint64_t>(cpus) : 1), last_ns_(start_ns) {}

  // The figures since the last call, with `now` the source's statistics
  // (summed over CPUs), daemon_cpu_ns lcpid's threads' CPU now
  // (ThreadsCpuNs) and now_ns a monotonic clock for when the source gives
  // no time of its own. Nothing before the first calibration (the cost of
  // a sample is not known): those samples go unmeasured, and the window
  // says so if none is. The first call counts from the start of sampling.
  std::optional<WindowCost> Take(const SourceStats& now, uint64_t daemon_cpu_ns, uint64_t now_ns,
                                 const std::optional<Calibration>& calibration);

 private:
  uint64_t cpus_;
  SourceStats last_{};
  uint64_t last_daemon_ns_ = 0, last_ns_;
};

}  // namespace lcpi

#endif  // LCPI_DAEMON_COST_METER_H
