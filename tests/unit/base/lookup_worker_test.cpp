// lookup_worker_test.cpp - LookupWorker (libprofile/base/lookup_worker.h):
// results come back on the caller's thread and only from RunCompletions; a
// full queue refuses; a lookup stuck in a real blocking system call (open of
// a FIFO nobody writes, as a hung mount would hold it) is abandoned, a new
// thread takes the queue over, and what the stuck one returns later is
// discarded; every lookup ends exactly once, Stop included.
#include "libprofile/base/lookup_worker.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test_files.h"

using lcpi::LookupWorker;
using lcpi::testing::TempDir;
using namespace std::chrono_literals;

namespace {

// How each lookup ended, as seen on the caller's thread.
struct Outcomes {
  std::vector<std::string> completed;
  std::vector<std::string> abandoned;  // "name: why"
  bool wrong_thread = false;
  std::thread::id caller = std::this_thread::get_id();

  LookupWorker::Work Returns(std::string name) {
    return [this, name] {
      return std::function<void()>([this, name] {
        wrong_thread |= std::this_thread::get_id() != caller;
        completed.push_back(name);
      });
    };
  }
  LookupWorker::Abandoned Gives(std::string name) {
    return [this, name](const std::string& why) {
      wrong_thread |= std::this_thread::get_id() != caller;
      abandoned.push_back(name + ": " + why);
    };
  }
};

// A lookup that blocks in open(2) of a FIFO until someone opens it for
// writing: the real system call a hung file system holds a thread in.
LookupWorker::Work BlocksOn(const std::string& fifo, Outcomes& out, std::string name) {
  return [fifo, &out, name] {
    int fd = open(fifo.c_str(), O_RDONLY | O_CLOEXEC);
    return std::function<void()>([fd, &out, name] {
      if (fd >= 0) close(fd);
      out.completed.push_back(name);
    });
  };
}

// Waits until `done()`. A Submit that found the pool's lock taken (a thread
// taking a lookup) left the lookup in the caller's backlog, handed over at
// the next RunCompletions, as lcpid's loop calls it each iteration.
template <typename F>
void Until(LookupWorker& worker, F done) {
  while (!done()) {
    worker.RunCompletions();
    std::this_thread::sleep_for(1ms);
  }
}

// Lets the thread blocked on `fifo` go.
void Release(const std::string& fifo) {
  for (int i = 0; i < 500; i++) {
    int fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      close(fd);
      return;
    }
    std::this_thread::sleep_for(10ms);
  }
  FAIL("nobody was reading " << fifo);
}

}  // namespace

TEST_CASE("results come back on the caller's thread, from RunCompletions only") {
  LookupWorker worker;
  Outcomes out;
  worker.Submit(out.Returns("a"), out.Gives("a"));
  worker.Submit(out.Returns("b"), out.Gives("b"));
  std::this_thread::sleep_for(50ms);
  CHECK(out.completed.empty());  // nothing runs behind the caller's back
  REQUIRE(worker.WaitIdle(5s));
  std::sort(out.completed.begin(), out.completed.end());  // several threads: either order
  CHECK(out.completed == std::vector<std::string>{"a", "b"});
  CHECK(out.abandoned.empty());
  CHECK_FALSE(out.wrong_thread);
  lcpi::LookupStats st = worker.stats();
  CHECK(st.submitted == 2);
  CHECK(st.completed == 2);
  CHECK(st.queued == 0);
}

TEST_CASE("one lookup that hangs does not hold up the others") {
  TempDir dir;
  const std::string fifo = dir / "fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  LookupWorker worker;  // three threads, stuck only after 10 s
  Outcomes out;
  worker.Submit(BlocksOn(fifo, out, "hangs"), out.Gives("hangs"));
  for (int i = 0; i < 3; i++) worker.Submit(out.Returns("quick"), out.Gives("quick"));
  for (int i = 0; i < 500 && out.completed.size() < 3; i++) {
    worker.RunCompletions();
    std::this_thread::sleep_for(10ms);
  }
  CHECK(out.completed == std::vector<std::string>{"quick", "quick", "quick"});
  CHECK(worker.stats().running == 1);
  Release(fifo);
  REQUIRE(worker.WaitIdle(5s));
  CHECK(out.completed.back() == "hangs");
  CHECK(out.abandoned.empty());
}

