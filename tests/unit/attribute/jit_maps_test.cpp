// jit_maps_test.cpp - JitMaps (libprofile/attribute/jit_maps.h) on a /proc
// laid out in a temporary directory: a pc a map names goes to the process's
// JIT image, one not named stays unresolved, misses re-read the map at most
// once per second, the exit read goes through the root held while the
// process lived, and names reach the store once.
#include "libprofile/attribute/jit_maps.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "attribute/jitdump_records.h"
#include "test_files.h"

using lcpi::ImageKind;
using lcpi::ImageTable;
using lcpi::JitMaps;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

namespace {

constexpr uint64_t kSecond = 1000000000ull;

// /proc/PID with stat and root (a link to a directory of its own, as the
// kernel's magic link leads to the process's root), plus the boot id.
struct FakeProc {
  TempDir dir;
  FakeProc() {
    std::filesystem::create_directories(dir / "proc/sys/kernel/random");
    WriteFile(dir / "proc/sys/kernel/random/boot_id", "boot-1\n");
  }
  std::string proc() const { return dir / "proc"; }
  std::string Rootfs(uint32_t pid) const { return dir / ("rootfs-" + std::to_string(pid)); }
  std::string Map(uint32_t pid) const {
    return Rootfs(pid) + "/tmp/perf-" + std::to_string(pid) + ".map";
  }
  void AddProcess(uint32_t pid, uint64_t start_ticks) {
    std::string base = proc() + "/" + std::to_string(pid);
    std::filesystem::create_directories(base);
    std::filesystem::create_directories(Rootfs(pid) + "/tmp");
    // Field 22 is the start time; the name holds blanks and a ')'.
    WriteFile(base + "/stat", std::to_string(pid) +
                                  " (we ird) name) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " +
                                  std::to_string(start_ticks) + " 0 0\n");
    REQUIRE(symlink(Rootfs(pid).c_str(), (base + "/root").c_str()) == 0);
  }
  void Append(uint32_t pid, const std::string& lines) {
    std::ofstream out(Map(pid), std::ios::app);
    out << lines;
  }
};

}  // namespace

TEST_CASE("a pc named by the map goes to the process's JIT image") {
  FakeProc f;
  f.AddProcess(100, 777);
  f.Append(100, "7f0000001000 100 JS:*hot app.js:1\n7f0000001100 40 JS:~cold app.js:9\n");
  ImageTable images;
  JitMaps jit(images, f.proc());
  jit.Watch(100);

  auto hit = jit.Resolve(100, "node", 0x7f0000001010, kSecond);
  REQUIRE(hit);
  CHECK(hit->offset == 0x7f0000001010);  // the process's address
  const auto& image = images.at(hit->image);
  CHECK(image.kind == ImageKind::kJit);
  CHECK(image.identity == "jit:boot-1:100:777");
  CHECK(image.path == "[jit node 100]");
  CHECK_FALSE(jit.Resolve(100, "node", 0x7f0000001140, kSecond));  // past the last end
  CHECK_FALSE(jit.Resolve(100, "node", 0x7f0000000fff, kSecond));  // before the first
  CHECK(jit.stats().reads == 1);

  // Only names of sampled code go to the store.
  auto unstored = jit.Unstored(hit->image, {0x7f0000001010, 0x7f0000001020});
  REQUIRE(unstored.size() == 1);
  CHECK(unstored[0]->name == "JS:*hot app.js:1");
}

TEST_CASE("a miss re-reads the map at most once a second") {
  FakeProc f;
  f.AddProcess(200, 1);
  f.Append(200, "1000 10 first\n");
  ImageTable images;
  JitMaps jit(images, f.proc());
  jit.Watch(200);
  REQUIRE(jit.Resolve(200, "java", 0x1000, 10 * kSecond));
  f.Append(200, "2000 10 later\n");
  CHECK_FALSE(jit.Resolve(200, "java", 0x2000, 10 * kSecond + kSecond / 2));  // too soon
  CHECK_FALSE(jit.Resolve(200, "java", 0x2000, 9 * kSecond));  // an older buffer: not due either
  CHECK(jit.stats().reads == 1);
  auto hit = jit.Resolve(200, "java", 0x2004, 11 * kSecond);
  REQUIRE(hit);
  CHECK(hit->offset == 0x2004);
  CHECK(jit.stats().reads == 2);
  CHECK(jit.stats().symbols == 2);  // "first" was not taken twice
}

