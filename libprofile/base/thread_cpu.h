// thread_cpu.h - the calling thread's CPU time, for what a piece of lcpid's
// own work costs (a calibration, an unwind).
#ifndef LCPI_LIBPROFILE_BASE_THREAD_CPU_H
#define LCPI_LIBPROFILE_BASE_THREAD_CPU_H

#include <time.h>

#include <cstdint>

namespace lcpi {

inline uint64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_THREAD_CPU_H