TEST_CASE("a full queue refuses at once, ending the lookup at the next RunCompletions") {
  TempDir dir;
  const std::string fifo = dir / "fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  LookupWorker worker(LookupWorker::Limits{2, 60s, 4, 1});
  Outcomes out;
  worker.Submit(BlocksOn(fifo, out, "blocker"), out.Gives("blocker"));
  Until(worker, [&] { return worker.stats().running > 0; });
  worker.Submit(out.Returns("q1"), out.Gives("q1"));
  worker.Submit(out.Returns("q2"), out.Gives("q2"));
  worker.Submit(out.Returns("q3"), out.Gives("q3"));  // one too many
  CHECK(out.abandoned.empty());                       // not inside Submit
  worker.RunCompletions();
  REQUIRE(out.abandoned.size() == 1);
  CHECK(out.abandoned[0] == "q3: lookup queue full (2 waiting)");
  CHECK(worker.stats().refused == 1);
  Release(fifo);
  REQUIRE(worker.WaitIdle(5s));
  CHECK(out.completed == std::vector<std::string>{"blocker", "q1", "q2"});
}

TEST_CASE("a stuck lookup is abandoned and another thread serves the queue") {
  TempDir dir;
  const std::string fifo = dir / "fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  LookupWorker worker(LookupWorker::Limits{16, 200ms, 4, 1});
  Outcomes out;
  worker.Submit(BlocksOn(fifo, out, "stuck"), out.Gives("stuck"));
  worker.Submit(out.Returns("after"), out.Gives("after"), 2);
  // Another user's behind the stuck lookup still completes: on a new thread
  // (the stuck one's user waits for it to come back).
  REQUIRE(worker.WaitIdle(10s));
  CHECK(out.completed == std::vector<std::string>{"after"});
  REQUIRE(out.abandoned.size() == 1);
  CHECK(out.abandoned[0].rfind("stuck: lookup stuck for", 0) == 0);
  CHECK(out.abandoned[0].find("its thread idle") != std::string::npos);
  CHECK(worker.stats().stuck_threads == 1);

  // The stuck thread comes back: its result is discarded, not run.
  Release(fifo);
  for (int i = 0; i < 500 && worker.stats().stuck_threads > 0; i++)
    std::this_thread::sleep_for(10ms);
  CHECK(worker.stats().stuck_threads == 0);
  worker.RunCompletions();
  CHECK(out.completed == std::vector<std::string>{"after"});
  worker.Submit(out.Returns("later"), out.Gives("later"));
  REQUIRE(worker.WaitIdle(5s));
  CHECK(out.completed.back() == "later");
  CHECK_FALSE(out.wrong_thread);
}

TEST_CASE("a lookup that works longer than stuck_after is not stuck") {
  LookupWorker worker(LookupWorker::Limits{16, 200ms, 4});
  Outcomes out;
  // A second of CPU (hashing a big file): its thread's clock advances.
  worker.Submit(
      [&out] {
        volatile uint64_t x = 0;
        const auto end = std::chrono::steady_clock::now() + 1s;
        while (std::chrono::steady_clock::now() < end)
          for (int i = 0; i < 100000; i++) x = x + static_cast<uint64_t>(i);
        return std::function<void()>([&out] { out.completed.push_back("worker"); });
      },
      out.Gives("worker"));
  REQUIRE(worker.WaitIdle(20s));
  CHECK(out.abandoned.empty());
  CHECK(out.completed == std::vector<std::string>{"worker"});
  CHECK(worker.stats().stuck_threads == 0);
}

