// listing_bounds_test.cpp - what lcpilist reads to make one listing is
// bounded, whatever the recorded images claim: every image path and every
// symbol size in them was chosen by some local user. A function symbol whose
// st_size is 3 GiB is listed from its first MiB of code (it was allocated
// whole: std::bad_alloc, the tool aborted). A procedure named with no image
// is looked for in at most 64 images, those with samples in the epochs read
// (every image ever recorded was opened and read, so one hostile file hung
// every listing).
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <set>
#include <string>
#include <vector>

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
    testing::LimitAddressSpace(2ull << 30);
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

// The most images a procedure named with no image is looked for in
// (listing_target.cpp's kMaxImagesSearched).
constexpr size_t kSearchCap = 64;

// `bytes` (a linked program) with its build-id's first bytes replaced by
// those of `n`: another file, another identity, the same code.
std::string WithBuildId(std::string bytes, const std::string& build_id_hex, uint32_t n) {
  std::string id;
  for (size_t i = 0; i + 1 < build_id_hex.size(); i += 2)
    id += static_cast<char>(std::stoi(build_id_hex.substr(i, 2), nullptr, 16));
  const size_t at = bytes.find(id);
  REQUIRE(id.size() >= sizeof n);
  REQUIRE(at != std::string::npos);
  std::memcpy(bytes.data() + at, &n, sizeof n);
  return bytes;
}

TEST_CASE("listing bounds: a procedure with no image is looked for in 64 sampled images",
          "[report]") {
  // 70 copies of one program, each an image sampled in epoch "new" (copy i
  // the i-th least), 10 sampled only in epoch "old" (more than any), 5 never
  // sampled: every copy holds the procedure, so each image searched is named
  // in the listing (the one listed, or "also in").
  TempDir dir;
  const std::string src = dir / "prog.c";
  testing::WriteFile(src,
                     "__attribute__((noinline)) int shared_proc(int x) { return x * 3 + 1; }\n"
                     "int main(int c, char** v) { (void)v; return shared_proc(c); }\n");
  testing::Run("cc -O1 -Wl,--build-id -o " + (dir / "prog") + " " + src);
  auto elf = ElfImage::Open(dir / "prog");
  REQUIRE(elf.has_value());
  REQUIRE(!(*elf)->identity().build_id.empty());
  auto sym = (*elf)->Symbol("shared_proc");
  REQUIRE(sym.has_value());
  auto proc = (*elf)->VaddrToFileOffset(sym->addr);
  REQUIRE(proc.has_value());
  const std::string program = testing::ReadFile(dir / "prog");

  constexpr uint32_t kSampled = 70, kOld = 10, kNever = 5;
  std::vector<std::string> paths;
  std::vector<ImageRecord> images;
  for (uint32_t n = 0; n < kSampled + kOld + kNever; ++n) {
    const std::string name = n < kSampled ? "sampled" : n < kSampled + kOld ? "old" : "never";
    const std::string path = dir / (name + std::to_string(n));
    testing::WriteFile(path, WithBuildId(program, (*elf)->identity().build_id, n + 1));
    auto copy = ElfImage::Open(path);
    REQUIRE(copy.has_value());
    images.push_back({(*copy)->identity().identity, path, ImageKind::kUser});
    paths.push_back(path);
  }
  {
    auto db = ProfileDb::Open(dir / "profiles.db", DbMode::kReadWrite);
    REQUIRE(db.has_value());
    auto old_epoch = (*db)->NewEpoch("old");
    REQUIRE(old_epoch.has_value());
    MergeBatch old_batch;
    old_batch.epoch = *old_epoch;
    old_batch.images.assign(images.begin() + kSampled, images.end());
    old_batch.events = {{"cycles", "cpu-clock", 100000}};
    for (uint32_t i = 0; i < kOld; ++i) old_batch.counts.push_back({i, 0, *proc, 1000});
    REQUIRE((*db)->Merge(old_batch).has_value());
    auto new_epoch = (*db)->NewEpoch("new");
    REQUIRE(new_epoch.has_value());
    MergeBatch b;
    b.epoch = *new_epoch;
    b.images.assign(images.begin(), images.begin() + kSampled);
    b.events = {{"cycles", "cpu-clock", 100000}};
    for (uint32_t i = 0; i < kSampled; ++i) b.counts.push_back({i, 0, *proc, 100 + i});
    REQUIRE((*db)->Merge(b).has_value());
  }

  auto db = ProfileDb::Open(dir / "profiles.db", DbMode::kReadOnly);
  REQUIRE(db.has_value());
  ListOptions o;
  o.epoch = "new";
  o.procedure = "shared_proc";
  auto l = BuildListing(**db, o);
  REQUIRE(l.has_value());
  // The images searched: the one listed, and each named "also in".
  std::set<std::string> searched = {l->image};
  bool cap_warned = false;
  for (const std::string& w : l->warnings) {
    INFO(w);
    const std::string also = "shared_proc is also in ";
    if (w.rfind(also, 0) == 0)
      searched.insert(w.substr(also.size(), w.find(" (listing") - also.size()));
    if (w.find("looked for in the " + std::to_string(kSearchCap) +
               " images with the most samples; " + std::to_string(kSampled - kSearchCap) +
               " more were not searched") != std::string::npos)
      cap_warned = true;
  }
  // The most sampled is listed; the 64 most sampled in epoch "new" were
  // searched, and none of the others.
  CHECK(l->image == paths[kSampled - 1]);
  CHECK(searched.size() == kSearchCap);
  std::set<std::string> expected(paths.begin() + (kSampled - kSearchCap), paths.begin() + kSampled);
  CHECK(searched == expected);
  CHECK(cap_warned);
}

}  // namespace
