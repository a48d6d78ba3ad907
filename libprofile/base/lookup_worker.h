// lookup_worker.h - the lookups that may block, off lcpid's loop.
//
// Naming a sample's code means opening and hashing files that other users
// name (a FIFO, a file on a hung network mount, a 2 GB binary), reading
// their processes' JIT maps and re-reading kallsyms. None of that may hold
// up the loop that resolves samples and answers the control socket, so each
// such lookup runs here, on a thread of its own: the caller submits it and
// goes on; its result comes back to the caller's thread (RunCompletions),
// the only place where it may touch the caller's state.
//
// Bounded, and never blocking the caller:
// - Limits::threads threads take lookups from one queue per user (the uid
//   of the process or file the lookup is for), the users taking turns, and
//   a user's lookups run on at most Limits::max_running_per_user threads
//   (one fewer than all): one user's slow files never hold up another's;
// - at most Limits::max_queued lookups wait, Limits::max_queued_per_user of
//   one user; one more is refused;
// - a lookup whose thread has used no CPU for Limits::stuck_after (blocked
//   in a system call that does not return: a hung mount) is abandoned: a
//   new thread takes over the queue, and the stuck one is left to finish,
//   its result discarded, or to die with the process. A lookup that works
//   (hashing a big file) is not stuck. After
//   Limits::max_stuck users with stuck threads, a stuck one is not replaced,
//   and with none left, lookups are refused until one of them comes back.
//   A user's stuck lookups keep counting against its max_running_per_user
//   until their threads come back (its further lookups wait, others' do
//   not), and a user holds one of max_stuck's places however many of its
//   lookups hang.
// - a lookup running longer than Limits::max_run, working or not (a file
//   system that dribbles), is given up the same way, and counted (overran).
// Every lookup submitted ends exactly once on the caller's thread, from
// RunCompletions, WaitIdle or Stop: by its completion, or by its
// `abandoned` with the reason (refused, stuck, stopped). Both are counted.
// They touch the state of whoever submitted them: stop (or destroy) the
// worker before that state goes.
//
// The caller (lcpid's loop, nice 0) never waits for the lock the lookup
// threads (nice 10) take: one of them preempted while it holds it keeps it
// for as long as busier work keeps it off every CPU (the loop's lookup
// results took up to 1,025 ms so under the hostile test). Submit, stats and
// RunCompletions take it with try_lock: a lookup submitted while it is
// taken waits in a backlog of the caller's own (max_queued at most, then
// refused) handed over at the next Submit, RunCompletions or WaitIdle that
// finds it free; RunCompletions then runs only what the caller holds
// (refusals of its backlog), and stats answers with the last figures read.
// WaitIdle and Stop, which wait anyway, take it as they find it.
#ifndef LCPI_LIBPROFILE_BASE_LOOKUP_WORKER_H
#define LCPI_LIBPROFILE_BASE_LOOKUP_WORKER_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "libprofile/base/error.h"

namespace lcpi {

struct LookupStats {
  uint64_t submitted = 0;
  uint64_t completed = 0;  // completions run
  uint64_t refused = 0;    // queue full, or every thread stuck
  uint64_t abandoned = 0;  // stuck past stuck_after, or still pending at Stop
  uint64_t overran = 0;    // running past max_run (also counted in abandoned)
  size_t queued = 0;       // waiting now
  size_t running = 0;      // on a thread now, stuck ones included
  size_t stuck_threads = 0;
};

class LookupWorker {
 public:
  // The threads' nice value: lookups run at low CPU priority.
  static constexpr int kNice = 10;
  struct Limits {
    size_t max_queued = 4096;
    std::chrono::milliseconds stuck_after{10000};
    size_t max_stuck = 4;
    // Threads taking lookups: with more than one, a lookup that hangs holds
    // up only its own thread until it is found stuck, not the queue.
    size_t threads = 3;
    // A lookup running longer than this, working or not, is given up.
    std::chrono::milliseconds max_run{30000};
    // Per user: lookups waiting, and lookups running at once (0: one thread
    // fewer than `threads`, at least one, so another user's always has one).
    size_t max_queued_per_user = 1024;
    size_t max_running_per_user = 0;
    // The threads' nice value: kNice for lookups a user's files set; 0 for
    // work the user asked of lcpid at a rate (unwinding stacks), which
    // competes as the loop does.
    int nice = kNice;
  };
  // The user on whose behalf a lookup runs, for fairness (the uid of the
  // process or the file); lookups of no user share this one.
  static constexpr uint32_t kNoUser = 0xffffffffu;
  // Runs on the worker's thread and may block; returns what to do with its
  // result on the caller's thread. It must not touch the caller's state:
  // capture what it needs by value.
  using Work = std::function<std::function<void()>()>;
  // Runs on the caller's thread when the lookup will not complete.
  using Abandoned = std::function<void(const std::string& why)>;