TEST_CASE("with every thread stuck, lookups are refused, not queued for ever") {
  TempDir dir;
  std::vector<std::string> fifos;
  LookupWorker worker(LookupWorker::Limits{16, 100ms, 2, 1});
  Outcomes out;
  for (int i = 0; i < 2; i++) {
    fifos.push_back(dir / ("fifo" + std::to_string(i)));
    REQUIRE(mkfifo(fifos.back().c_str(), 0600) == 0);
    // Two users: a user's stuck lookups hold one of max_stuck's places.
    worker.Submit(BlocksOn(fifos.back(), out, "stuck"), out.Gives("stuck"), i);
  }
  worker.Submit(out.Returns("queued"), out.Gives("queued"));
  for (int i = 0; i < 300 && worker.stats().stuck_threads < 2; i++) {
    worker.RunCompletions();
    std::this_thread::sleep_for(10ms);
  }
  REQUIRE(worker.stats().stuck_threads == 2);
  worker.RunCompletions();
  worker.Submit(out.Returns("new"), out.Gives("new"));
  worker.RunCompletions();
  CHECK(out.completed.empty());
  REQUIRE(out.abandoned.size() == 4);
  CHECK(out.abandoned[2] == "queued: lookups stalled: 2 threads stuck");
  CHECK(out.abandoned[3] == "new: lookups stalled: 2 threads stuck");
  for (const std::string& f : fifos) Release(f);
}

TEST_CASE("a lookup that throws or returns nothing ends as abandoned") {
  LookupWorker worker;
  Outcomes out;
  worker.Submit([]() -> std::function<void()> { throw std::runtime_error("bad"); },
                out.Gives("throws"));
  worker.Submit([] { return std::function<void()>(); }, out.Gives("empty"));
  REQUIRE(worker.WaitIdle(5s));
  std::sort(out.abandoned.begin(), out.abandoned.end());  // several threads: either order
  CHECK(out.abandoned ==
        std::vector<std::string>{"empty: lookup failed: no result", "throws: lookup failed: bad"});
}

TEST_CASE("Stop ends what is queued and running, and later lookups are refused") {
  TempDir dir;
  const std::string fifo = dir / "fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  auto worker = std::make_unique<LookupWorker>(LookupWorker::Limits{16, 60s, 4, 1});
  Outcomes out;
  worker->Submit(BlocksOn(fifo, out, "running"), out.Gives("running"));
  Until(*worker, [&] { return worker->stats().running > 0; });
  worker->Submit(out.Returns("queued"), out.Gives("queued"));
  worker->Stop();
  CHECK(out.abandoned ==
        std::vector<std::string>{"queued: lookups stopped", "running: lookups stopped"});
  worker->Submit(out.Returns("late"), out.Gives("late"));
  worker->RunCompletions();
  CHECK(out.abandoned.back() == "late: lookups stopped");
  // Destroyed with a thread still blocked: the thread keeps what it needs.
  worker.reset();
  Release(fifo);
  std::this_thread::sleep_for(50ms);
  CHECK(out.completed.empty());
}

namespace {

// Lookups that block until released (no CPU: a slow file). Shared with
// the lookups, and released when the test ends, pass or fail, so that no
// thread is left waiting on a gate that is gone.
struct Gate : std::enable_shared_from_this<Gate> {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  std::atomic<int> inside{0};
  void Release() {
    std::lock_guard<std::mutex> lock(mutex);
    open = true;
    cv.notify_all();
  }
  LookupWorker::Work Waits(Outcomes& out, std::string name) {
    return [self = shared_from_this(), &out, name] {
      self->inside++;
      std::unique_lock<std::mutex> lock(self->mutex);
      self->cv.wait(lock, [&] { return self->open; });
      return std::function<void()>([&out, name] { out.completed.push_back(name); });
    };
  }
};

// A gate, released when the test leaves its scope.
struct OpenedAtEnd {
  std::shared_ptr<Gate> gate = std::make_shared<Gate>();
  ~OpenedAtEnd() { gate->Release(); }
  Gate* operator->() { return gate.get(); }
};

}  // namespace

