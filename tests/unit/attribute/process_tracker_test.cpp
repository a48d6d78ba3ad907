// process_tracker_test.cpp - address-space histories: fork shares, exec
// replaces, exit ends, records resolve against the space live in their
// window, pid reuse keeps programs apart, late events are placed by time,
// reaping keeps what unresolved buffers may still name, and what a flood
// of mappings costs is bounded, per space and in all, with the rest counted.
#include <catch2/catch.hpp>

#include <malloc.h>

#include "libprofile/attribute/process_tracker.h"

using lcpi::Mapping;
using lcpi::ProcessTracker;
using lcpi::Resolution;

namespace {

Mapping Map(uint64_t start, uint64_t end, uint64_t pgoff, int32_t image) {
  return Mapping{start, end, pgoff, image};
}

}  // namespace

TEST_CASE("a pc resolves to its image and file offset") {
  ProcessTracker t;
  t.OnComm(10, "prog", true, 100);
  t.OnMmap(10, Map(0x1000, 0x3000, 0x5000, 7), 110);
  Resolution r = t.Resolve(10, 0x1234, 200, 300);
  CHECK(r.mapped);
  CHECK(r.image == 7);
  CHECK(r.offset == 0x5234);
  CHECK(r.comm == "prog");
  CHECK_FALSE(t.Resolve(10, 0x3000, 200, 300).mapped);  // end is exclusive
  CHECK_FALSE(t.Resolve(11, 0x1234, 200, 300).mapped);  // unknown pid
}

TEST_CASE("fork copies the parent's maps and exec starts an empty space") {
  ProcessTracker t;
  t.OnComm(1, "sh", true, 10);
  t.OnMmap(1, Map(0x1000, 0x2000, 0, 1), 11);
  t.OnFork(2, 1, 20);
  CHECK(t.Resolve(2, 0x1800, 21, 22).image == 1);
  t.OnComm(2, "tiny", true, 30);
  t.OnMmap(2, Map(0x1000, 0x2000, 0, 9), 31);
  // samples after the exec belong to the new program, before it to the shell's copy
  CHECK(t.Resolve(2, 0x1800, 32, 40).image == 9);
  CHECK(t.Resolve(2, 0x1800, 21, 25).image == 1);
  CHECK(t.Resolve(2, 0x1800, 32, 40).comm == "tiny");
  CHECK(t.address_spaces() == 3);
}

TEST_CASE("a reused pid does not give one program's samples to another") {
  ProcessTracker t;
  t.OnComm(5, "old", true, 10);
  t.OnMmap(5, Map(0x1000, 0x2000, 0, 1), 11);
  t.OnExit(5, 50);
  t.OnComm(5, "new", true, 60);
  t.OnMmap(5, Map(0x1000, 0x2000, 0, 2), 61);
  CHECK(t.Resolve(5, 0x1100, 20, 40).image == 1);
  CHECK(t.Resolve(5, 0x1100, 70, 80).image == 2);
  CHECK(t.Resolve(5, 0x1100, 20, 40).comm == "old");
}

TEST_CASE("events that arrive late are placed by their timestamps") {
  ProcessTracker t;
  t.OnComm(1, "parent", true, 5);
  t.OnMmap(1, Map(0x1000, 0x2000, 0, 1), 6);
  // the child's exec (on one CPU) is read before its fork (on another)
  t.OnComm(2, "child", true, 30);
  t.OnMmap(2, Map(0x1000, 0x2000, 0, 3), 31);
  t.OnFork(2, 1, 20);
  CHECK(t.Resolve(2, 0x1100, 40, 50).image == 3);
  CHECK(t.Resolve(2, 0x1100, 21, 25).image == 1);
}

TEST_CASE("a new mapping replaces the ones it overlaps") {
  ProcessTracker t;
  t.OnComm(1, "p", true, 1);
  t.OnMmap(1, Map(0x1000, 0x3000, 0, 1), 2);
  t.OnMmap(1, Map(0x2000, 0x4000, 0, 2), 3);
  CHECK(t.Resolve(1, 0x1800, 4, 5).mapped == false);  // the old one is gone whole
  CHECK(t.Resolve(1, 0x3800, 4, 5).image == 2);
}

