// listing_source_test.cpp - what lcpilist --source (and lcpiprof's HTML
// page) will read: the source path comes from the image's DWARF line table,
// which whoever built the image wrote (`#line 1 "/any/file"` is enough). A
// binary built here names a root-only file, a FIFO and /dev/zero; the
// listing must not print the first, nor wait on the second, nor grow on the
// third, and must say why each source was withheld.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "libprofile/image/elf_symbols.h"
#include "libprofile/report/report.h"
#include "libprofile/store/profile_db.h"
#include "test_files.h"

namespace {

using namespace lcpi;
using namespace lcpi::report;
using lcpi::testing::TempDir;

constexpr const char* kSecret = "TOP-SECRET-LINE-a1b2c3";

// A program whose three functions claim their lines from `secret`, `fifo`
// and /dev/zero, profiled with 10 samples at the start of each.
struct HostileSource {
  TempDir dir;
  std::string secret = dir / "secret.c", fifo = dir / "fifo.c", prog = dir / "prog";
  std::string public_src = dir / "public.c";
  std::unique_ptr<ProfileDb> db;

  HostileSource() {
    // Others may search the directory (mkdtemp made it 0700): only the
    // file's own mode keeps the secret.
    REQUIRE(chmod(dir.path().c_str(), 0755) == 0);
    testing::WriteFile(secret, std::string(kSecret) + "\n");
    REQUIRE(chmod(secret.c_str(), 0600) == 0);
    REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
    testing::WriteFile(public_src, "int public_line = 1;\n");
    REQUIRE(chmod(public_src.c_str(), 0644) == 0);
    const std::string c = dir / "prog.c";
    testing::WriteFile(
        c,
        "__attribute__((noinline)) int from_secret(int x) {\n"
        "#line 1 \"" +
            secret +
            "\"\n"
            "  return x * 3 + 1; }\n"
            "__attribute__((noinline)) int from_fifo(int x) {\n"
            "#line 1 \"" +
            fifo +
            "\"\n"
            "  return x * 5 + 2; }\n"
            "__attribute__((noinline)) int from_zero(int x) {\n"
            "#line 1 \"/dev/zero\"\n"
            "  return x * 7 + 3; }\n"
            "__attribute__((noinline)) int from_public(int x) {\n"
            "#line 1 \"" +
            public_src +
            "\"\n"
            "  return x * 9 + 4; }\n"
            "int main(int c, char** v) { (void)v;\n"
            "  return from_secret(c) + from_fifo(c) + from_zero(c) + from_public(c); }\n");
    testing::Run("cc -O1 -g -fno-inline -o " + prog + " " + c);
    auto elf = ElfImage::Open(prog);
    REQUIRE(elf.has_value());
    auto opened = ProfileDb::Open(dir / "profiles.db", DbMode::kReadWrite);
    REQUIRE(opened.has_value());
    db = std::move(*opened);
    auto epoch = db->CurrentEpoch();
    REQUIRE(epoch.has_value());
    MergeBatch b;
    b.epoch = *epoch;
    b.images = {{(*elf)->identity().identity, prog, ImageKind::kUser}};
    b.events = {{"cycles", "cpu-clock", 100000}};
    for (const char* fn : {"from_secret", "from_fifo", "from_zero", "from_public"}) {
      auto sym = (*elf)->Symbol(fn);
      REQUIRE(sym.has_value());
      auto off = (*elf)->VaddrToFileOffset(sym->addr);
      REQUIRE(off.has_value());
      b.counts.push_back({0, 0, *off, 10});
    }
    REQUIRE(db->Merge(b).has_value());
  }

  Expected<Listing> List(const std::string& fn, bool lines = false, bool any = false) {
    ListOptions o;
    o.procedure = fn;
    o.source = true;
    o.lines = lines;
    o.source_any = any;
    return BuildListing(*db, o);
  }
};

std::string AllText(const Listing& l) {
  std::string all;
  for (const Instruction& i : l.instructions) all += i.source_text + "\n";
  for (const SourceLineRow& r : l.lines) all += r.text + "\n";
  return all;
}

std::string Warnings(const Listing& l) {
  std::string all;
  for (const std::string& w : l.warnings) all += w + "\n";
  return all;
}

TEST_CASE("listing source: a root-only file named by DWARF is not printed", "[report]") {
  HostileSource h;
  auto l = h.List("from_secret", /*lines=*/true);
  REQUIRE(l.has_value());
  INFO(Warnings(*l));
  CHECK(AllText(*l).find(kSecret) == std::string::npos);
  CHECK(RenderListing(*l, RenderOptions{}).find(kSecret) == std::string::npos);
  // The listing says which source it withheld and why.
  CHECK(Warnings(*l).find(h.secret + ": not readable by everyone") != std::string::npos);
  // A file everyone may read is shown.
  auto pub = h.List("from_public");
  REQUIRE(pub.has_value());
  CHECK(AllText(*pub).find("int public_line = 1;") != std::string::npos);
  // --source-any: the caller's own rights (root's, here) decide.
  if (geteuid() == 0) {
    auto any = h.List("from_secret", false, /*any=*/true);
    REQUIRE(any.has_value());
    CHECK(AllText(*any).find(kSecret) != std::string::npos);
  }
}

TEST_CASE("listing source: a FIFO named by DWARF does not hang the listing", "[report]") {
  HostileSource h;
  for (bool any : {false, true}) {
    INFO("--source-any " << any);
    int status = testing::ExitStatusWithin(20, [&] {
      auto l = h.List("from_fifo", true, any);
      if (!l) return 3;
      return Warnings(*l).find("not a regular file") != std::string::npos ? 0 : 4;
    });
    CHECK(status == 0);  // 142: it hung
  }
}

TEST_CASE("listing source: /dev/zero named by DWARF does not grow memory", "[report]") {
  HostileSource h;
  for (bool any : {false, true}) {
    INFO("--source-any " << any);
    int status = testing::ExitStatusWithin(20, [&] {
      // 4 GiB of address space: /dev/zero read as one line takes it in a
      // few seconds and aborts with bad_alloc, instead of taking the host's.
      testing::LimitAddressSpace(4ull << 30);
      auto l = h.List("from_zero", true, any);
      if (!l) return 3;
      return Warnings(*l).find("/dev/zero") != std::string::npos ? 0 : 4;
    });
    CHECK(status == 0);  // 134: bad_alloc, 142: still reading
  }
}

}  // namespace
