// cpu_online_watch.cpp - the online CPU count, compared with the last one.
#include "libprofile/budget/cpu_online_watch.h"

#include <unistd.h>

#include <utility>

namespace lcpi {

long OnlineCpuCount() { return sysconf(_SC_NPROCESSORS_ONLN); }

CpuOnlineWatch::CpuOnlineWatch(std::function<long()> read)
    : read_(std::move(read)), last_(read_()) {}

bool CpuOnlineWatch::Changed() {
  const long now = read_();
  if (now <= 0) return false;
  if (last_ <= 0) {
    last_ = now;
    return false;
  }
  if (now == last_) return false;
  last_ = now;
  changes_++;
  return true;
}

}  // namespace lcpi
