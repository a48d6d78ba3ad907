// process_tracker_test.cpp - address-space histories: fork copies, exec
// replaces, exit ends, records resolve against the space live in their
// window, pid reuse keeps programs apart, late events are placed by time,
// and reaping keeps what unresolved buffers may still name.
#include <catch2/catch.hpp>

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
