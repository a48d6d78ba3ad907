// aggregator_test.cpp - Aggregator (libprofile/aggregate/aggregator.h) on
// real parts: a ProcessTracker, an ImageTable, kernel symbols from a
// synthetic kallsyms, and a real database for the merge. Kernel samples that
// no known image covers stay on the kernel side, and every batch merges.
#include "libprofile/aggregate/aggregator.h"

#include <catch2/catch.hpp>
#include <map>

#include "test_files.h"

using lcpi::Aggregator;
using lcpi::ImageKind;
using lcpi::ImageTable;
using lcpi::KernelSymbols;
using lcpi::MergeBatch;
using lcpi::ProcessTracker;
using lcpi::RecordBuffer;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

namespace {

constexpr uint64_t kInKernel = 0xffffffff81001010ULL;
constexpr uint64_t kNoModule = 0xffffffffc0ffee00ULL;  // a module loaded later, a BPF program

RecordBuffer KernelRecords() {
  RecordBuffer b;
  b.header.t_first = 10;
  b.header.t_last = 20;
  for (uint64_t pc : {kInKernel, kNoModule}) {
    lcpi_record r{};
    r.pc = pc;
    r.pid = 42;
    r.count = 3;
    r.event = 0;
    r.flags = LCPI_RECORD_KERNEL;
    b.records.push_back(r);
  }
  return b;
}

std::vector<lcpi::RealEvent> Cycles() {
  lcpi::RealEvent e;
  e.requested.name = "cycles";
  e.used = "cpu-clock";
  e.period = 200000;
  return {e};
}

// The batch's images by kind, and whether a real database takes it.
void CheckKernelSide(Aggregator& agg, const TempDir& dir) {
  MergeBatch batch = agg.Batch(1, Cycles());
  for (const lcpi::ImageRecord& im : batch.images) {
    INFO(im.identity);
    CHECK(im.kind != ImageKind::kUnknown);  // never the process's [unknown app]
  }
  uint64_t on_kernel_side = 0;
  for (const lcpi::CountRow& c : batch.counts)
    if (batch.images[c.image].kind == ImageKind::kKernel) on_kernel_side += c.count;
  CHECK(on_kernel_side == 6);

  auto db = lcpi::ProfileDb::Open(dir / "profiles.db", lcpi::DbMode::kReadWrite);
  REQUIRE(db);
  REQUIRE((*db)->CurrentEpoch());
  auto merged = (*db)->Merge(batch);
  INFO((merged ? "" : merged.error().ToString()));
  CHECK(merged);
}

}  // namespace

TEST_CASE("a kernel pc outside every known image stays on the kernel side") {
  TempDir dir;
  WriteFile(dir / "kallsyms",
            "ffffffff81000000 T _text\n"
            "ffffffff81001000 T schedule\n"
            "ffffffff81002000 T do_idle\n");
  auto kernel = KernelSymbols::Load(dir / "kallsyms", dir / "no_modules");
  REQUIRE(kernel);
  ImageTable images;
  ProcessTracker tracker;
  tracker.OnComm(42, "app", true, 0);
  Aggregator agg(images, tracker, &*kernel);
  agg.Add(KernelRecords());
  CHECK(agg.totals().unknown == 3);  // unresolved: counted as such
  CheckKernelSide(agg, dir);
}

TEST_CASE("without kallsyms kernel samples still merge") {
  // kptr_restrict, or no CAP_SYSLOG: every kernel pc is unresolved. Kept
  // whole, a kernel address is above INT64_MAX and every merge failed.
  TempDir dir;
  ImageTable images;
  ProcessTracker tracker;
  tracker.OnComm(42, "app", true, 0);
  Aggregator agg(images, tracker, nullptr);
  agg.Add(KernelRecords());
  CheckKernelSide(agg, dir);
}

TEST_CASE("a module loaded after start is named once kallsyms is read again") {
  TempDir dir;
  WriteFile(dir / "kallsyms",
            "ffffffff81000000 T _text\n"
            "ffffffff81001000 T schedule\n");
  auto kernel = KernelSymbols::Load(dir / "kallsyms", dir / "modules");
  REQUIRE(kernel);
  // Loaded since: its code holds kNoModule.
  WriteFile(dir / "kallsyms",
            "ffffffff81000000 T _text\n"
            "ffffffff81001000 T schedule\n"
            "ffffffffc0ffe000 t late_spin\t[late]\n");
  WriteFile(dir / "modules", "late 16384 0 - Live 0xffffffffc0ffe000\n");
  lcpi::KernelSymbolsReloader reload(dir / "kallsyms", dir / "modules");
  ImageTable images;
  ProcessTracker tracker;
  tracker.OnComm(42, "app", true, 0);
  Aggregator agg(images, tracker, &*kernel, nullptr, &reload);
  agg.Add(KernelRecords());
  CHECK(agg.totals().unknown == 0);
  CHECK(reload.reloads() == 1);

  MergeBatch batch = agg.Batch(1, Cycles());
  std::map<std::string, uint64_t> by_path;
  for (const lcpi::CountRow& c : batch.counts) by_path[batch.images[c.image].path] += c.count;
  CHECK(by_path["[late]"] == 3);
  CHECK(by_path["[kernel.kallsyms]"] == 3);
  bool named = false;
  for (const lcpi::SymbolRow& s : batch.symbols)
    named |= batch.images[s.image].path == "[late]" && s.name == "late_spin" && s.offset == 0;
  CHECK(named);
  auto db = lcpi::ProfileDb::Open(dir / "profiles.db", lcpi::DbMode::kReadWrite);
  REQUIRE(db);
  REQUIRE((*db)->CurrentEpoch());
  CHECK((*db)->Merge(batch));
}