TEST_CASE("one user's many slow lookups do not delay another user's") {
  LookupWorker worker;  // three threads, at most two per user
  Outcomes out;
  OpenedAtEnd gate;
  constexpr uint32_t kAttacker = 65534, kVictim = 1000;
  for (int i = 0; i < 20; i++)
    worker.Submit(gate->Waits(out, "slow"), out.Gives("slow"), kAttacker);
  Until(worker, [&] { return gate->inside > 0; });
  worker.Submit(out.Returns("victim"), out.Gives("victim"), kVictim);
  for (int i = 0; i < 300 && out.completed.empty(); i++) {
    worker.RunCompletions();
    std::this_thread::sleep_for(10ms);
  }
  CHECK(out.completed == std::vector<std::string>{"victim"});
  CHECK(gate->inside == 2);  // the attacker's lookups hold two threads, not all three
  gate->Release();
  REQUIRE(worker.WaitIdle(10s));
  CHECK(out.completed.size() == 21);
  CHECK(out.abandoned.empty());
}

TEST_CASE("users take turns: a user's lookup waits behind at most one of each other user's") {
  LookupWorker::Limits limits;
  limits.threads = 1;
  LookupWorker worker(limits);
  Outcomes out;
  OpenedAtEnd gate;
  worker.Submit(gate->Waits(out, "first"), out.Gives("first"), 1);
  Until(worker, [&] { return gate->inside > 0; });
  for (int i = 0; i < 3; i++) worker.Submit(out.Returns("a"), out.Gives("a"), 1);
  worker.Submit(out.Returns("b"), out.Gives("b"), 2);
  gate->Release();
  REQUIRE(worker.WaitIdle(10s));
  CHECK(out.completed == std::vector<std::string>{"first", "a", "b", "a", "a"});
}

TEST_CASE("one user cannot fill the queue for everyone") {
  LookupWorker::Limits limits;
  limits.threads = 1;
  limits.max_queued = 8;
  limits.max_queued_per_user = 4;
  LookupWorker worker(limits);
  Outcomes out;
  OpenedAtEnd gate;
  worker.Submit(gate->Waits(out, "first"), out.Gives("first"), 1);
  Until(worker, [&] { return gate->inside > 0; });
  for (int i = 0; i < 6; i++) worker.Submit(out.Returns("a"), out.Gives("a"), 1);
  worker.Submit(out.Returns("b"), out.Gives("b"), 2);
  worker.RunCompletions();
  REQUIRE(out.abandoned.size() == 2);
  CHECK(out.abandoned[0] == "a: lookup queue full for its user (4 waiting)");
  gate->Release();
  REQUIRE(worker.WaitIdle(10s));
  CHECK(std::count(out.completed.begin(), out.completed.end(), "b") == 1);
}

TEST_CASE("a lookup that works longer than max_run is given up and counted") {
  LookupWorker::Limits limits;
  limits.max_run = 300ms;
  LookupWorker worker(limits);
  Outcomes out;
  auto stop = std::make_shared<std::atomic<bool>>(false);
  struct StopAtEnd {
    std::shared_ptr<std::atomic<bool>> stop;
    ~StopAtEnd() { *stop = true; }
  } stop_at_end{stop};
  // CPU for as long as it is let: never judged stuck, only too long.
  worker.Submit(
      [stop] {
        volatile uint64_t x = 0;
        const auto end = std::chrono::steady_clock::now() + 20s;
        while (!*stop && std::chrono::steady_clock::now() < end)
          for (int i = 0; i < 100000; i++) x = x + static_cast<uint64_t>(i);
        return std::function<void()>([] {});
      },
      out.Gives("spins"), 7);
  for (int i = 0; i < 500 && out.abandoned.empty(); i++) {
    worker.RunCompletions();
    std::this_thread::sleep_for(10ms);
  }
  REQUIRE(out.abandoned.size() == 1);
  CHECK(out.abandoned[0].rfind("spins: lookup ran longer than", 0) == 0);
  CHECK(worker.stats().overran == 1);
  // Its user is served again, on another thread.
  worker.Submit(out.Returns("next"), out.Gives("next"), 7);
  for (int i = 0; i < 300 && out.completed.empty(); i++) {
    worker.RunCompletions();
    std::this_thread::sleep_for(10ms);
  }
  CHECK(out.completed == std::vector<std::string>{"next"});
}

