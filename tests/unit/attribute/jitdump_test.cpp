// jitdump_test.cpp - perf's jitdump files (libprofile/attribute/jitdump.h),
// written here record by record as the specification lays them out: loads
// and moves name code, a record cut at the end is read whole the next time
// from the cursor, and every malformed size or name is counted, never read
// past; the file is read inside a process's root, owner-checked.
#include "libprofile/attribute/jitdump.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "attribute/jitdump_records.h"
#include "test_files.h"

using lcpi::JitdumpCursor;
using lcpi::ParseJitdump;
using lcpi::testing::TempDir;

using lcpi::testing::Header;
using lcpi::testing::Load;
using lcpi::testing::Move;
using lcpi::testing::Record;

TEST_CASE("loads and moves name code, other records are skipped") {
  std::string file = Header() + Load(0x1000, 0x100, 1, "JS:*hot app.js:1") +
                     Record(2, std::string(40, 'd')) +  // debug info
                     Move(0x1000, 0x5000, 0x100, 1) + Load(0x2000, 0x20, 2, "Builtin:Add");
  JitdumpCursor cursor;
  auto p = ParseJitdump(file, &cursor);
  CHECK_FALSE(p.bad_header);
  REQUIRE(p.names.symbols.size() == 2);
  CHECK(p.names.symbols[0].start == 0x1000);
  CHECK(p.names.symbols[0].size == 0x100);
  CHECK(p.names.symbols[0].name == "JS:*hot app.js:1");
  CHECK(p.names.symbols[1].name == "Builtin:Add");
  CHECK(p.indexes == std::vector<uint64_t>{1, 2});
  // The move is given as it came, between the loads: the caller names it
  // from the names it kept (jit_maps_test).
  REQUIRE(p.moves.size() == 1);
  CHECK(p.moves[0].before == 1);
  CHECK(p.moves[0].index == 1);
  CHECK(p.moves[0].start == 0x5000);
  CHECK(p.moves[0].size == 0x100);
  CHECK(p.names.bad_lines == 0);
  CHECK(cursor.offset == file.size());
}

TEST_CASE("a record cut at the end is read whole the next time, from the cursor") {
  std::string first = Header() + Load(0x1000, 0x10, 1, "a");
  std::string second = Load(0x2000, 0x10, 2, "b");
  std::string file = first + second;
  JitdumpCursor cursor;
  auto p = ParseJitdump(std::string_view(file).substr(0, first.size() + 20), &cursor);
  REQUIRE(p.names.symbols.size() == 1);
  CHECK(cursor.offset == first.size());
  auto q = ParseJitdump(std::string_view(file).substr(cursor.offset), &cursor);
  REQUIRE(q.names.symbols.size() == 1);
  CHECK(q.names.symbols[0].name == "b");
  CHECK(cursor.offset == file.size());
  // Nothing new: nothing read, nothing counted.
  auto none = ParseJitdump("", &cursor);
  CHECK(none.names.symbols.empty());
  CHECK(none.names.bad_lines == 0);
}

TEST_CASE("malformed records are counted and never read past") {
  JitdumpCursor cursor;
  std::string file = Header() + Load(0x1000, 0, 1, "empty") +  // no code
                     Load(1ull << 63, 0x10, 2, "kernel") +     // not user space
                     Load(0x3000, 0x10, 3, "", true) +         // no name
                     Move(0x9000, 0xa000, 0x10, 99) +          // named by the caller, or bad
                     Load(0x4000, 0x10, 4, "fine");
  auto p = ParseJitdump(file, &cursor);
  REQUIRE(p.names.symbols.size() == 1);
  CHECK(p.names.symbols[0].name == "fine");
  CHECK(p.names.bad_lines == 3);
  CHECK(p.moves.size() == 1);

  // A name without its NUL inside the record.
  JitdumpCursor c2;
  std::string unterminated = Header() + Load(0x1000, 0, 1, "x", false);
  CHECK(ParseJitdump(unterminated, &c2).names.bad_lines == 1);

  // A size that cannot frame a record: the rest is not read.
  JitdumpCursor c3;
  std::string broken = Header() + Record(0, "", 8) + Load(0x1000, 0x10, 1, "after");
  auto b = ParseJitdump(broken, &c3);
  CHECK(b.names.symbols.empty());
  CHECK(b.names.bad_lines == 1);
  CHECK(b.names.truncated);

  // Not a jitdump this reader knows.
  for (std::string h : {Header(0x4454694A), Header(0x12345678), Header(0x4A695444, 2)}) {
    JitdumpCursor c;
    CHECK(ParseJitdump(h + Load(0x1000, 0x10, 1, "x"), &c).bad_header);
  }
}

