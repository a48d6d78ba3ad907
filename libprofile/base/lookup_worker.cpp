// lookup_worker.cpp - the queue, the threads, and what happens to a stuck one.
#include "libprofile/base/lookup_worker.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <system_error>
#include <utility>
#include <vector>

#include "libprofile/base/quiet_thread.h"
#include "libprofile/base/stuck_watch.h"

namespace lcpi {

using Clock = std::chrono::steady_clock;

struct LookupWorker::State {
  struct Job {
    uint64_t id = 0;
    Work work;
    Abandoned abandoned;
  };
  struct Running {
    uint32_t user = kNoUser;
    Abandoned abandoned;
    StuckWatch watch;    // of its thread
    bool stuck = false;  // abandoned while running: its result is discarded
  };
  // What ends on the caller's thread: a completion, or an abandonment.
  struct Ending {
    bool completed = false;
    std::function<void()> run;
  };

  std::mutex mutex;
  std::condition_variable wake;   // a lookup queued, or stop
  std::condition_variable ended;  // something for the caller to run
  // Waiting lookups, per user; users take turns (round robin) in `turns`,
  // which holds each user with a lookup waiting once.
  std::map<uint32_t, std::deque<Job>> queues;
  std::deque<uint32_t> turns;
  size_t queued = 0;
  // Lookups on a thread, per user, given-up ones included until their
  // thread comes back: a user's hung files hold up only that user's next.
  std::map<uint32_t, size_t> running_by_user;
  // Given-up lookups still on their thread, per user. A user holds one of
  // the max_stuck replacements however many of its lookups hang (at most
  // max_running_per_user), so one user cannot use them all up.
  std::map<uint32_t, size_t> stuck_by_user;
  size_t max_running_per_user = 1;
  std::map<uint64_t, Running> running;  // by job id
  std::vector<Ending> endings;
  uint64_t next_id = 0;
  size_t target = 1;               // threads wanted
  int nice = LookupWorker::kNice;  // of each thread
  size_t threads = 0;              // threads taking lookups; stuck ones are not counted
  size_t stuck = 0;
  bool stop = false;
  // What is counted with the mutex held: refused, abandoned, overran
  // (submitted and completed are the caller's own: LookupWorker).
  LookupStats stats;

  // On the caller's thread, without the mutex: runs what ended; returns how
  // many were completions.
  static uint64_t Run(std::vector<Ending>& todo) {
    uint64_t completed = 0;
    for (Ending& e : todo) {
      e.run();
      completed += e.completed ? 1 : 0;
    }
    return completed;
  }

  // With the mutex held: the next lookup to run, from the first user in
  // turn with fewer than max_running_per_user running; false when none may.
  bool TakeNext(Job* job, uint32_t* user) {
    for (auto turn = turns.begin(); turn != turns.end(); ++turn) {
      auto q = queues.find(*turn);
      if (running_by_user[*turn] >= max_running_per_user) continue;
      *user = *turn;
      *job = std::move(q->second.front());
      q->second.pop_front();
      queued--;
      turns.erase(turn);
      if (q->second.empty()) {
        queues.erase(q);
      } else {
        turns.push_back(*user);  // its next waits behind every other user's
      }
      running_by_user[*user]++;
      return true;
    }
    return false;
  }
  // With the mutex held: a lookup of `user` left its thread (or was given up).
  void NotRunning(uint32_t user) {
    auto it = running_by_user.find(user);
    if (it != running_by_user.end() && --it->second == 0) running_by_user.erase(it);
    wake.notify_all();  // its user's next may run now
  }
  // With the mutex held: every lookup waiting, in no particular order.
  template <typename F>
  void DrainQueues(F each) {
    for (auto& [user, q] : queues) {
      for (Job& job : q) each(job);
    }
    queues.clear();
    turns.clear();
    queued = 0;
  }

  // With the mutex held: `abandoned` will run on the caller's thread.
  void Abandon(Abandoned abandoned, std::string why) {
    endings.push_back({false, [a = std::move(abandoned), w = std::move(why)] { a(w); }});
    ended.notify_all();
  }
};

LookupWorker::LookupWorker(Limits limits) : limits_(limits), state_(std::make_shared<State>()) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->target = std::max<size_t>(limits_.threads, 1);
  state_->nice = limits_.nice;
  state_->max_running_per_user = limits_.max_running_per_user
                                     ? limits_.max_running_per_user
                                     : std::max<size_t>(state_->target - 1, 1);
  for (size_t i = 0; i < state_->target; i++) StartThreadLocked();
}

LookupWorker::~LookupWorker() {
  Stop();
  // What Stop abandoned has run; threads still in a lookup keep the state.
}

void LookupWorker::StartThreadLocked() {
  try {
    QuietThread(ThreadMain, state_).detach();
    state_->threads++;
  } catch (const std::system_error&) {
    // No thread: Submit refuses while none takes lookups.
  }
}