TEST_CASE("the exit read goes through the root held while the process lived") {
  FakeProc f;
  f.AddProcess(300, 5);
  ImageTable images;
  JitMaps jit(images, f.proc());
  jit.Watch(300);
  CHECK(jit.watched() == 1);
  // The process is gone from /proc; its map gained the code it ran last.
  std::filesystem::remove_all(f.proc() + "/300");
  f.Append(300, "4000 20 last-words\n");
  jit.OnExit(300, 50 * kSecond);
  CHECK(jit.watched() == 0);
  auto hit = jit.Resolve(300, "node", 0x4008, 50 * kSecond);
  REQUIRE(hit);
  CHECK(images.at(hit->image).identity == "jit:boot-1:300:5");
}

TEST_CASE("a process with no map, and one that is gone, resolve nothing") {
  FakeProc f;
  f.AddProcess(400, 9);
  ImageTable images;
  JitMaps jit(images, f.proc());
  CHECK_FALSE(jit.Resolve(400, "qemu", 0x1000, kSecond));  // watched on first use, no map
  CHECK(jit.stats().missing == 1);
  CHECK_FALSE(jit.Resolve(401, "gone", 0x1000, kSecond));
  CHECK(images.size() == 0);
}

TEST_CASE("names reach the store once, and exited processes are reaped") {
  FakeProc f;
  f.AddProcess(500, 3);
  f.Append(500, "1000 10 a\n");
  ImageTable images;
  JitMaps jit(images, f.proc());
  jit.Watch(500);
  auto hit = jit.Resolve(500, "node", 0x1000, kSecond);
  REQUIRE(hit);
  auto first = jit.Unstored(hit->image, {0x1000, 0x1004});
  CHECK(first.size() == 1);
  jit.MarkStored(hit->image, first);
  CHECK(jit.Unstored(hit->image, {0x1000}).empty());

  f.Append(500, "2000 10 b\n");
  REQUIRE(jit.Resolve(500, "node", 0x2000, 3 * kSecond));
  auto fresh = jit.Unstored(hit->image, {0x1000, 0x2000});
  REQUIRE(fresh.size() == 1);
  CHECK(fresh[0]->name == "b");

  jit.OnExit(500, 4 * kSecond);
  jit.Reap(4 * kSecond);  // exited at, not before: kept
  CHECK(jit.Resolve(500, "node", 0x2000, 5 * kSecond));
  jit.Reap(5 * kSecond);
  CHECK(jit.Unstored(hit->image, {0x2000}).empty());  // forgotten
}

// Issue 25: MarkStored looked the names up again by offset at commit time,
// after a read had put new code at the same address: that name was marked
// stored, never having been, and never reached the store.
TEST_CASE("only the names a batch carried are marked stored") {
  FakeProc f;
  f.AddProcess(510, 3);
  f.Append(510, "1000 10 old\n");
  ImageTable images;
  JitMaps jit(images, f.proc());
  jit.Watch(510);
  auto hit = jit.Resolve(510, "node", 0x1000, kSecond);
  REQUIRE(hit);
  auto carried = jit.Unstored(hit->image, {0x1000});
  REQUIRE(carried.size() == 1);
  CHECK(carried[0]->name == "old");
  // While the batch is written, new code lands at the same address and a
  // miss reads the map again.
  f.Append(510, "1000 10 new\n");
  CHECK_FALSE(jit.Resolve(510, "node", 0x3000, 3 * kSecond));
  jit.MarkStored(hit->image, carried);
  auto next = jit.Unstored(hit->image, {0x1000});
  REQUIRE(next.size() == 1);
  CHECK(next[0]->name == "new");
}