TEST_CASE("a load or move whose range ends at 2^63 is bad (issue 25)") {
  JitdumpCursor cursor;
  std::string file = Header() + Load(0, 1ull << 63, 1, "whole-half") +
                     Load(0x1000, 0x10, 2, "fine") + Move(0x1000, 0, 1ull << 63, 2) +
                     Load(0x7ffffffffffffff0, 0x10, 3, "to-the-top") +
                     Load(0x7ffffffffffffff0, 0xf, 4, "below-the-top");
  auto p = ParseJitdump(file, &cursor);
  CHECK(p.names.bad_lines == 3);
  REQUIRE(p.names.symbols.size() == 2);
  CHECK(p.names.symbols[0].name == "fine");
  CHECK(p.names.symbols[1].name == "below-the-top");
}

TEST_CASE("the names limit stops a dump, as it stops a map") {
  std::string file = Header();
  for (int i = 0; i < 10; i++) file += Load(0x1000 + 0x100 * i, 0x10, i, "f" + std::to_string(i));
  lcpi::PerfMapLimits limits;
  limits.max_lines = 4;
  JitdumpCursor cursor;
  auto p = ParseJitdump(file, &cursor, limits);
  CHECK(p.names.symbols.size() == 4);
  CHECK(p.names.truncated);
}

TEST_CASE("the limit on names stops a dump's moves too") {
  std::string file = Header();
  for (int i = 0; i < 10; i++) file += Move(0x1000, 0x2000 + 0x100 * i, 0x10, 1);
  lcpi::PerfMapLimits limits;
  limits.max_lines = 4;
  JitdumpCursor cursor;
  auto p = ParseJitdump(file, &cursor, limits);
  CHECK(p.moves.size() == 4);
  CHECK(p.names.truncated);
}

TEST_CASE("a jitdump is read inside the process's root, from where the last read stopped") {
  TempDir dir;
  int root = open(dir.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(root >= 0);
  const std::string path = "/work/jit-4242.dump";
  mkdir((dir / "work").c_str(), 0755);
  lcpi::testing::WriteFile(dir / "work/jit-4242.dump", Header() + Load(0x1000, 0x10, 1, "a"));
  JitdumpCursor cursor;
  auto p = lcpi::ReadJitdump(root, path, getuid(), &cursor);
  REQUIRE(p);
  REQUIRE(p->names.symbols.size() == 1);
  // The runtime appends; the next read takes only what is new.
  {
    int fd = open((dir / "work/jit-4242.dump").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    std::string more = Load(0x2000, 0x10, 2, "b");
    REQUIRE(write(fd, more.data(), more.size()) == static_cast<ssize_t>(more.size()));
    close(fd);
  }
  auto q = lcpi::ReadJitdump(root, path, getuid(), &cursor);
  REQUIRE(q);
  REQUIRE(q->names.symbols.size() == 1);
  CHECK(q->names.symbols[0].name == "b");
  // Another user's file is refused, as a perf map is.
  auto other = lcpi::ReadJitdump(root, path, getuid() == 0 ? 12345 : getuid() + 1, &cursor);
  if (getuid() != 0) {
    REQUIRE_FALSE(other);
    CHECK(other.error().code() == lcpi::Errc::kPermission);
  }
  close(root);

  CHECK(lcpi::IsJitdumpPath("/srv/app/jit-4242.dump", 4242));
  CHECK(lcpi::IsJitdumpPath("jit-4242.dump", 4242));
  CHECK_FALSE(lcpi::IsJitdumpPath("/srv/app/jit-4242.dump", 4243));
  CHECK_FALSE(lcpi::IsJitdumpPath("/srv/app/jit-4242.dump.old", 4242));
}