void LookupWorker::ThreadMain(std::shared_ptr<State> s) {
  // Lookups are background work a user's files set: hashing a 2 GB program
  // must not take CPU from the programs being profiled, nor from lcpid's
  // own loop and merge writer (at SIGTERM, abandoned lookups still hash
  // while the last batch is written).
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), s->nice);
  std::unique_lock<std::mutex> lock(s->mutex);
  for (;;) {
    State::Job job;
    uint32_t user = kNoUser;
    s->wake.wait(lock, [&] { return s->stop || s->TakeNext(&job, &user); });
    if (s->stop) {
      if (job.work) {  // taken just as Stop came: it ends as stopped
        s->NotRunning(user);
        s->stats.abandoned++;
        s->Abandon(std::move(job.abandoned), "lookups stopped");
      }
      s->threads--;
      return;
    }
    State::Running& r = s->running[job.id];
    r.user = user;
    r.abandoned = std::move(job.abandoned);
    r.watch.Start();
    lock.unlock();
    std::function<void()> done;
    std::string failure;
    try {
      done = job.work();
      if (!done) failure = "no result";
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "unknown exception";
    }
    job.work = nullptr;
    lock.lock();
    auto it = s->running.find(job.id);
    if (it->second.stuck && done) {
      // Given up meanwhile: its result is discarded, and what it holds (a
      // descriptor, whose close may wait for a file system that stopped
      // answering) is released without the lock, which every other thread,
      // WaitIdle and Stop take. Its user's share stays taken until then.
      lock.unlock();
      done = nullptr;
      lock.lock();
      it = s->running.find(job.id);  // still there: only this thread erases it
    }
    const bool stuck = it->second.stuck;
    if (!stuck) {
      s->NotRunning(it->second.user);
      if (done) {
        s->endings.push_back({true, std::move(done)});
      } else {
        s->stats.abandoned++;
        s->Abandon(std::move(it->second.abandoned), "lookup failed: " + failure);
      }
      s->ended.notify_all();
    }
    s->running.erase(it);
    if (stuck) {
      // Its lookup was given up and another thread took its place: this
      // one leaves, unless no other could be started (max_stuck). Its
      // user's share is free again only now.
      s->stuck--;
      s->NotRunning(user);
      if (auto u = s->stuck_by_user.find(user); u != s->stuck_by_user.end() && --u->second == 0)
        s->stuck_by_user.erase(u);
      if (s->stop || s->threads >= s->target) return;
      s->threads++;
    }
  }
}

void LookupWorker::Submit(Work work, Abandoned abandoned, uint32_t user) {
  submitted_++;
  std::unique_lock<std::mutex> lock(state_->mutex, std::try_to_lock);
  if (lock.owns_lock()) {
    HandOverLocked();  // the backlog goes first: submissions stay in order
    SubmitLocked({std::move(work), std::move(abandoned), user});
    return;
  }
  // A lookup thread has the lock (and may be preempted holding it): the
  // lookup waits here, no more of them than the queue would take.
  if (backlog_.size() >= limits_.max_queued) {
    backlog_refused_++;
    std::string why = "lookup queue full (" + std::to_string(backlog_.size()) + " waiting)";
    refusals_.push_back([a = std::move(abandoned), w = std::move(why)] { a(w); });
    return;
  }
  backlog_.push_back({std::move(work), std::move(abandoned), user});
}

void LookupWorker::HandOverLocked() {
  for (Submission& sub : backlog_) SubmitLocked(std::move(sub));
  backlog_.clear();
}

size_t LookupWorker::RunRefusals() {
  std::vector<std::function<void()>> todo;
  todo.swap(refusals_);  // an `abandoned` may submit again
  for (auto& refusal : todo) refusal();
  return todo.size();
}

void LookupWorker::SubmitLocked(Submission sub) {
  State& s = *state_;
  const uint32_t user = sub.user;
  std::string refusal;
  if (s.stop) {
    refusal = "lookups stopped";
  } else if (s.threads == 0) {
    refusal = "lookups stalled: " + std::to_string(s.stuck) + " threads stuck";
  } else if (s.queued >= limits_.max_queued) {
    refusal = "lookup queue full (" + std::to_string(s.queued) + " waiting)";
  } else if (auto q = s.queues.find(user);
             q != s.queues.end() && q->second.size() >= limits_.max_queued_per_user) {
    refusal = "lookup queue full for its user (" + std::to_string(q->second.size()) + " waiting)";
  }
  if (!refusal.empty()) {
    s.stats.refused++;
    s.Abandon(std::move(sub.abandoned), std::move(refusal));
    return;
  }
  std::deque<State::Job>& q = s.queues[user];
  if (q.empty()) s.turns.push_back(user);
  q.push_back({s.next_id++, std::move(sub.work), std::move(sub.abandoned)});
  s.queued++;
  s.wake.notify_all();  // the thread that may take it need not be the first woken
}