// Issue 25: an EXIT record lost (a flooded side-band ring) left the old
// process watched under its pid: the process that reused the pid was named
// from the old one's map, under the old one's image and user. Its start
// time tells them apart.
TEST_CASE("a pid reused after a lost exit record is a new process") {
  FakeProc f;
  f.AddProcess(700, 5);
  f.Append(700, "1000 10 old_fn\n");
  ImageTable images;
  JitMaps jit(images, f.proc());
  jit.Watch(700);
  auto old_hit = jit.Resolve(700, "node", 0x1000, kSecond);
  REQUIRE(old_hit);
  CHECK(images.at(old_hit->image).identity == "jit:boot-1:700:5");

  // No exit record: another process now has pid 700, and its own map.
  std::string stat = f.proc() + "/700/stat";
  WriteFile(stat, "700 (node) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0\n");
  std::filesystem::remove(f.Map(700));
  f.Append(700, "1000 10 new_fn\n");
  SECTION("seen when it maps JIT code") { jit.Watch(700); }
  SECTION("seen at the next read") { CHECK_FALSE(jit.Resolve(700, "node", 0x9000, 3 * kSecond)); }

  auto hit = jit.Resolve(700, "node", 0x1000, 5 * kSecond);
  REQUIRE(hit);
  CHECK(images.at(hit->image).identity == "jit:boot-1:700:9");
  auto names = jit.Unstored(hit->image, {0x1000});
  REQUIRE(names.size() == 1);
  CHECK(names[0]->name == "new_fn");
  CHECK(jit.stats().reused == 1);
}

// Issue 25: the caps were per process (a million names of up to 4 KiB)
// over up to 4,096 processes. A global budget, shared equally among the
// processes watched, bounds them all; what goes beyond is counted.
TEST_CASE("JIT names stay within a global budget, shared among the processes") {
  FakeProc f;
  f.AddProcess(800, 1);
  f.AddProcess(801, 2);
  std::string many, few;
  for (int i = 0; i < 100; i++) {
    char line[64];
    snprintf(line, sizeof line, "%x 10 greedy_%040d\n", 0x1000 + 0x10 * i, i);
    many += line;
  }
  for (int i = 0; i < 5; i++) {
    char line[64];
    snprintf(line, sizeof line, "%x 10 modest\n", 0x1000 + 0x10 * i);
    few += line;
  }
  f.Append(800, many);
  f.Append(801, few);
  ImageTable images;
  const uint64_t budget = 20 * 256;  // some 25 names' worth
  JitMaps jit(images, f.proc(), {}, budget);
  jit.Watch(800);
  jit.Watch(801);
  REQUIRE(jit.Resolve(800, "node", 0x1000, kSecond));
  CHECK(jit.stats().name_bytes <= budget / 2);  // its share
  CHECK(jit.stats().over_budget > 0);
  // The other process still gets its names.
  auto hit = jit.Resolve(801, "node", 0x1000, kSecond);
  REQUIRE(hit);
  CHECK(jit.Unstored(hit->image, {0x1000, 0x1010, 0x1020, 0x1030, 0x1040}).size() == 5);
  CHECK(jit.stats().name_bytes <= budget);
  // Reaped, its names give their bytes back.
  jit.OnExit(800, 2 * kSecond);
  jit.OnExit(801, 2 * kSecond);
  jit.Reap(3 * kSecond);
  CHECK(jit.stats().name_bytes == 0);
}