  explicit LookupWorker(Limits limits);
  LookupWorker() : LookupWorker(Limits{}) {}
  ~LookupWorker();  // Stop()
  LookupWorker(const LookupWorker&) = delete;
  LookupWorker& operator=(const LookupWorker&) = delete;

  // Queues a lookup (or keeps it in the backlog); never waits. A refused one
  // ends (abandoned) at the next RunCompletions, never inside Submit, so
  // callers need not be re-entrant.
  void Submit(Work work, Abandoned abandoned, uint32_t user = kNoUser);
  // Runs the completions of finished lookups and the `abandoned` of refused
  // and stuck ones; replaces a stuck thread; hands the backlog over. Returns
  // how many ended. With the lock taken, only the backlog's refusals.
  size_t RunCompletions();
  // RunCompletions until nothing is queued or running (stuck threads aside),
  // or until `wait` has passed. True when idle.
  bool WaitIdle(std::chrono::milliseconds wait);
  // Ends every lookup still queued or running (their `abandoned` run here,
  // "stopped") and lets the threads go; a thread stuck in a system call
  // ends with the process. Submit after Stop refuses. The backlog is handed
  // over first: what waits there ends as stopped, as queued lookups do.
  void Stop();
  // Counters; with the lock taken, the last figures read (submitted,
  // completed and the backlog's are the caller's own, always current).
  LookupStats stats() const;

  // Tests only: the lock the lookup threads take, held until the returned
  // lock goes (as a lookup thread preempted while it holds it would).
  std::unique_lock<std::mutex> HoldLockForTest();

 private:
  struct State;
  static void ThreadMain(std::shared_ptr<State> state);
  struct Submission {
    Work work;
    Abandoned abandoned;
    uint32_t user = kNoUser;
  };
  // With State::mutex held: one more thread taking lookups.
  void StartThreadLocked();
  // With State::mutex held: queues (or refuses) one lookup.
  void SubmitLocked(Submission sub);
  // With State::mutex held: the backlog, queued in order.
  void HandOverLocked();
  // With State::mutex held: last_stats_ as they are now.
  void ReadStatsLocked() const;
  // Runs what the caller holds: refusals of its backlog. Returns how many.
  size_t RunRefusals();

  Limits limits_;
  // Shared with the threads, which may outlive this object (a stuck one).
  std::shared_ptr<State> state_;
  // The caller's own, never touched by the threads (no lock):
  std::vector<Submission> backlog_;              // submitted while the lock was taken
  std::vector<std::function<void()>> refusals_;  // the backlog's refusals, to run
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
  uint64_t backlog_refused_ = 0;
  mutable LookupStats last_stats_;  // the threads' figures, as last read
};

// True when `why` (an Abandoned reason, or the message of RunLookup's
// kBusy) says the lookup was refused for the worker's load (queue full,
// lookups stalled), nothing about what it looks up: look it up again later.
bool RefusedForLoad(const std::string& why);

// Runs `work` (which may block) on `lookups`, or at once when lookups is
// null (tests, single-threaded tools), and hands its result to `done` on the
// caller's thread; a lookup that is refused or abandoned hands `done` an
// Error (kBusy, saying why). `done` is called exactly once.
template <typename T>
void RunLookup(LookupWorker* lookups, std::function<Expected<T>()> work,
               std::function<void(Expected<T>)> done, uint32_t user = LookupWorker::kNoUser) {
  if (!lookups) {
    done(work());
    return;
  }
  auto finish = std::make_shared<std::function<void(Expected<T>)>>(std::move(done));
  lookups->Submit(
      [work = std::move(work), finish] {
        auto result = std::make_shared<Expected<T>>(work());
        return std::function<void()>([finish, result] { (*finish)(std::move(*result)); });
      },
      [finish](const std::string& why) { (*finish)(Error(Errc::kBusy, why)); }, user);
}

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_LOOKUP_WORKER_H
