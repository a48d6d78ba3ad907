// perf_map_test.cpp - perf's JIT map files (libprofile/attribute/perf_map.h):
// lines as perf and the runtimes write them, hostile content counted and
// skipped, limits kept, and the file read only through the process's root,
// as a regular file its user owns.
#include "libprofile/attribute/perf_map.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "test_files.h"

using lcpi::Errc;
using lcpi::ParsePerfMap;
using lcpi::PerfMapLimits;
using lcpi::ReadPerfMap;
using lcpi::testing::ExitStatusWithin;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

TEST_CASE("map lines as node and perf write them") {
  auto p = ParsePerfMap(
      "3ef414c0 398 RegExp:[{(]\n"
      "0x7f0a1c000040 0x60 JS:*hot /srv/app.js:2:24\n"
      "\n"
      "7f0a1c0000a0\t20\tLazyCompile:~main node:internal/main:1:1\r\n");
  REQUIRE(p.symbols.size() == 3);
  CHECK(p.bad_lines == 0);
  CHECK_FALSE(p.truncated);
  CHECK(p.symbols[0].start == 0x3ef414c0);
  CHECK(p.symbols[0].size == 0x398);
  CHECK(p.symbols[0].name == "RegExp:[{(]");
  CHECK(p.symbols[1].start == 0x7f0a1c000040);
  CHECK(p.symbols[1].name == "JS:*hot /srv/app.js:2:24");  // blanks belong to the name
  CHECK(p.symbols[2].name == "LazyCompile:~main node:internal/main:1:1");
}

TEST_CASE("bad lines are counted and skipped") {
  auto p = ParsePerfMap(
      "zz 10 notahexstart\n"
      "1000 0 zero-size\n"
      "1000 10\n"                         // no name
      "ffffffffffffff00 200 wraps\n"      // past 2^64
      "8000000000000000 10 kernel-ish\n"  // no user code lies there
      "12345678901234567 10 too-long-number\n"
      "2000 10 good\n");
  CHECK(p.bad_lines == 6);
  REQUIRE(p.symbols.size() == 1);
  CHECK(p.symbols[0].name == "good");
}

// Issue 25: "0 8000000000000000 name" ends at 2^63, beyond what the store
// holds, and once refused every merge of the host. A range must end below
// 2^63, its end included.
TEST_CASE("a range that ends at 2^63 or beyond is bad, one that ends below it is kept") {
  auto p = ParsePerfMap(
      "0 8000000000000000 whole-half\n"
      "7fffffffffffffff 1 last-byte-past\n"
      "1000 7ffffffffffff000 to-the-top\n"
      "0 7fffffffffffffff widest\n"
      "7ffffffffffffffe 1 last-byte\n");
  CHECK(p.bad_lines == 3);
  REQUIRE(p.symbols.size() == 2);
  CHECK(p.symbols[0].name == "widest");
  CHECK(p.symbols[1].name == "last-byte");
  for (const auto& s : p.symbols) CHECK(s.start + s.size < (1ull << 63));
}

TEST_CASE("a last line without its newline is still being written") {
  auto p = ParsePerfMap("1000 10 done\n2000 10 half-writ");
  REQUIRE(p.symbols.size() == 1);
  CHECK(p.symbols[0].name == "done");
  CHECK(p.bad_lines == 0);
}

TEST_CASE("size, line and name limits") {
  PerfMapLimits limits;
  limits.max_lines = 2;
  limits.max_name = 4;
  auto p = ParsePerfMap("1000 10 first\n2000 10 second\n3000 10 third\n", limits);
  CHECK(p.truncated);
  REQUIRE(p.symbols.size() == 2);
  CHECK(p.symbols[0].name == "firs");

  limits = PerfMapLimits{};
  limits.max_bytes = 20;  // the second line is cut by the limit: not taken
  p = ParsePerfMap("1000 10 first\n2000 10 second\n", limits);
  CHECK(p.truncated);
  REQUIRE(p.symbols.size() == 1);
}

namespace {

// A process's root directory, as /proc/PID/root would give it.
struct Root {
  TempDir dir;
  int fd = -1;
  Root() {
    mkdir((dir / "tmp").c_str(), 01777);
    fd = open(dir.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(fd >= 0);
  }
  ~Root() { close(fd); }
  std::string Map(uint32_t pid) const { return dir / ("tmp/perf-" + std::to_string(pid) + ".map"); }
};

}  // namespace

TEST_CASE("the map is read inside the process's root") {
  Root root;
  WriteFile(root.Map(42), "1000 10 jitted\n");
  auto p = ReadPerfMap(root.fd, 42, getuid());
  REQUIRE(p);
  REQUIRE(p->symbols.size() == 1);
  CHECK(p->symbols[0].name == "jitted");

  auto missing = ReadPerfMap(root.fd, 43, getuid());
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code() == Errc::kNotFound);
}

TEST_CASE("a map file planted as a symlink or FIFO is refused at once") {
  Root root;
  TempDir outside;
  WriteFile(outside / "secret", "1000 10 secret-line\n");
  REQUIRE(symlink((outside / "secret").c_str(), root.Map(7).c_str()) == 0);
  auto link = ReadPerfMap(root.fd, 7, getuid());
  CHECK_FALSE(link);

  REQUIRE(mkfifo(root.Map(8).c_str(), 0644) == 0);
  int status = ExitStatusWithin(10, [&] {
    auto fifo = ReadPerfMap(root.fd, 8, getuid());
    return !fifo && fifo.error().code() == Errc::kBadElf ? 0 : 1;
  });
  CHECK(status == 0);
}

TEST_CASE("absolute symlinks inside the root stay inside it") {
  // The container's /tmp is a link to "/elsewhere": read in the container's
  // view, never the caller's /elsewhere.
  TempDir outer;
  mkdir((outer / "rootfs").c_str(), 0755);
  mkdir((outer / "rootfs/elsewhere").c_str(), 0755);
  REQUIRE(symlink("/elsewhere", (outer / "rootfs/tmp").c_str()) == 0);
  WriteFile(outer / "rootfs/elsewhere/perf-9.map", "1000 10 inside\n");
  int fd = open((outer / "rootfs").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  auto p = ReadPerfMap(fd, 9, getuid());
  close(fd);
  REQUIRE(p);
  REQUIRE(p->symbols.size() == 1);
  CHECK(p->symbols[0].name == "inside");
}

TEST_CASE("a map owned by another user than the process's is refused") {
  Root root;
  WriteFile(root.Map(5), "1000 10 planted\n");
  uint32_t other = getuid() == 0 ? 12345 : getuid() + 1;
  if (getuid() == 0) REQUIRE(chown(root.Map(5).c_str(), other, other) == 0);
  // As root: the file is another user's and the process is root's; as a
  // user: the process is said to be someone else's and the file is ours.
  auto p = ReadPerfMap(root.fd, 5, getuid() == 0 ? 0 : other);
  REQUIRE_FALSE(p);
  CHECK(p.error().code() == Errc::kPermission);
}