// Issue 25: a jitdump's names kept for CODE_MOVE records were a second
// copy of each name, bounded per process only (a million, of up to 4 KiB).
// What is kept for moves is now counted against the same budget and share:
// a dump loading the same code under ever new indexes stays within it, and
// a move of code whose index was not kept is counted bad.
TEST_CASE("a jitdump's names kept for moves stay within the process's share") {
  FakeProc f;
  f.AddProcess(900, 1);
  f.AddProcess(901, 2);  // two processes watched: each may take half the budget
  const std::string dump = f.Rootfs(900) + "/tmp/jit-900.dump";
  const std::string name = "JS:" + std::string(40, 'x');
  std::string loads = lcpi::testing::Header();
  for (int i = 0; i < 100; i++)
    loads += lcpi::testing::Load(0x1000 + 0x100 * i, 0x10, i, name + std::to_string(i));
  // The same code under 10,000 new indexes: no new name, only more to move.
  for (int i = 100; i < 10100; i++) loads += lcpi::testing::Load(0x1000, 0x10, i, name + "0");
  WriteFile(dump, loads);
  ImageTable images;
  const uint64_t budget = 20 * 256;
  JitMaps jit(images, f.proc(), {}, budget);
  jit.Watch(900);
  jit.Watch(901);
  jit.SetJitdump(900, "/tmp/jit-900.dump");
  REQUIRE(jit.Resolve(900, "node", 0x1000, kSecond));
  CHECK(jit.stats().name_bytes <= budget / 2);
  // The indexes past the share are not kept, and counted.
  CHECK(jit.stats().over_budget > 10000);
  CHECK(jit.stats().bad_lines == 0);
  // A later read moves code of the last load, whose name was not kept:
  // bad, as a move of code loaded beyond the names limit is.
  {
    std::ofstream out(dump, std::ios::app);
    out << lcpi::testing::Move(0x1000 + 0x100 * 99, 0x9000, 0x10, 99);
  }
  CHECK_FALSE(jit.Resolve(900, "node", 0x9000, 3 * kSecond));
  CHECK(jit.stats().bad_lines == 1);
  CHECK(jit.stats().name_bytes <= budget / 2);
  jit.OnExit(900, 4 * kSecond);
  jit.OnExit(901, 4 * kSecond);
  jit.Reap(5 * kSecond);
  CHECK(jit.stats().name_bytes == 0);
}

TEST_CASE("a jitdump's move in a later read names the moved code") {
  FakeProc f;
  f.AddProcess(910, 1);
  const std::string dump = f.Rootfs(910) + "/tmp/jit-910.dump";
  WriteFile(dump, lcpi::testing::Header() + lcpi::testing::Load(0x1000, 0x10, 7, "JS:moved"));
  ImageTable images;
  JitMaps jit(images, f.proc());
  jit.SetJitdump(910, "/tmp/jit-910.dump");
  REQUIRE(jit.Resolve(910, "node", 0x1000, kSecond));
  {
    std::ofstream out(dump, std::ios::app);
    out << lcpi::testing::Move(0x1000, 0x9000, 0x10, 7)
        << lcpi::testing::Move(0x1000, 0xa000, 0x10, 8);
  }
  auto hit = jit.Resolve(910, "node", 0x9004, 3 * kSecond);
  REQUIRE(hit);
  auto names = jit.Unstored(hit->image, {0x9004});
  REQUIRE(names.size() == 1);
  CHECK(names[0]->name == "JS:moved");
  CHECK(jit.stats().bad_lines == 1);  // index 8 was never loaded
}

TEST_CASE("with lookups, a miss answers at once and the read's end is told") {
  FakeProc f;
  f.AddProcess(600, 4);
  f.Append(600, "1000 10 hot\n");
  ImageTable images;
  std::vector<uint32_t> told;
  JitMaps jit(images, f.proc());
  lcpi::LookupWorker lookups;  // last: stopped before what its results touch goes
  jit.SetLookups(&lookups);
  jit.SetOnRead([&](uint32_t pid) { told.push_back(pid); });
  jit.Watch(600);  // the root is opened on the lookups' thread
  CHECK(jit.Reading(600));
  // Nothing read yet: a miss, and an answer on its way.
  CHECK_FALSE(jit.Resolve(600, "node", 0x1004, kSecond));
  CHECK(jit.Reading(600));
  REQUIRE(lookups.WaitIdle(std::chrono::seconds(10)));
  CHECK(told == std::vector<uint32_t>{600});
  CHECK_FALSE(jit.Reading(600));
  auto hit = jit.Resolve(600, "node", 0x1004, kSecond);
  REQUIRE(hit);
  CHECK(images.at(hit->image).identity == "jit:boot-1:600:4");

  // The exit read, through the root held, also runs there: reaped only after it.
  std::filesystem::remove_all(f.proc() + "/600");
  f.Append(600, "2000 10 last\n");
  jit.OnExit(600, 5 * kSecond);
  jit.Reap(10 * kSecond);
  REQUIRE(lookups.WaitIdle(std::chrono::seconds(10)));
  auto last = jit.Resolve(600, "node", 0x2004, 6 * kSecond);
  REQUIRE(last);
  jit.Reap(10 * kSecond);
  CHECK_FALSE(jit.Resolve(600, "node", 0x2004, 12 * kSecond));
}
