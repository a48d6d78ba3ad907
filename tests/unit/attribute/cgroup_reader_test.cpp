// cgroup_reader_test.cpp - reading each process's cgroup
// (libprofile/attribute/cgroup_reader.h): this process's real
// /proc/self/cgroup, a /proc of files written here (malformed, overlong, a
// process gone), and the bound on distinct paths held, each refusal counted.
#include "libprofile/attribute/cgroup_reader.h"

#include <linux/perf_event.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "libprofile/attribute/image_table.h"
#include "libprofile/attribute/process_tracker.h"
#include "libprofile/attribute/sideband.h"
#include "libprofile/base/cgroup_label.h"
#include "libprofile/base/lookup_worker.h"

using lcpi::CgroupReader;
using lcpi::CgroupRef;

namespace {

struct FakeProc {
  FakeProc() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "lcpi-cgroup-reader-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~FakeProc() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  void Write(uint32_t pid, const std::string& text) const {
    std::filesystem::create_directories(path / std::to_string(pid));
    std::ofstream(path / std::to_string(pid) / "cgroup") << text;
  }
  // /proc/PID/stat with the start time (field 22, clock ticks since boot).
  void WriteStart(uint32_t pid, uint64_t ticks) const {
    std::filesystem::create_directories(path / std::to_string(pid));
    std::ofstream(path / std::to_string(pid) / "stat")
        << pid << " (a b) c) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " << ticks << " 0 0\n";
  }
  std::filesystem::path path;
};

// The perf clock (CLOCK_MONOTONIC) now, and the start ticks of a process
// started `ahead` seconds from now (boottime, as /proc/PID/stat counts).
uint64_t PerfNow() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
uint64_t TicksAhead(int ahead) {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>((ts.tv_sec + ahead) * sysconf(_SC_CLK_TCK));
}

lcpi::SidebandEvent Exec(uint32_t pid, uint64_t time) {
  lcpi::SidebandEvent e;
  e.type = PERF_RECORD_COMM;
  e.exec = true;
  e.pid = pid;
  e.time = time;
  e.text = "x";
  return e;
}

lcpi::SidebandEvent Fork(uint32_t pid, uint32_t ppid, uint64_t time) {
  lcpi::SidebandEvent e;
  e.type = PERF_RECORD_FORK;
  e.pid = pid;
  e.ppid = ppid;
  e.time = time;
  return e;
}

// A side-band applying events to a tracker, each exec's cgroup requested
// from `reader`.
struct Applying {
  explicit Applying(CgroupReader& reader) { sideband.set_cgroups(&reader); }
  lcpi::ProcessTracker tracker;
  lcpi::ImageTable images;
  lcpi::Sideband sideband{tracker, images};
};

}  // namespace

TEST_CASE("this process's cgroup is read as the kernel wrote it") {
  std::ifstream f("/proc/self/cgroup");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto expected = lcpi::CgroupPathFromProc(text);
  REQUIRE(expected);
  CgroupReader reader;
  CgroupRef got = reader.Read(static_cast<uint32_t>(getpid()));
  REQUIRE(got);
  CHECK(*got == *expected);
  CHECK(reader.stats().read == 1);
  // A second read shares the one copy.
  CHECK(reader.Read(static_cast<uint32_t>(getpid())) == got);
  CHECK(reader.stats().paths == 1);
}

TEST_CASE("a file refused, a process gone: no cgroup, counted") {
  FakeProc proc;
  proc.Write(1, "0::/system.slice/nginx.service\n");
  proc.Write(2, "garbage\n");
  proc.Write(3, "0::/" + std::string(lcpi::kMaxCgroupPath, 'a') + "\n");
  proc.Write(4, std::string(lcpi::kMaxProcCgroupBytes + 100, 'x'));
  proc.Write(5, "");
  CgroupReader reader(proc.path.string());
  REQUIRE(reader.Read(1));
  CHECK(*reader.Read(1) == "/system.slice/nginx.service");
  CHECK_FALSE(reader.Read(2));
  CHECK_FALSE(reader.Read(3));
  CHECK_FALSE(reader.Read(4));
  CHECK_FALSE(reader.Read(5));
  CHECK_FALSE(reader.Read(6));  // no such process
  auto st = reader.stats();
  CHECK(st.read == 2);
  CHECK(st.refused == 4);
  CHECK(st.gone == 1);
}

TEST_CASE("distinct paths are bounded: unused ones are let go, in-use ones refuse new") {
  FakeProc proc;
  for (uint32_t pid = 1; pid <= 5; ++pid) proc.Write(pid, "0::/p" + std::to_string(pid) + "\n");
  CgroupReader reader(proc.path.string(), 3);
  CgroupRef a = reader.Read(1), b = reader.Read(2);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(reader.Read(3));  // held by nobody but the table
  CHECK(reader.stats().paths == 3);
  // Full: the unused one goes, the new one comes.
  CgroupRef d = reader.Read(4);
  REQUIRE(d);
  CHECK(*d == "/p4");
  CHECK(reader.stats().paths == 3);
  // Full of paths in use: refused and counted, what is held stays.
  CHECK_FALSE(reader.Read(5));
  CHECK(reader.stats().over_bound == 1);
  CHECK(reader.stats().paths == 3);
  CHECK(reader.Read(1) == a);  // a path held is still found
}

