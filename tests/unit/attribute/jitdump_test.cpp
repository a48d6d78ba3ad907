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

#include "test_files.h"

using lcpi::JitdumpCursor;
using lcpi::ParseJitdump;
using lcpi::testing::TempDir;

namespace {

template <typename T>
void Put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

std::string Header(uint32_t magic = 0x4A695444, uint32_t version = 1) {
  std::string h;
  Put<uint32_t>(h, magic);
  Put<uint32_t>(h, version);
  Put<uint32_t>(h, 40);  // total_size of the header
  Put<uint32_t>(h, 62);  // EM_X86_64
  Put<uint32_t>(h, 0);
  Put<uint32_t>(h, 4242);  // pid
  Put<uint64_t>(h, 1);     // timestamp
  Put<uint64_t>(h, 0);     // flags
  return h;
}

// A record: id, total_size (`size_override` if set), timestamp, then `body`.
std::string Record(uint32_t id, const std::string& body, uint32_t size_override = 0) {
  std::string r;
  Put<uint32_t>(r, id);
  Put<uint32_t>(r, size_override ? size_override : static_cast<uint32_t>(16 + body.size()));
  Put<uint64_t>(r, 7);
  return r + body;
}

std::string Load(uint64_t addr, uint64_t size, uint64_t index, const std::string& name,
                 bool nul = true) {
  std::string b;
  Put<uint32_t>(b, 4242);  // pid
  Put<uint32_t>(b, 4243);  // tid
  Put<uint64_t>(b, addr);  // vma
  Put<uint64_t>(b, addr);  // code_addr
  Put<uint64_t>(b, size);
  Put<uint64_t>(b, index);
  b += name;
  if (nul) b += '\0';
  b += std::string(size < 64 ? size : 64, '\xcc');  // the code bytes
  return Record(0, b);
}

std::string Move(uint64_t from, uint64_t to, uint64_t size, uint64_t index) {
  std::string b;
  Put<uint32_t>(b, 4242);
  Put<uint32_t>(b, 4243);
  Put<uint64_t>(b, to);
  Put<uint64_t>(b, from);
  Put<uint64_t>(b, to);
  Put<uint64_t>(b, size);
  Put<uint64_t>(b, index);
  return Record(1, b);
}

}  // namespace

TEST_CASE("loads and moves name code, other records are skipped") {
  std::string file = Header() + Load(0x1000, 0x100, 1, "JS:*hot app.js:1") +
                     Record(2, std::string(40, 'd')) +  // debug info
                     Move(0x1000, 0x5000, 0x100, 1) + Load(0x2000, 0x20, 2, "Builtin:Add");
  JitdumpCursor cursor;
  auto p = ParseJitdump(file, &cursor);
  CHECK_FALSE(p.bad_header);
  REQUIRE(p.names.symbols.size() == 3);
  CHECK(p.names.symbols[0].start == 0x1000);
  CHECK(p.names.symbols[0].size == 0x100);
  CHECK(p.names.symbols[0].name == "JS:*hot app.js:1");
  CHECK(p.names.symbols[1].start == 0x5000);  // moved: the same name
  CHECK(p.names.symbols[1].name == "JS:*hot app.js:1");
  CHECK(p.names.symbols[2].name == "Builtin:Add");
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
                     Move(0x9000, 0xa000, 0x10, 99) +          // moves nothing loaded
                     Load(0x4000, 0x10, 4, "fine");
  auto p = ParseJitdump(file, &cursor);
  REQUIRE(p.names.symbols.size() == 1);
  CHECK(p.names.symbols[0].name == "fine");
  CHECK(p.names.bad_lines == 4);

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

TEST_CASE("the names kept for moves stay within the names limit over many reads") {
  lcpi::PerfMapLimits limits;
  limits.max_lines = 4;
  JitdumpCursor cursor;
  ParseJitdump(Header(), &cursor, limits);
  for (int read = 0; read < 3; read++) {
    std::string more;
    for (int i = 0; i < 4; i++) {
      const int index = read * 4 + i;
      more += Load(0x1000 + 0x100 * index, 0x10, index, "f" + std::to_string(index));
    }
    CHECK(ParseJitdump(more, &cursor, limits).names.symbols.size() == 4);
  }
  CHECK(cursor.by_index.size() == 4);
  // Code loaded beyond the limit cannot be moved by name: counted as bad.
  auto moved = ParseJitdump(Move(0x1000 + 0x100 * 11, 0x9000, 0x10, 11), &cursor, limits);
  CHECK(moved.names.symbols.empty());
  CHECK(moved.names.bad_lines == 1);
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
