// listing_bounds_test.cpp - what lcpilist reads to make one listing is
// bounded, whatever the recorded images claim: every image path and every
// symbol size in them was chosen by some local user. A function symbol whose
// st_size is 3 GiB is listed from its first MiB of code (it was allocated
// whole: std::bad_alloc, the tool aborted).
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "image/crafted_elf.h"
#include "libprofile/image/elf_symbols.h"
#include "libprofile/report/listing_steps.h"
#include "libprofile/report/report.h"
#include "libprofile/store/profile_db.h"
#include "test_files.h"

namespace {

using namespace lcpi;
using namespace lcpi::report;
using lcpi::testing::TempDir;

// The most code one listing reads (listing_code.cpp's kMaxListedCode).
constexpr uint64_t kCodeCap = uint64_t{1} << 20;

TEST_CASE("listing bounds: a 3 GiB function symbol is listed from its first MiB", "[report]") {
  TempDir dir;
  const std::string prog = dir / "huge";
  constexpr uint64_t kText = 0x1000;  // HugeFunctionElf's code: file offset = vaddr
  constexpr uint64_t kClaimed = uint64_t{3} << 30;
  constexpr uint64_t kPastCut = kText + (uint64_t{2} << 30);  // a sample 2 GiB in
  testing::WriteFile(prog, testing::HugeFunctionElf("huge_fn", kClaimed));
  // Sparse: the 3 GiB are there to read, and take no disk.
  REQUIRE(truncate(prog.c_str(), static_cast<off_t>(kText + kClaimed)) == 0);
  auto elf = ElfImage::Open(prog);
  REQUIRE(elf.has_value());
  {
    auto db = ProfileDb::Open(dir / "profiles.db", DbMode::kReadWrite);
    REQUIRE(db.has_value());
    auto epoch = (*db)->CurrentEpoch();
    REQUIRE(epoch.has_value());
    MergeBatch b;
    b.epoch = *epoch;
    b.images = {{(*elf)->identity().identity, prog, ImageKind::kUser}};
    b.events = {{"cycles", "cpu-clock", 100000}};
    b.counts = {{0, 0, kText, 10}, {0, 0, kPastCut, 5}};
    REQUIRE((*db)->Merge(b).has_value());
  }

  // In a child, with 2 GiB of address space: the old listing allocated the
  // symbol's 3 GiB whole and aborted; the alarm ends one that reads them.
  int status = testing::ExitStatusWithin(60, [&] {
    rlimit limit{2ull << 30, 2ull << 30};
    setrlimit(RLIMIT_AS, &limit);
    auto db = ProfileDb::Open(dir / "profiles.db", DbMode::kReadOnly);
    if (!db) return 2;
    ListOptions o;
    o.procedure = "huge_fn";
    auto l = BuildListing(**db, o);
    if (!l) return 3;
    bool warned = false;
    for (const std::string& w : l->warnings) {
      if (w.find("cut to its first 1 MiB of " + std::to_string(kClaimed) + " bytes") !=
          std::string::npos)
        warned = true;
    }
    if (!warned) return 4;
    // The code disassembled lies within the first MiB, and is no more than it.
    uint64_t code_bytes = 0;
    bool past_cut_listed = false;
    for (const Instruction& i : l->instructions) {
      if (i.text == kNoCode) {
        if (i.offset == kPastCut && !i.counts.empty() && i.counts[0] == 5) past_cut_listed = true;
        continue;
      }
      if (i.offset < kText || i.offset + i.size > kText + kCodeCap) return 5;
      code_bytes += i.size;
    }
    if (code_bytes == 0 || code_bytes > kCodeCap) return 6;
    // A sample past the cut is still listed, by its offset, with no code.
    return past_cut_listed ? 0 : 7;
  });
  // 125: std::bad_alloc (the 3 GiB allocated whole), 142: still reading
  CHECK(status == 0);
}

}  // namespace