TEST_CASE("the /proc scan reads each process's cgroup") {
  lcpi::ProcessTracker tracker;
  lcpi::ImageTable images;
  CgroupReader reader;
  REQUIRE(lcpi::ScanProc(tracker, images, nullptr, "/proc", &reader) > 0);
  const uint32_t self = static_cast<uint32_t>(getpid());
  CgroupRef mine = reader.Read(self);
  REQUIRE(mine);
  CHECK(tracker.Cgroup(self, 1) == *mine);
  CHECK(reader.stats().read >= 2);
}

TEST_CASE("an exec whose cgroup is not read has none, never its parent's") {
  FakeProc proc;
  proc.Write(1, "0::/system.slice/sshd.service\n");
  proc.WriteStart(1, 1);
  CgroupReader reader(proc.path.string());
  Applying applying(reader);
  lcpi::ProcessTracker& tracker = applying.tracker;
  const uint64_t now = PerfNow();
  // sshd, its fork (moved to a session scope), whose exec ended before its
  // file was read: the shell is in no known cgroup, not in sshd.service.
  std::vector<lcpi::SidebandEvent> events{Exec(1, now - 3), Fork(2, 1, now - 2), Exec(2, now - 1)};
  applying.sideband.Apply(events);
  CHECK(tracker.Cgroup(1, now) == "/system.slice/sshd.service");
  CHECK(tracker.Cgroup(2, now - 2) == "/system.slice/sshd.service");  // the fork is where sshd is
  CHECK(tracker.Cgroup(2, now) == "");
  CHECK(reader.stats().gone == 1);
}

TEST_CASE("a pid reused before its exec's cgroup is read is not taken for it") {
  FakeProc proc;
  proc.Write(7, "0::/user.slice/user-1000.slice/session-9.scope\n");
  proc.WriteStart(7, TicksAhead(60));  // started after the exec: another process
  proc.Write(8, "0::/system.slice/cron.service\n");
  proc.WriteStart(8, 1);
  CgroupReader reader(proc.path.string());
  Applying applying(reader);
  lcpi::ProcessTracker& tracker = applying.tracker;
  const uint64_t now = PerfNow();
  std::vector<lcpi::SidebandEvent> events{Exec(7, now), Exec(8, now)};
  applying.sideband.Apply(events);
  CHECK(tracker.Cgroup(7, now) == "");
  CHECK(tracker.Cgroup(8, now) == "/system.slice/cron.service");
}

TEST_CASE("exec's cgroups are read on the lookups, a bounded number at once") {
  FakeProc proc;
  for (uint32_t pid = 1; pid <= 3; ++pid) {
    proc.Write(pid, "0::/p" + std::to_string(pid) + "\n");
    proc.WriteStart(pid, 1);
  }
  lcpi::LookupWorker lookups;
  CgroupReader reader(proc.path.string(), CgroupReader::kDefaultMaxPaths, 2);
  reader.set_lookups(&lookups);
  Applying applying(reader);
  lcpi::ProcessTracker& tracker = applying.tracker;
  const uint64_t now = PerfNow();
  std::vector<lcpi::SidebandEvent> events{Exec(1, now), Exec(2, now), Exec(3, now)};
  applying.sideband.Apply(events);
  // Nothing read on the applying thread: no label until the read is back.
  CHECK(reader.stats().read == 0);
  CHECK(reader.stats().pending == 2);
  CHECK(reader.stats().overflow == 1);
  CHECK(tracker.Cgroup(1, now).empty());
  REQUIRE(lookups.WaitIdle(std::chrono::seconds(10)));
  CHECK(reader.stats().read == 2);
  CHECK(reader.stats().pending == 0);
  CHECK(tracker.Cgroup(1, now) == "/p1");
  CHECK(tracker.Cgroup(2, now) == "/p2");
  CHECK(tracker.Cgroup(3, now).empty());  // over the bound: not read, no label
}

TEST_CASE(
    "a full table gives a new cgroup its nearest ancestor held, or none: never the parent's") {
  FakeProc proc;
  proc.Write(1, "0::/system.slice/sshd.service\n");
  proc.Write(2, "0::/user.slice/user-1000.slice\n");
  proc.Write(3, "0::/user.slice/user-1000.slice/session-5.scope\n");
  proc.Write(4, "0::/other.slice/x.service\n");
  for (uint32_t pid = 1; pid <= 4; ++pid) proc.WriteStart(pid, 1);
  CgroupReader reader(proc.path.string(), 2);
  Applying applying(reader);
  lcpi::ProcessTracker& tracker = applying.tracker;
  const uint64_t now = PerfNow();
  // Two paths in use fill the table; sshd's forks exec into new ones.
  std::vector<lcpi::SidebandEvent> events{Exec(1, now - 10),   Exec(2, now - 9),
                                          Fork(3, 1, now - 8), Exec(3, now - 7),
                                          Fork(4, 1, now - 6), Exec(4, now - 5)};
  applying.sideband.Apply(events);
  CHECK(tracker.Cgroup(3, now) == "/user.slice/user-1000.slice");
  CHECK(tracker.Cgroup(4, now) == "");
  CHECK(reader.stats().over_bound == 2);
  CHECK(reader.stats().paths == 2);
}
