// clock_ns.h - a clock's time in ns, 0 if it cannot be read: the one place a
// timespec becomes a count (the calibration's clocks, the thread CPU time of
// lcpid's own work, a stuck thread's clock, boot time, the module's stats,
// the unwinding's CPU allowance).
#ifndef LCPI_LIBPROFILE_BASE_CLOCK_NS_H
#define LCPI_LIBPROFILE_BASE_CLOCK_NS_H

#include <time.h>

#include <cstdint>

namespace lcpi {

inline uint64_t ClockNs(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The calling thread's CPU time.
inline uint64_t ThreadCpuNs() { return ClockNs(CLOCK_THREAD_CPUTIME_ID); }

// A monotonic clock (steady_clock's), as a signed count.
inline int64_t MonotonicNs() { return static_cast<int64_t>(ClockNs(CLOCK_MONOTONIC)); }

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_CLOCK_NS_H