size_t LookupWorker::RunCompletions() {
  std::vector<State::Ending> todo;
  {
    // Taken: what ended waits for the next call (the loop's next iteration).
    std::unique_lock<std::mutex> lock(state_->mutex, std::try_to_lock);
    if (!lock.owns_lock()) return RunRefusals();
    HandOverLocked();
    State& s = *state_;
    const Clock::time_point now = Clock::now();
    // The running lookup `r` ends now, as abandoned for `why`; its thread is
    // left to finish (its result discarded), and another takes its place.
    // Its user's share stays taken until the thread comes back, and it is
    // replaced when its user already holds one of the max_stuck places or
    // one is free.
    auto give_up = [&](State::Running& r, std::string why) {
      r.stuck = true;
      s.threads--;
      s.stuck++;
      s.stats.abandoned++;
      const bool holds = s.stuck_by_user[r.user]++ > 0;
      s.Abandon(std::move(r.abandoned), std::move(why));
      if ((holds || s.stuck_by_user.size() < limits_.max_stuck) && !s.stop) StartThreadLocked();
    };
    for (auto& [id, r] : s.running) {
      if (r.stuck) continue;
      if (now - r.watch.since() >= limits_.max_run) {
        // Working or not, it has had its time: its thread is replaced as a
        // stuck one's is, and whatever it returns later is discarded.
        give_up(r, "lookup ran longer than " + std::to_string(limits_.max_run.count()) + " ms");
        s.stats.overran++;
        continue;
      }
      // A thread that used CPU since the last look is working, not stuck.
      // (Its clock is read with the mutex held: the thread cannot end now.)
      if (!r.watch.Stuck(now, limits_.stuck_after)) continue;
      auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - r.watch.since()).count();
      give_up(r, "lookup stuck for " + std::to_string(secs) +
                     " s, its thread idle (a file system that does not answer?)");
    }
    if (s.threads == 0 && !s.stop) {
      // Nothing would ever run them.
      const std::string why = "lookups stalled: " + std::to_string(s.stuck) + " threads stuck";
      s.DrainQueues([&](State::Job& job) {
        s.stats.refused++;
        s.Abandon(std::move(job.abandoned), why);
      });
    }
    todo.swap(s.endings);
    ReadStatsLocked();
  }
  const size_t refused = RunRefusals();
  completed_ += State::Run(todo);
  return refused + todo.size();
}

bool LookupWorker::WaitIdle(std::chrono::milliseconds wait) {
  const Clock::time_point deadline = Clock::now() + wait;
  for (;;) {
    RunCompletions();
    // WaitIdle waits anyway (for the lookups under way): the lock too.
    std::unique_lock<std::mutex> lock(state_->mutex);
    State& s = *state_;
    if (!backlog_.empty()) {  // RunCompletions found the lock taken
      HandOverLocked();
      continue;
    }
    ReadStatsLocked();
    size_t busy = 0;
    for (const auto& [id, r] : s.running) busy += r.stuck ? 0 : 1;
    if (s.queued == 0 && busy == 0 && s.endings.empty()) return true;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return false;
    // Woken by an ending; at least every 100 ms to look for stuck lookups.
    s.ended.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(100)));
  }
}

void LookupWorker::Stop() {
  std::vector<State::Ending> todo;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);  // Stop waits anyway
    State& s = *state_;
    if (s.stop) return;
    // Submitted before Stop: they end as the queued ones do, stopped.
    HandOverLocked();
    s.stop = true;
    s.DrainQueues([&](State::Job& job) {
      s.stats.abandoned++;
      s.Abandon(std::move(job.abandoned), "lookups stopped");
    });
    for (auto& [id, r] : s.running) {
      if (r.stuck) continue;
      r.stuck = true;             // its result, if it ever comes, is discarded
      s.stuck_by_user[r.user]++;  // its user's share is freed when it returns
      s.threads--;
      s.stuck++;
      s.stats.abandoned++;
      s.Abandon(std::move(r.abandoned), "lookups stopped");
    }
    s.wake.notify_all();
    todo.swap(s.endings);
    ReadStatsLocked();
  }
  RunRefusals();
  completed_ += State::Run(todo);
}

bool RefusedForLoad(const std::string& why) {
  return why.starts_with("lookup queue full") || why.starts_with("lookups stalled");
}

void LookupWorker::ReadStatsLocked() const {
  last_stats_ = state_->stats;
  last_stats_.queued = state_->queued;
  last_stats_.running = state_->running.size();
  last_stats_.stuck_threads = state_->stuck;
}

LookupStats LookupWorker::stats() const {
  std::unique_lock<std::mutex> lock(state_->mutex, std::try_to_lock);
  if (lock.owns_lock()) ReadStatsLocked();  // else the last figures read
  LookupStats st = last_stats_;
  st.submitted = submitted_;
  st.completed = completed_;
  st.refused += backlog_refused_;
  st.queued += backlog_.size();
  return st;
}

std::unique_lock<std::mutex> LookupWorker::HoldLockForTest() {
  return std::unique_lock<std::mutex>(state_->mutex);
}

}  // namespace lcpi
