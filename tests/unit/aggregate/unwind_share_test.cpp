// unwind_share_test.cpp - the DWARF unwinder's share per user (aggregator.h,
// Aggregator::UnwindWorkerLimits): stacks are unwound on lcpid's worker
// under the uid of their process, so one user whose walks are slow or stuck
// (a hook holds them, as a file on a hung mount or a long CFI program
// would) fills only its own share, and another user's stacks are still
// unwound. The stacks of one process share one snapshot of its mappings
// until they change, a user's stacks in flight hold a bounded number of
// bytes, and a user's walks take a bounded share of CPU (the allowance).
// Real processes of two users (root, and a child that drops to
// nobody), a real ProcessTracker and LookupWorker.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "libprofile/aggregate/aggregator.h"
#include "libprofile/base/clock_ns.h"

using lcpi::Aggregator;
using lcpi::ImageTable;
using lcpi::LookupWorker;
using lcpi::ProcessTracker;
using lcpi::RecordBuffer;
using lcpi::StackSample;
using lcpi::UnwindTables;

namespace {

constexpr uint32_t kNobody = 65534;

// A child process of uid nobody, waiting until it is killed.
class OtherUser {
 public:
  OtherUser() {
    pid_ = fork();
    if (pid_ == 0) {
      if (setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(1);
      pause();
      _exit(0);
    }
    struct stat st {};
    for (int i = 0; i < 500; i++) {  // until its /proc entry says nobody
      std::string dir = "/proc/" + std::to_string(pid_);
      if (stat(dir.c_str(), &st) == 0 && st.st_uid == kNobody) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  ~OtherUser() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  uint32_t pid() const { return static_cast<uint32_t>(pid_); }

 private:
  pid_t pid_ = -1;
};

// A stack with a copy of its user stack: a pc in anonymous memory, no
// frame pointer, so its walk is one frame (ends "JIT code").
StackSample StackOf(uint32_t pid) {
  StackSample s;
  s.pid = pid;
  s.time = 10;
  s.pcs = {0x1100};
  s.user_regs.Set(lcpi::kDwarfPc, 0x1100);
  s.user_regs.Set(lcpi::kDwarfSp, 0x7000);
  s.user_stack.assign(64, 0);
  return s;
}

// Holds the walks of one pid until released.
struct Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return open; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mutex);
    open = true;
    cv.notify_all();
  }
};

// Two users' processes, this one's (root) and a child's of nobody, each
// with one anonymous mapping, and an aggregator that unwinds on a worker
// of its own. Tests set the hook and the allowance before adding stacks.
struct TwoUsers {
  OtherUser other;
  const uint32_t self = static_cast<uint32_t>(getpid());
  ImageTable images;
  ProcessTracker tracker;
  Aggregator agg{images, tracker, nullptr};
  UnwindTables tables{""};
  Gate gate;
  LookupWorker worker{Aggregator::UnwindWorkerLimits()};