TEST_CASE("reaping drops only spaces that ended before the point") {
  ProcessTracker t;
  t.OnComm(1, "a", true, 1);
  t.OnMmap(1, Map(0x1000, 0x2000, 0, 1), 2);
  t.OnExit(1, 10);
  t.OnComm(2, "b", true, 1);
  t.OnMmap(2, Map(0x1000, 0x2000, 0, 2), 2);
  t.Reap(5);  // pid 1 exited at 10: a buffer may still name it
  CHECK(t.Resolve(1, 0x1100, 3, 4).image == 1);
  t.Reap(11);
  CHECK_FALSE(t.Resolve(1, 0x1100, 3, 4).mapped);
  CHECK(t.Resolve(2, 0x1100, 3, 4).image == 2);
  CHECK(t.processes() == 1);
}

TEST_CASE("a record with no user pc takes the name of the space started by its buffer's end") {
  ProcessTracker t;
  t.OnComm(5, "sh", true, 10);
  t.OnMmap(5, Map(0x1000, 0x2000, 0, 1), 11);
  t.OnComm(5, "make", true, 50);  // exec
  CHECK(t.Comm(5, 40) == "sh");
  CHECK(t.Comm(5, 60) == "make");
  CHECK(t.Comm(5, 5) == "make");  // before anything known: the newest, as Resolve says
  CHECK(t.Comm(6, 60).empty());   // a pid never seen
  // the name Resolve gives a pc no space maps, in each case
  for (uint64_t when : {5, 40, 60}) CHECK(t.Resolve(5, 0x9000, when, when).comm == t.Comm(5, when));
  // a mapped pc names the space that maps it, even outside the window
  CHECK(t.Resolve(5, 0x1100, 60, 60).comm == "sh");
}

namespace {

// Bytes of the heap in use now: what the tracker's structures cost, seen
// from outside whatever it reports about itself.
size_t HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;  // large blocks are mapped apart
}

}  // namespace

TEST_CASE("samples older than a new mapping over the same addresses keep the one they ran in") {
  ProcessTracker t;
  t.OnComm(1, "p", true, 1);
  t.OnMmap(1, Map(0x1000, 0x3000, 0, 1), 2);  // dlopen of libA
  // dlclose, dlopen of libB at the same place: buffers sampled before it,
  // still queued when the mapping is applied, ran libA's code
  t.OnMmap(1, Map(0x1000, 0x3000, 0, 2), 50);
  CHECK(t.Resolve(1, 0x1800, 10, 40).image == 1);
  CHECK(t.Resolve(1, 0x1800, 60, 70).image == 2);
  CHECK(t.Resolve(1, 0x1800, 40, 60).image == 2);  // a window across it: the newer
  // once every buffer from before 50 is resolved, the old one is forgotten
  t.Reap(51);
  CHECK(t.Resolve(1, 0x1800, 10, 40).image == 2);
}

TEST_CASE("fork shares its parent's mappings: N forks of M mappings cost about M, not N*M") {
  constexpr int kMappings = 20000, kForks = 20;
  ProcessTracker t;
  t.OnComm(1, "parent", true, 1);
  for (int i = 0; i < kMappings; i++)
    t.OnMmap(1, Map(0x10000 + 0x2000ull * i, 0x11000 + 0x2000ull * i, 0, i % 5), 2);
  const size_t before = HeapInUse();
  for (uint32_t child = 2; child < 2 + kForks; child++) t.OnFork(child, 1, 10 + child);
  const size_t grown = HeapInUse() - before;
  INFO("heap grew " << grown << " bytes for " << kForks << " forks of " << kMappings
                    << " mappings");
  CHECK(grown < kMappings * sizeof(Mapping));  // one copy would be that much
  // every child still resolves its parent's mappings, and a child that maps
  // something gets a copy of its own: the parent and its siblings keep theirs
  CHECK(t.Resolve(7, 0x10000 + 0x2000ull * 123, 100, 100).image == 123 % 5);
  t.OnMmap(7, Map(0x10000, 0x11000, 0, 99), 100);
  CHECK(t.Resolve(7, 0x10800, 101, 101).image == 99);
  CHECK(t.Resolve(8, 0x10800, 101, 101).image == 0);
  CHECK(t.Resolve(1, 0x10800, 101, 101).image == 0);
}

