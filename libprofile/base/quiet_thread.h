// quiet_thread.h - threads that never take a signal. lcpid takes SIGTERM,
// SIGINT and SIGHUP through a signalfd on its main thread; a process-directed
// signal the kernel hands to another thread that does not block it takes its
// default action there (SIGTERM: the process ends with no final flush). So
// every helper thread of lcpid is born with every signal blocked.
#ifndef LCPI_LIBPROFILE_BASE_QUIET_THREAD_H
#define LCPI_LIBPROFILE_BASE_QUIET_THREAD_H

#include <pthread.h>
#include <signal.h>

#include <thread>
#include <utility>

namespace lcpi {

// std::thread(f, args...), started with every signal blocked in it (the
// caller's mask is unchanged). Throws std::system_error as std::thread does.
template <typename F, typename... Args>
std::thread QuietThread(F&& f, Args&&... args) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  struct Restore {
    sigset_t* mask;
    ~Restore() { pthread_sigmask(SIG_SETMASK, mask, nullptr); }
  } restore{&old};
  return std::thread(std::forward<F>(f), std::forward<Args>(args)...);
}

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_QUIET_THREAD_H
