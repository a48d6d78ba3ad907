// stuck_watch.cpp - a thread's CPU clock, read to see whether it works.
#include "libprofile/base/stuck_watch.h"

namespace lcpi {
namespace {

uint64_t CpuNs(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

void StuckWatch::Start() {
  since_ = progressed_ = Clock::now();
  has_clock_ = pthread_getcpuclockid(pthread_self(), &cpu_clock_) == 0;
  cpu_ns_ = has_clock_ ? CpuNs(cpu_clock_) : 0;
  progress_ = 0;
}

bool StuckWatch::Stuck(Clock::time_point now, std::chrono::milliseconds after, uint64_t progress) {
  if (now - progressed_ < after) return false;
  bool worked = progress != progress_;
  progress_ = progress;
  if (has_clock_) {
    const uint64_t cpu = CpuNs(cpu_clock_);
    worked = worked || cpu != cpu_ns_;
    cpu_ns_ = cpu;
  }
  if (worked) progressed_ = now;
  return !worked;
}

}  // namespace lcpi