TEST_CASE("one address space keeps a bounded number of mappings, and counts those it refuses") {
  // A process that maps and unmaps executable pages at ever new addresses:
  // no munmap record says the old ones went, so without a bound each stays.
  constexpr int kMappings = 200000;
  ProcessTracker t;
  const size_t before = HeapInUse();
  t.OnComm(1, "flood", true, 1);
  for (int i = 0; i < kMappings; i++)
    t.OnMmap(1, Map(0x10000 + 0x2000ull * i, 0x11000 + 0x2000ull * i, 0, -1), 2 + i);
  const size_t grown = HeapInUse() - before;
  INFO("heap grew " << grown << " bytes for " << kMappings << " mappings");
  CHECK(grown < 2 * 32768 * sizeof(Mapping) + 4096);
  CHECK(t.stats().mappings == t.limits().max_space_mappings);
  CHECK(t.stats().refused == kMappings - t.limits().max_space_mappings);
  // the first ones are kept; a mapping over a kept one still replaces it
  CHECK(t.Resolve(1, 0x10800, 3, 3).mapped);
  t.OnMmap(1, Map(0x10000, 0x11000, 0, 4), kMappings + 10);
  CHECK(t.Resolve(1, 0x10800, kMappings + 11, kMappings + 11).image == 4);
}

TEST_CASE("the tracker counts the mappings it stores, a shared array once") {
  ProcessTracker t;
  t.OnComm(1, "parent", true, 1);
  for (int i = 0; i < 100; i++)
    t.OnMmap(1, Map(0x10000 + 0x2000ull * i, 0x11000 + 0x2000ull * i, 0, 1), 2);
  for (uint32_t child = 2; child < 12; child++) t.OnFork(child, 1, 10);
  CHECK(t.stats().mappings == 100);
  t.OnMmap(5, Map(0x900000, 0x901000, 0, 2), 20);  // the child's own copy
  CHECK(t.stats().mappings == 201);
  t.OnComm(5, "other", true, 30);  // exec: the copy ends with the space
  t.OnExit(5, 40);
  t.Reap(50);
  CHECK(t.stats().mappings == 100);
  for (uint32_t pid = 1; pid < 12; pid++) t.OnExit(pid, 60);
  t.Reap(70);
  CHECK(t.stats().mappings == 0);
  CHECK(t.processes() == 0);
}

TEST_CASE("past the global bound only a small space may grow: one flood refuses no one else") {
  lcpi::TrackerLimits limits;
  limits.max_mappings = 1000;
  limits.max_space_mappings = 800;
  limits.fair_mappings = 10;
  limits.fair_reserve = 100;
  ProcessTracker t(limits);
  // two flooding processes of one user fill the bound
  for (uint32_t pid : {1u, 2u}) {
    t.OnComm(pid, "flood", true, 1);
    for (int i = 0; i < 800; i++)
      t.OnMmap(pid, Map(0x10000 + 0x2000ull * i, 0x11000 + 0x2000ull * i, 0, -1), 2);
  }
  CHECK(t.stats().mappings == 1000);
  CHECK(t.stats().refused == 600);
  // a victim's few mappings still go in, and resolve
  t.OnComm(3, "victim", true, 3);
  for (int i = 0; i < 5; i++)
    t.OnMmap(3, Map(0x400000 + 0x1000ull * i, 0x401000 + 0x1000ull * i, 0, 7), 4);
  CHECK(t.Resolve(3, 0x404800, 5, 5).image == 7);
  CHECK(t.stats().refused == 600);
  CHECK(t.stats().mappings == 1005);
  // a fork of a flooder shares; its first mapping of its own would copy 800: refused
  t.OnFork(4, 1, 6);
  t.OnMmap(4, Map(0x7000000, 0x7001000, 0, -1), 7);
  CHECK(t.stats().refused == 601);
  CHECK(t.stats().mappings == 1005);
  // many small spaces fill the reserve past the bound, and no more
  for (uint32_t pid = 100; pid < 200; pid++) {
    t.OnComm(pid, "small", true, 8);
    for (int i = 0; i < 10; i++)
      t.OnMmap(pid, Map(0x1000 + 0x1000ull * i, 0x2000 + 0x1000ull * i, 0, 7), 9);
  }
  CHECK(t.stats().mappings == limits.max_mappings + limits.fair_reserve);
  CHECK(t.stats().refused == 601 + 1000 - (limits.fair_reserve - 5));  // 5: the victim's
}

