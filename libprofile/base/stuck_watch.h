// stuck_watch.h - telling a thread that works from one that waits for ever.
//
// A thread blocked in a system call that does not return (a read or an open
// on a hung mount) uses no CPU; one hashing or copying a large file does,
// however long it takes. A StuckWatch follows one piece of work on one
// thread: it is stuck when, for a whole `after`, neither that thread's CPU
// time nor the work's own progress count (bytes copied, say) moved. The
// lookups (base/lookup_worker.h) and the image cache's copies
// (attribute/image_cache_writer.h) both judge their threads by it.
#ifndef LCPI_LIBPROFILE_BASE_STUCK_WATCH_H
#define LCPI_LIBPROFILE_BASE_STUCK_WATCH_H

#include <pthread.h>
#include <time.h>

#include <chrono>
#include <cstdint>

namespace lcpi {

class StuckWatch {
 public:
  using Clock = std::chrono::steady_clock;

  // On the working thread, as the work starts.
  void Start();
  // On any thread, while the watched thread cannot have ended (its clock
  // would be gone): true when neither its CPU time nor `progress` has moved
  // for `after`. Without a CPU clock, only `progress` counts.
  bool Stuck(Clock::time_point now, std::chrono::milliseconds after, uint64_t progress = 0);
  Clock::time_point since() const { return since_; }

 private:
  Clock::time_point since_;       // the work started
  Clock::time_point progressed_;  // it was last seen to advance
  clockid_t cpu_clock_{};
  bool has_clock_ = false;
  uint64_t cpu_ns_ = 0;    // as last read
  uint64_t progress_ = 0;  // as last read
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_STUCK_WATCH_H