TEST_CASE("one user's overrunning lookups do not take away another user's thread") {
  LookupWorker::Limits limits;  // three threads, two per user, four stuck at most
  limits.max_run = 100ms;
  LookupWorker worker(limits);
  Outcomes out;
  OpenedAtEnd gate;
  constexpr uint32_t kAttacker = 65534, kVictim = 1000;
  // Each hangs past max_run and is given up; the attacker's next ones must
  // wait for its given-up threads, not take fresh ones until none are left.
  for (int i = 0; i < 8; i++)
    worker.Submit(gate->Waits(out, "hangs"), out.Gives("hangs"), kAttacker);
  for (int i = 0; i < 150; i++) {
    worker.RunCompletions();
    std::this_thread::sleep_for(10ms);
  }
  CHECK(worker.stats().overran == 2);  // its two threads, then its others wait
  worker.Submit(out.Returns("victim"), out.Gives("victim"), kVictim);
  for (int i = 0; i < 300 && out.completed.empty(); i++) {
    worker.RunCompletions();
    std::this_thread::sleep_for(10ms);
  }
  CHECK(out.completed == std::vector<std::string>{"victim"});
  for (const std::string& a : out.abandoned) CHECK(a.find("stalled") == std::string::npos);
  gate->Release();
  worker.Stop();  // the attacker's waiting ones end here, while `out` is alive
}

namespace {

// The pool's lock, held by another thread until the test lets it go: what a
// lookup thread (nice 10) preempted while it holds the lock does to the
// caller (lcpid's loop, nice 0) while busier work keeps it off every CPU.
// Let go after 5 s anyway, so that a caller that waits for the lock fails
// the test (`released` is then true when it returns) rather than hangs it.
class LockHolder {
 public:
  explicit LockHolder(LookupWorker& worker)
      : thread_([this, &worker] {
          std::unique_lock<std::mutex> pool = worker.HoldLockForTest();
          std::unique_lock<std::mutex> lock(mutex_);
          held_ = true;
          cv_.notify_all();
          cv_.wait_for(lock, 5s, [&] { return let_go_; });
          released = true;
        }) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return held_; });
  }
  ~LockHolder() { LetGo(); }
  void LetGo() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      let_go_ = true;
      cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
  }
  std::atomic<bool> released{false};

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool held_ = false;
  bool let_go_ = false;
  std::thread thread_;
};

}  // namespace

TEST_CASE(
    "the caller never waits for the pool's lock: Submit, RunCompletions and stats "
    "return while another thread holds it") {
  LookupWorker worker;
  Outcomes out;
  worker.Submit(out.Returns("before"), out.Gives("before"));
  REQUIRE(worker.WaitIdle(5s));
  {
    LockHolder holder(worker);
    const lcpi::LookupStats before = worker.stats();  // the last figures read
    worker.Submit(out.Returns("while held"), out.Gives("while held"));
    CHECK(worker.RunCompletions() == 0);
    const lcpi::LookupStats during = worker.stats();
    CHECK_FALSE(holder.released);  // every call above returned with the lock still held
    CHECK(before.submitted == 1);
    CHECK(before.completed == 1);
    CHECK(during.submitted == 2);
    CHECK(during.queued == 1);  // in the caller's backlog, not yet handed over
    CHECK(out.completed == std::vector<std::string>{"before"});
  }
  REQUIRE(worker.WaitIdle(5s));  // the backlog is handed over once the lock is free
  CHECK(out.completed == std::vector<std::string>{"before", "while held"});
  CHECK(out.abandoned.empty());
  const lcpi::LookupStats after = worker.stats();
  CHECK(after.submitted == 2);
  CHECK(after.completed == 2);
  CHECK(after.queued == 0);
}

