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
  std::deque<Job> queue;
  std::map<uint64_t, Running> running;  // by job id
  std::vector<Ending> endings;
  uint64_t next_id = 0;
  size_t target = 1;   // threads wanted
  size_t threads = 0;  // threads taking lookups; stuck ones are not counted
  size_t stuck = 0;
  bool stop = false;
  LookupStats stats;

  // On the caller's thread, without the mutex: runs what ended, counts the
  // completions.
  void Run(std::vector<Ending>& todo) {
    uint64_t completed = 0;
    for (Ending& e : todo) {
      e.run();
      completed += e.completed ? 1 : 0;
    }
    std::lock_guard<std::mutex> lock(mutex);
    stats.completed += completed;
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
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kNice);
  std::unique_lock<std::mutex> lock(s->mutex);
  for (;;) {
    s->wake.wait(lock, [&] { return s->stop || !s->queue.empty(); });
    if (s->stop) {
      s->threads--;
      return;
    }
    State::Job job = std::move(s->queue.front());
    s->queue.pop_front();
    State::Running& r = s->running[job.id];
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
    const bool stuck = it->second.stuck;
    if (!stuck) {
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
      // one leaves, unless no other could be started (max_stuck).
      s->stuck--;
      if (s->stop || s->threads >= s->target) return;
      s->threads++;
    }
    // `done` of a stuck lookup is destroyed here: what it held (a
    // descriptor) is released, nothing of the caller's is touched.
    done = nullptr;
  }
}

void LookupWorker::Submit(Work work, Abandoned abandoned) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  State& s = *state_;
  s.stats.submitted++;
  std::string refusal;
  if (s.stop) {
    refusal = "lookups stopped";
  } else if (s.threads == 0) {
    refusal = "lookups stalled: " + std::to_string(s.stuck) + " threads stuck";
  } else if (s.queue.size() >= limits_.max_queued) {
    refusal = "lookup queue full (" + std::to_string(s.queue.size()) + " waiting)";
  }
  if (!refusal.empty()) {
    s.stats.refused++;
    s.Abandon(std::move(abandoned), std::move(refusal));
    return;
  }
  s.queue.push_back({s.next_id++, std::move(work), std::move(abandoned)});
  s.wake.notify_one();
}

size_t LookupWorker::RunCompletions() {
  std::vector<State::Ending> todo;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    State& s = *state_;
    const Clock::time_point now = Clock::now();
    for (auto& [id, r] : s.running) {
      // A thread that used CPU since the last look is working, not stuck.
      // (Its clock is read with the mutex held: the thread cannot end now.)
      if (r.stuck || !r.watch.Stuck(now, limits_.stuck_after)) continue;
      r.stuck = true;
      s.threads--;
      s.stuck++;
      s.stats.abandoned++;
      auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - r.watch.since()).count();
      s.Abandon(std::move(r.abandoned),
                "lookup stuck for " + std::to_string(secs) +
                    " s, its thread idle (a file system that does not answer?)");
      if (s.stuck < limits_.max_stuck && !s.stop) StartThreadLocked();
    }
    if (s.threads == 0 && !s.stop) {
      // Nothing would ever run them.
      while (!s.queue.empty()) {
        s.stats.refused++;
        s.Abandon(std::move(s.queue.front().abandoned),
                  "lookups stalled: " + std::to_string(s.stuck) + " threads stuck");
        s.queue.pop_front();
      }
    }
    todo.swap(s.endings);
  }
  state_->Run(todo);
  return todo.size();
}

bool LookupWorker::WaitIdle(std::chrono::milliseconds wait) {
  const Clock::time_point deadline = Clock::now() + wait;
  for (;;) {
    RunCompletions();
    std::unique_lock<std::mutex> lock(state_->mutex);
    State& s = *state_;
    size_t busy = 0;
    for (const auto& [id, r] : s.running) busy += r.stuck ? 0 : 1;
    if (s.queue.empty() && busy == 0 && s.endings.empty()) return true;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return false;
    // Woken by an ending; at least every 100 ms to look for stuck lookups.
    s.ended.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(100)));
  }
}

void LookupWorker::Stop() {
  std::vector<State::Ending> todo;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    State& s = *state_;
    if (s.stop) return;
    s.stop = true;
    for (State::Job& job : s.queue) {
      s.stats.abandoned++;
      s.Abandon(std::move(job.abandoned), "lookups stopped");
    }
    s.queue.clear();
    for (auto& [id, r] : s.running) {
      if (r.stuck) continue;
      r.stuck = true;  // its result, if it ever comes, is discarded
      s.threads--;
      s.stuck++;
      s.stats.abandoned++;
      s.Abandon(std::move(r.abandoned), "lookups stopped");
    }
    s.wake.notify_all();
    todo.swap(s.endings);
  }
  state_->Run(todo);
}

LookupStats LookupWorker::stats() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  LookupStats st = state_->stats;
  st.queued = state_->queue.size();
  st.running = state_->running.size();
  st.stuck_threads = state_->stuck;
  return st;
}

}  // namespace lcpi
