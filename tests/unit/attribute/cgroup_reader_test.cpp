// cgroup_reader_test.cpp - reading each process's cgroup
// (libprofile/attribute/cgroup_reader.h): this process's real
// /proc/self/cgroup, a /proc of files written here (malformed, overlong, a
// process gone), and the bound on distinct paths held, each refusal counted.
#include "libprofile/attribute/cgroup_reader.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "libprofile/attribute/image_table.h"
#include "libprofile/attribute/process_tracker.h"
#include "libprofile/attribute/sideband.h"
#include "libprofile/base/cgroup_label.h"

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
  std::filesystem::path path;
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