TEST_CASE("retired mappings are bounded per space and forgotten at reap") {
  ProcessTracker t;
  t.OnComm(1, "p", true, 1);
  for (uint64_t i = 0; i < 100; i++)
    t.OnMmap(1, Map(0x1000, 0x2000, 0, static_cast<int32_t>(i)), 10 + i);
  CHECK(t.stats().retired == t.limits().max_retired);
  CHECK(t.stats().retired_forgotten == 99 - t.limits().max_retired);
  CHECK(t.Resolve(1, 0x1800, 105, 106).image == 96);  // replaced at 107 by 97
  t.Reap(1000);
  CHECK(t.stats().retired == 0);
  CHECK(t.Resolve(1, 0x1800, 105, 106).image == 99);
}

TEST_CASE(
    "a mapping refused by the bound still drops what it overlaps: its samples are not the old "
    "image's") {
  lcpi::TrackerLimits limits;
  limits.max_mappings = 1000;
  limits.max_space_mappings = 800;
  limits.fair_mappings = 10;
  limits.fair_reserve = 100;
  ProcessTracker t(limits);
  for (uint32_t pid : {1u, 2u}) {
    t.OnComm(pid, "flood", true, 1);
    for (int i = 0; i < 800; i++)
      t.OnMmap(pid, Map(0x10000 + 0x2000ull * i, 0x11000 + 0x2000ull * i, 0, 5), 2);
  }
  // A fork shares pid 1's 800; mapping over one of them would copy 800: refused.
  t.OnFork(4, 1, 6);
  const uint64_t refused = t.stats().refused;
  t.OnMmap(4, Map(0x10000, 0x11000, 0, 9), 7);
  REQUIRE(t.stats().refused == refused + 1);
  CHECK_FALSE(t.Resolve(4, 0x10800, 8, 8).mapped);  // not the old image 5: unknown
  CHECK(t.Resolve(4, 0x10800, 6, 6).image == 5);    // older samples keep the old one
  CHECK(t.Resolve(1, 0x10800, 8, 8).image == 5);    // the parent's own is untouched
}

TEST_CASE("a process's cgroup: inherited at fork, none at exec until read, set where it was read") {
  ProcessTracker t;
  auto shell = std::make_shared<const std::string>("/user.slice/user-1000.slice/session-3.scope");
  auto nginx = std::make_shared<const std::string>("/system.slice/nginx.service");
  t.OnComm(1, "sh", true, 10);
  t.SetCgroup(1, 10, shell);
  t.OnMmap(1, Map(0x1000, 0x2000, 0, 1), 11);
  CHECK(t.Resolve(1, 0x1100, 20, 20).cgroup == *shell);
  CHECK(t.Cgroup(1, 20) == *shell);
  // A fork is where its parent is; its exec in none until read.
  t.OnFork(2, 1, 30);
  CHECK(t.Resolve(2, 0x1100, 31, 31).cgroup == *shell);
  t.OnComm(2, "nginx", true, 40);
  CHECK(t.Cgroup(2, 41).empty());
  // The service manager moved it between fork and exec: read at the exec.
  t.SetCgroup(2, 40, nginx);
  CHECK(t.Cgroup(2, 41) == *nginx);
  CHECK(t.Resolve(2, 0x9000, 41, 41).cgroup == *nginx);
  // Samples before the exec keep the space they ran in.
  CHECK(t.Cgroup(2, 35) == *shell);
  CHECK(t.Cgroup(1, 41) == *shell);
  // A pid never seen, a cgroup never read.
  CHECK(t.Cgroup(9, 41).empty());
  t.OnComm(3, "x", true, 50);
  CHECK(t.Resolve(3, 0x1100, 51, 51).cgroup.empty());
  // A read for a space that is not (42: no space started then) sets none.
  t.SetCgroup(2, 42, shell);
  CHECK(t.Cgroup(2, 43) == *nginx);
  CHECK(t.Cgroup(1, 43) == *shell);
}
