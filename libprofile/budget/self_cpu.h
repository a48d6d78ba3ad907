// self_cpu.h - lcpid's own CPU time, from its threads' schedstat: the first
// field of /proc/self/task/TID/schedstat is the ns the thread has run
// (exact, unlike the tick-sampled utime/stime). A thread that has ended is
// no longer listed, so its time drops out: lcpid's threads live as long as
// it does, but the calibration's, which is left out while it runs, too.
#ifndef LCPI_LIBPROFILE_BUDGET_SELF_CPU_H
#define LCPI_LIBPROFILE_BUDGET_SELF_CPU_H

#include <sys/types.h>

#include <cstdint>

namespace lcpi {

// The ns this process's threads have run, except thread `leave_out` (0:
// none).
uint64_t ThreadsCpuNs(pid_t leave_out = 0);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_SELF_CPU_H