  TwoUsers() {
    for (uint32_t pid : {self, other.pid()}) {
      tracker.OnComm(pid, "app", true, 0);
      tracker.OnMmap(pid, {0x1000, 0x2000, 0, lcpi::kNoImage}, 0);
    }
    agg.SetUnwinder(&tables, &worker);
  }
  // A walk the worker gave up as stuck runs on, on a thread of its own,
  // with `tables`, until the gate lets it go: it must end before they do
  // (also where a failed REQUIRE left the gate shut).
  ~TwoUsers() {
    gate.Open();
    for (int i = 0; i < 1000 && worker.stats().stuck_threads > 0; i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // `n` stacks of `pid`'s, in one buffer
  void Add(uint32_t pid, size_t n = 1) {
    RecordBuffer buffer;
    for (size_t i = 0; i < n; i++) buffer.stacks.push_back(StackOf(pid));
    agg.Add(buffer);
  }
  // Runs completions until done() or `seconds` passed.
  template <class Done>
  void RunUntil(Done done, int seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      worker.RunCompletions();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
};

}  // namespace

TEST_CASE("one user's stuck walks do not keep another user's stacks from being unwound") {
  REQUIRE(geteuid() == 0);  // a second user's process; the unit tests run as root
  TwoUsers u;
  const uint32_t slow = u.self;
  u.agg.SetUnwindHookForTest([&u, slow](uint32_t pid, const lcpi::UnwindRequest&) {
    if (pid == slow) u.gate.Wait();
  });

  // The slow user's stacks first, more than the whole queue, then the
  // other user's.
  constexpr uint64_t kOthers = 20;
  u.Add(slow, Aggregator::kMaxUnwinding + 100);
  u.Add(u.other.pid(), kOthers);
  u.RunUntil([&] { return u.agg.unwind_counts().unwound >= kOthers; }, 5);
  const Aggregator::UnwindCounts counts = u.agg.unwind_counts();
  INFO("unwound " << counts.unwound << ", not unwound " << counts.not_unwound);
  CHECK(counts.unwound == kOthers);  // every one of the other user's, none of the slow one's
  // The slow user's beyond its share are kept as they came, and counted.
  CHECK(counts.in_flight == Aggregator::kMaxUnwindingPerUser);
  CHECK(counts.over_share == Aggregator::kMaxUnwinding + 100 - Aggregator::kMaxUnwindingPerUser);
  CHECK(counts.not_unwound == counts.over_share);

  u.gate.Open();
  CHECK(u.worker.WaitIdle(std::chrono::seconds(10)));
  u.worker.Stop();
}

TEST_CASE("stacks of one process share one snapshot of its mappings until they change") {
  const uint32_t pid = static_cast<uint32_t>(getpid());
  ImageTable images;
  ProcessTracker tracker;
  tracker.OnComm(pid, "app", true, 0);
  tracker.OnMmap(pid, {0x1000, 0x2000, 0, lcpi::kNoImage}, 0);
  Aggregator agg(images, tracker, nullptr);
  UnwindTables tables("");
  std::mutex mutex;
  std::vector<std::shared_ptr<const lcpi::UnwindSpace>> seen;  // kept: no address reused
  agg.SetUnwindHookForTest([&](uint32_t, const lcpi::UnwindRequest& r) {
    std::lock_guard<std::mutex> lock(mutex);
    seen.push_back(r.space);
  });
  LookupWorker worker(Aggregator::UnwindWorkerLimits());
  agg.SetUnwinder(&tables, &worker);

  RecordBuffer buffer;
  for (int i = 0; i < 3; i++) buffer.stacks.push_back(StackOf(pid));
  agg.Add(buffer);
  REQUIRE(worker.WaitIdle(std::chrono::seconds(10)));
  tracker.OnMmap(pid, {0x3000, 0x4000, 0, lcpi::kNoImage}, 5);  // the space changes
  agg.Add(buffer);
  REQUIRE(worker.WaitIdle(std::chrono::seconds(10)));
  worker.Stop();

  REQUIRE(seen.size() == 6);
  CHECK(agg.unwind_counts().snapshots == 2);
  for (int i = 1; i < 3; i++) {
    CHECK(seen[i] == seen[0]);      // the first three: one snapshot
    CHECK(seen[3 + i] == seen[3]);  // the next three: another
  }
  CHECK(seen[3] != seen[0]);
  CHECK(seen[0]->maps.size() == 1);
  CHECK(seen[3]->maps.size() == 2);
}

TEST_CASE("a user's stacks in flight hold at most its share of bytes, and the rest are counted") {
  // A process with 8,000 mappings (any user may mmap one file that often):
  // its snapshot is ~256 KiB, counted for each of its stacks in flight.
  const uint32_t pid = static_cast<uint32_t>(getpid());
  ImageTable images;
  ProcessTracker tracker;
  tracker.OnComm(pid, "app", true, 0);
  constexpr uint64_t kMappings = 8000;
  for (uint64_t i = 0; i < kMappings; i++)
    tracker.OnMmap(pid, {0x1000 + i * 0x2000, 0x2000 + i * 0x2000, 0, lcpi::kNoImage}, 0);
  Aggregator agg(images, tracker, nullptr);
  UnwindTables tables("");
  Gate gate;
  agg.SetUnwindHookForTest([&gate](uint32_t, const lcpi::UnwindRequest&) { gate.Wait(); });
  LookupWorker worker(Aggregator::UnwindWorkerLimits());
  agg.SetUnwinder(&tables, &worker);

  RecordBuffer buffer;
  constexpr uint64_t kStacks = 100;
  for (uint64_t i = 0; i < kStacks; i++) buffer.stacks.push_back(StackOf(pid));
  agg.Add(buffer);
  const Aggregator::UnwindCounts counts = agg.unwind_counts();
  INFO("in flight " << counts.in_flight << ", " << counts.in_flight_bytes << " bytes");
  CHECK(counts.snapshots == 1);  // one for all 100
  CHECK(counts.in_flight_bytes <= Aggregator::kMaxUnwindBytesPerUser);
  CHECK(counts.in_flight_bytes > Aggregator::kMaxUnwindBytesPerUser / 2);
  CHECK(counts.in_flight < kStacks);
  CHECK(counts.over_share == kStacks - counts.in_flight);
  gate.Open();
  CHECK(worker.WaitIdle(std::chrono::seconds(10)));
  worker.Stop();
  CHECK(agg.unwind_counts().in_flight_bytes == 0);
  CHECK(agg.unwind_counts().unwound == counts.in_flight);
}

TEST_CASE(
    "a user whose walks cost more CPU than its allowance keeps the rest as frame pointers gave "
    "them") {
  REQUIRE(geteuid() == 0);  // a second user's process
  TwoUsers u;
  const uint32_t costly = u.self;
  // 2 ms of walks a second in all, 1 ms a user, 10 ms of it at once: a
  // costly user's walks of 2 ms (its unwind tables made so) are let
  // through 5 or 6 times, and the rest wait for the debt, repaid at 1 ms
  // a second.
  u.agg.set_unwind_cpu_allowance(2'000'000);
  u.agg.SetUnwindHookForTest([costly](uint32_t pid, const lcpi::UnwindRequest&) {
    if (pid != costly) return;
    const uint64_t until = lcpi::ThreadCpuNs() + 2'000'000;
    while (lcpi::ThreadCpuNs() < until) {
    }
  });
  // One stack at a time, each walk over before the next is taken (the
  // allowance charges a walk when it ends).
  auto take = [&](uint32_t pid) {
    u.Add(pid);
    REQUIRE(u.worker.WaitIdle(std::chrono::seconds(10)));
  };
  const auto t0 = std::chrono::steady_clock::now();
  constexpr uint64_t kCostly = 20;
  for (uint64_t i = 0; i < kCostly; i++) take(costly);
  const Aggregator::UnwindCounts after_costly = u.agg.unwind_counts();
  constexpr uint64_t kOthers = 5;
  for (uint64_t i = 0; i < kOthers; i++) take(u.other.pid());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Aggregator::UnwindCounts counts = u.agg.unwind_counts();
  u.worker.Stop();

  INFO("unwound " << after_costly.unwound << " of the costly user's " << kCostly << " in "
                  << seconds << " s, " << after_costly.cpu_ns << " ns of CPU");
  // 10 ms at once and 1 ms a second after: 5 walks, a sixth on what was
  // repaid meanwhile, and one more for each 2 ms repaid
  CHECK(after_costly.unwound >= 5);
  CHECK(after_costly.unwound <= 6 + static_cast<uint64_t>(seconds / 2) + 1);
  CHECK(after_costly.over_cpu == kCostly - after_costly.unwound);
  CHECK(after_costly.not_unwound == after_costly.over_cpu);
  CHECK(counts.unwound - after_costly.unwound == kOthers);  // the other user's, every one
  CHECK(counts.over_cpu == after_costly.over_cpu);
}

TEST_CASE("a walk the worker abandons is charged its time, to its user alone") {
  REQUIRE(geteuid() == 0);  // a second user's process
  TwoUsers u;
  const uint32_t stuck = u.self;
  u.agg.set_unwind_cpu_allowance(2'000'000);  // 1 ms a second a user, 10 ms at once
  u.agg.SetUnwindHookForTest([&u, stuck](uint32_t pid, const lcpi::UnwindRequest&) {
    if (pid == stuck) u.gate.Wait();  // idle: given up as stuck after 2 s
  });
  u.Add(stuck);
  u.RunUntil([&] { return u.agg.unwind_counts().in_flight == 0; }, 10);
  REQUIRE(u.agg.unwind_counts().in_flight == 0);  // abandoned
  // charged 2 s, 2,000 s of its allowance: its next stack is refused, the
  // other user's is unwound
  u.Add(stuck);
  CHECK(u.agg.unwind_counts().over_cpu == 1);
  u.Add(u.other.pid());
  u.RunUntil([&] { return u.agg.unwind_counts().unwound > 0; }, 5);
  const Aggregator::UnwindCounts counts = u.agg.unwind_counts();
  u.gate.Open();  // before any check can end the test: the stuck thread returns
  CHECK(u.worker.WaitIdle(std::chrono::seconds(10)));
  u.worker.Stop();
  CHECK(counts.unwound == 1);  // the other user's
  CHECK(counts.over_cpu == 1);
}