TEST_CASE("the caller's backlog is bounded by max_queued, and Stop ends what waits in it") {
  LookupWorker worker(LookupWorker::Limits{2, 60s, 4, 1});
  Outcomes out;
  {
    LockHolder holder(worker);
    worker.Submit(out.Returns("q1"), out.Gives("q1"));
    worker.Submit(out.Returns("q2"), out.Gives("q2"));
    worker.Submit(out.Returns("q3"), out.Gives("q3"));  // one too many
    CHECK(out.abandoned.empty());                       // not inside Submit
    worker.RunCompletions();                            // the lock still held
    CHECK_FALSE(holder.released);
    REQUIRE(out.abandoned.size() == 1);
    CHECK(out.abandoned[0] == "q3: lookup queue full (2 waiting)");
    const lcpi::LookupStats st = worker.stats();
    CHECK(st.refused == 1);
    CHECK(st.queued == 2);
  }
  // Stop takes the lock (it may wait): what was submitted before it ends
  // as stopped, as queued lookups do, never run and never lost.
  worker.Stop();
  CHECK(out.abandoned == std::vector<std::string>{"q3: lookup queue full (2 waiting)",
                                                  "q1: lookups stopped", "q2: lookups stopped"});
  CHECK(out.completed.empty());
  const lcpi::LookupStats st = worker.stats();
  CHECK(st.submitted == 3);
  CHECK(st.refused == 1);
  CHECK(st.abandoned == 2);
  CHECK(st.queued == 0);
}

TEST_CASE("a given-up lookup's result is released without the pool's lock") {
  // Its result may hold a descriptor whose close waits for a file system
  // that stopped answering (a FUSE mount's FLUSH): released with the lock
  // held, that stopped every other lookup, and WaitIdle and Stop with them.
  LookupWorker::Limits limits;  // three threads, two per user
  limits.max_run = 100ms;
  LookupWorker worker(limits);
  Outcomes out;
  OpenedAtEnd returns;   // the given-up lookup returns once this opens
  OpenedAtEnd releases;  // and its result's release waits for this one
  auto releasing = std::make_shared<std::atomic<bool>>(false);
  auto released = std::make_shared<std::atomic<bool>>(false);
  // What the result holds: its release blocks until `releases` opens, or
  // 5 s pass (so that a release under the lock fails the test, not hangs it).
  struct BlocksWhenReleased {
    BlocksWhenReleased(std::shared_ptr<Gate> g, std::shared_ptr<std::atomic<bool>> ing,
                       std::shared_ptr<std::atomic<bool>> ed)
        : gate(std::move(g)), releasing(std::move(ing)), released(std::move(ed)) {}
    BlocksWhenReleased(const BlocksWhenReleased&) = delete;
    BlocksWhenReleased& operator=(const BlocksWhenReleased&) = delete;
    std::shared_ptr<Gate> gate;
    std::shared_ptr<std::atomic<bool>> releasing, released;
    ~BlocksWhenReleased() {
      *releasing = true;
      std::unique_lock<std::mutex> lock(gate->mutex);
      gate->cv.wait_for(lock, 5s, [&] { return gate->open; });
      *released = true;
    }
  };
  worker.Submit(
      [gate = returns.gate,
       held = std::make_shared<BlocksWhenReleased>(releases.gate, releasing, released)]() mutable {
        {
          std::unique_lock<std::mutex> lock(gate->mutex);
          gate->cv.wait(lock, [&] { return gate->open; });
        }
        return std::function<void()>([held = std::move(held)] {});
      },
      out.Gives("given up"), 1);
  for (int i = 0; i < 500 && out.abandoned.empty(); i++) {
    worker.RunCompletions();
    std::this_thread::sleep_for(10ms);
  }
  REQUIRE(out.abandoned.size() == 1);  // ran longer than max_run
  returns->Release();
  for (int i = 0; i < 500 && !*releasing; i++) std::this_thread::sleep_for(10ms);
  REQUIRE(*releasing);
  // Another user's lookup runs and ends, and WaitIdle returns, while that
  // release still waits.
  bool still_releasing = false;
  worker.Submit(
      [released, &still_releasing] {
        return std::function<void()>(
            [released, &still_releasing] { still_releasing = !*released; });
      },
      out.Gives("other"), 2);
  CHECK(worker.WaitIdle(10s));
  CHECK(still_releasing);
  CHECK(out.abandoned.size() == 1);
}
