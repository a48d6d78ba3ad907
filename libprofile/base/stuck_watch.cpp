// stuck_watch.cpp - a thread's CPU clock, read to see whether it works.
#include "libprofile/base/stuck_watch.h"

#include "libprofile/base/clock_ns.h"

namespace lcpi {

void StuckWatch::Start() {
  since_ = progressed_ = Clock::now();
  has_clock_ = pthread_getcpuclockid(pthread_self(), &cpu_clock_) == 0;
  cpu_ns_ = has_clock_ ? ClockNs(cpu_clock_) : 0;
  progress_ = 0;
}

bool StuckWatch::Stuck(Clock::time_point now, std::chrono::milliseconds after, uint64_t progress) {
  if (now - progressed_ < after) return false;
  bool worked = progress != progress_;
  progress_ = progress;
  if (has_clock_) {
    const uint64_t cpu = ClockNs(cpu_clock_);
    worked = worked || cpu != cpu_ns_;
    cpu_ns_ = cpu;
  }
  if (worked) progressed_ = now;
  return !worked;
}

}  // namespace lcpi
