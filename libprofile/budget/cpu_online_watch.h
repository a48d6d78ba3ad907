// cpu_online_watch.h - notices when the number of online CPUs changes (a
// CPU came online or went away), so lcpid calibrates again: what a sample
// costs depends on the CPUs it runs on (issue #27: "when a CPU comes
// online"). lcpid looks at each window's end; the reader is injectable so
// a test can bring CPUs on and off line.
#ifndef LCPI_LIBPROFILE_BUDGET_CPU_ONLINE_WATCH_H
#define LCPI_LIBPROFILE_BUDGET_CPU_ONLINE_WATCH_H

#include <cstdint>
#include <functional>

namespace lcpi {

// sysconf(_SC_NPROCESSORS_ONLN): how many CPUs are online now (<= 0: unknown).
long OnlineCpuCount();

class CpuOnlineWatch {
 public:
  explicit CpuOnlineWatch(std::function<long()> read = OnlineCpuCount);

  // True when the count differs from the one seen last (the first reading
  // is the baseline; an unknown count changes nothing).
  bool Changed();
  long online() const { return last_; }
  uint64_t changes() const { return changes_; }

 private:
  std::function<long()> read_;
  long last_;
  uint64_t changes_ = 0;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BUDGET_CPU_ONLINE_WATCH_H
