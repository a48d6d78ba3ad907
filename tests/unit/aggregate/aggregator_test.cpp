// aggregator_test.cpp - Aggregator (libprofile/aggregate/aggregator.h) on
// real parts: a ProcessTracker, an ImageTable, kernel symbols from a
// synthetic kallsyms, and a real database for the merge. Kernel samples that
// no known image covers stay on the kernel side, and every batch merges.
#include "libprofile/aggregate/aggregator.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include "aggregate_test_util.h"
#include "test_files.h"

using lcpi::Aggregator;
using lcpi::ImageKind;
using lcpi::ImageTable;
using lcpi::KernelSymbols;
using lcpi::MergeBatch;
using lcpi::ProcessTracker;
using lcpi::RecordBuffer;
using lcpi::testing::Cycles;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

namespace {

constexpr uint64_t kInKernel = 0xffffffff81001010ULL;
constexpr uint64_t kNoModule = 0xffffffffc0ffee00ULL;  // a module loaded later, a BPF program

RecordBuffer KernelRecords() {
  return lcpi::testing::Buffer({{42, kInKernel, 3, true}, {42, kNoModule, 3, true}});
}

// The batch's images by kind, and whether a real database takes it.
void CheckKernelSide(Aggregator& agg, const TempDir& dir) {
  MergeBatch batch = agg.TakeBatch(1, Cycles()).batch;
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

namespace {

// The kernel's symbols as read at start, in dir; then a module loaded since
// (its code holds kNoModule) is written into dir's kallsyms and modules.
KernelSymbols LoadThenLoadModule(const TempDir& dir) {
  WriteFile(dir / "kallsyms",
            "ffffffff81000000 T _text\n"
            "ffffffff81001000 T schedule\n");
  auto kernel = KernelSymbols::Load(dir / "kallsyms", dir / "modules");
  REQUIRE(kernel);
  WriteFile(dir / "kallsyms",
            "ffffffff81000000 T _text\n"
            "ffffffff81001000 T schedule\n"
            "ffffffffc0ffe000 t late_spin\t[late]\n");
  WriteFile(dir / "modules", "late 16384 0 - Live 0xffffffffc0ffe000\n");
  return std::move(*kernel);
}

}  // namespace

TEST_CASE("a module loaded after start is named once kallsyms is read again") {
  TempDir dir;
  std::optional<KernelSymbols> kernel = LoadThenLoadModule(dir);
  lcpi::KernelSymbolsReloader reload(dir / "kallsyms", dir / "modules");
  ImageTable images;
  ProcessTracker tracker;
  tracker.OnComm(42, "app", true, 0);
  Aggregator agg(images, tracker, &*kernel, nullptr, &reload);
  agg.Add(KernelRecords());
  CHECK(agg.totals().unknown == 0);
  CHECK(reload.reloads() == 1);

  MergeBatch batch = agg.TakeBatch(1, Cycles()).batch;
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

TEST_CASE("with lookups, kernel records wait for kallsyms read on their thread") {
  TempDir dir;
  std::optional<KernelSymbols> kernel = LoadThenLoadModule(dir);
  lcpi::KernelSymbolsReloader reload(dir / "kallsyms", dir / "modules");
  ImageTable images;
  ProcessTracker tracker;
  tracker.OnComm(42, "app", true, 0);
  auto cgroup = std::make_shared<const std::string>("/system.slice/app.service");
  tracker.SetCgroup(42, 0, cgroup);
  Aggregator agg(images, tracker, &*kernel, nullptr, &reload);
  lcpi::LookupWorker lookups;  // after what its results touch: stopped first
  agg.SetLookups(&lookups);
  agg.Add(KernelRecords());
  // Not read here: the pc outside every module waits for the re-read.
  CHECK(agg.waiting_samples() == 3);
  CHECK(agg.totals().samples == 3);
  REQUIRE(lookups.WaitIdle(std::chrono::seconds(10)));
  CHECK(agg.waiting_samples() == 0);
  CHECK(reload.reloads() == 1);
  CHECK(agg.totals().unknown == 0);
  MergeBatch batch = agg.TakeBatch(1, Cycles()).batch;
  std::map<std::string, uint64_t> by_path;
  for (const lcpi::CountRow& c : batch.counts) by_path[batch.images[c.image].path] += c.count;
  CHECK(by_path["[late]"] == 3);
  CHECK(by_path["[kernel.kallsyms]"] == 3);
  // The records that waited kept their process's cgroup.
  REQUIRE_FALSE(batch.processes.empty());
  for (const lcpi::ProcessRow& p : batch.processes) CHECK(p.cgroup == *cgroup);
}

namespace {

uint64_t Sum(const MergeBatch& b) {
  uint64_t n = 0;
  for (const lcpi::CountRow& c : b.counts) n += c.count;
  return n;
}

size_t KernelSymbolRows(const MergeBatch& b) {
  size_t n = 0;
  for (const lcpi::SymbolRow& s : b.symbols) n += b.images[s.image].kind == ImageKind::kKernel;
  return n;
}

uint64_t OnDisk(const std::string& path) {
  auto db = lcpi::ProfileDb::Open(path, lcpi::DbMode::kReadOnly);
  REQUIRE(db);
  auto totals = (*db)->ImageTotals(lcpi::kAllEpochs);
  REQUIRE(totals);
  uint64_t n = 0;
  for (const lcpi::ImageTotal& t : *totals) n += t.count;
  return n;
}

}  // namespace

TEST_CASE("TakeBatch hands the pending counts over and starts empty (double buffering)") {
  TempDir dir;
  WriteFile(dir / "kallsyms",
            "ffffffff81000000 T _text\n"
            "ffffffff81001000 T schedule\n");
  auto kernel = KernelSymbols::Load(dir / "kallsyms", dir / "no_modules");
  REQUIRE(kernel);
  ImageTable images;
  ProcessTracker tracker;
  tracker.OnComm(42, "app", true, 0);
  Aggregator agg(images, tracker, &*kernel);
  agg.Add(KernelRecords());
  agg.AddStat("custom", 5);
  REQUIRE(agg.entries() == 2);

  Aggregator::TakenBatch first = agg.TakeBatch(1, Cycles());
  CHECK(first.batch.epoch == 1);
  CHECK(Sum(first.batch) == 6);
  CHECK(first.batch.processes.size() == 2);  // the kernel image and the unresolved one
  CHECK(first.batch.stats.size() >= 2);      // "custom" and "attributed"/"unknown"
  // The next batch fills from nothing while the first is being written.
  CHECK(agg.empty());
  CHECK(agg.entries() == 0);
  agg.Add(KernelRecords());
  agg.Add(KernelRecords());
  Aggregator::TakenBatch second = agg.TakeBatch(2, Cycles());
  CHECK(second.batch.epoch == 2);  // each batch carries the epoch it was taken for
  CHECK(Sum(second.batch) == 12);  // only what came after the first: nothing twice
  CHECK(Sum(first.batch) + Sum(second.batch) == agg.totals().samples);
  bool custom_again = false;
  for (const auto& [name, value] : second.batch.stats) custom_again |= name == "custom";
  CHECK_FALSE(custom_again);
}

TEST_CASE("a batch whose write failed is written later, whole, names included") {
  TempDir dir;
  WriteFile(dir / "kallsyms",
            "ffffffff81000000 T _text\n"
            "ffffffff81001000 T schedule\n"
            "ffffffff81002000 T do_idle\n");
  auto kernel = KernelSymbols::Load(dir / "kallsyms", dir / "no_modules");
  REQUIRE(kernel);
  const std::string path = dir / "profiles.db";
  {
    auto db = lcpi::ProfileDb::Open(path, lcpi::DbMode::kReadWrite);
    REQUIRE(db);
    REQUIRE((*db)->CurrentEpoch());
  }
  ImageTable images;
  ProcessTracker tracker;
  tracker.OnComm(42, "app", true, 0);
  Aggregator agg(images, tracker, &*kernel);
  agg.Add(KernelRecords());
  Aggregator::TakenBatch failed = agg.TakeBatch(1, Cycles());
  REQUIRE(KernelSymbolRows(failed.batch) > 0);

  // A real failed write: the database cannot be written through this connection.
  auto read_only = lcpi::ProfileDb::Open(path, lcpi::DbMode::kReadOnly);
  REQUIRE(read_only);
  REQUIRE_FALSE((*read_only)->Merge(failed.batch));
  CHECK(OnDisk(path) == 0);

  // Meanwhile the next batch fills. The failed one was never Committed, so
  // the kernel's names go with this one as well: the store keeps one copy.
  agg.Add(KernelRecords());
  Aggregator::TakenBatch next = agg.TakeBatch(1, Cycles());
  CHECK(KernelSymbolRows(next.batch) == KernelSymbolRows(failed.batch));

  // Retried first, then the next: every sample on disk once.
  auto db = lcpi::ProfileDb::Open(path, lcpi::DbMode::kReadWrite);
  REQUIRE(db);
  REQUIRE((*db)->Merge(failed.batch));
  agg.Committed(failed.marks);
  REQUIRE((*db)->Merge(next.batch));
  agg.Committed(next.marks);
  CHECK(OnDisk(path) == 12);
  CHECK(OnDisk(path) == agg.totals().samples);

  // Once a batch with them is in, the names are not sent again.
  agg.Add(KernelRecords());
  CHECK(KernelSymbolRows(agg.TakeBatch(1, Cycles()).batch) == 0);
}

TEST_CASE("an unknown image the table forgot after a merge is named again, not by its old index") {
  ImageTable images;
  ProcessTracker tracker;
  tracker.OnComm(7, "ghost", true, 0);  // no mappings: every pc is unknown
  Aggregator agg(images, tracker, nullptr);
  RecordBuffer b;
  b.header.t_first = 10;
  b.header.t_last = 20;
  lcpi_record r{};
  r.pc = 0x401000;
  r.pid = 7;
  r.count = 2;
  b.records.push_back(r);
  agg.Add(b);
  CHECK(agg.TakeBatch(1, Cycles()).batch.images.at(0).identity == "unknown:ghost");

  // The merge is in; nothing names the image now: the table forgets it and
  // hands its index to the next image interned.
  std::vector<bool> in_use(images.size(), false);
  agg.MarkImages(in_use);
  tracker.MarkImages(in_use);
  REQUIRE(images.Forget(in_use) == 1);
  images.Intern("build-id:other", "/usr/bin/other", ImageKind::kUser);

  agg.Add(b);
  MergeBatch next = agg.TakeBatch(2, Cycles()).batch;
  REQUIRE(next.images.size() == 1);
  CHECK(next.images[0].identity == "unknown:ghost");
  CHECK(Sum(next) == 2);
}

// Issue 25: the batch's kernel symbol names pointed into KernelSymbols'
// pool, which a kallsyms re-read (a module autoloaded, a BPF program)
// replaces on the loop while the writer thread binds them or while a failed
// batch is held: a use-after-free the sanitizer tree reports. The batch owns
// what it binds.
TEST_CASE("a batch keeps its kernel names when kallsyms is read again before it is written") {
  TempDir dir;
  WriteFile(dir / "kallsyms",
            "ffffffff81000000 T _text\n"
            "ffffffff81001000 T schedule_with_a_name_longer_than_any_small_string\n"
            "ffffffff81002000 T do_idle_with_a_name_longer_than_any_small_string\n");
  auto kernel = KernelSymbols::Load(dir / "kallsyms", dir / "no_modules");
  REQUIRE(kernel);
  const std::string path = dir / "profiles.db";
  auto db = lcpi::ProfileDb::Open(path, lcpi::DbMode::kReadWrite);
  REQUIRE(db);
  REQUIRE((*db)->CurrentEpoch());
  ImageTable images;
  ProcessTracker tracker;
  tracker.OnComm(42, "app", true, 0);
  Aggregator agg(images, tracker, &*kernel);
  agg.Add(KernelRecords());
  Aggregator::TakenBatch taken = agg.TakeBatch(1, Cycles());
  REQUIRE(KernelSymbolRows(taken.batch) > 0);

  // kallsyms is read again (other names now) before the batch is written.
  WriteFile(dir / "kallsyms",
            "ffffffff81000000 T _text\n"
            "ffffffff81001000 T a_different_first_name_of_the_same_length_as_before\n");
  lcpi::KernelSymbolsReloader reload(dir / "kallsyms", dir / "no_modules");
  REQUIRE(reload.Finish(KernelSymbols::Load(dir / "kallsyms", dir / "no_modules"), *kernel));
  // What the freed pool held is overwritten by whatever comes next.
  std::vector<std::string> churn(64, std::string(200, '#'));

  lcpi::Expected<void> merged = (*db)->Merge(taken.batch);
  INFO((merged ? "" : merged.error().ToString()));
  REQUIRE(merged);
  agg.Committed(taken.marks);
  std::vector<std::string> names;
  auto listed = (*db)->ListImages();
  REQUIRE(listed);
  for (const lcpi::ImageInfo& im : *listed) {
    if (im.kind != ImageKind::kKernel) continue;
    auto symbols = (*db)->Symbols(im.id);
    REQUIRE(symbols);
    for (const lcpi::SymbolInfo& s : *symbols) names.push_back(s.name);
  }
  // The names the batch was taken with, none of the kallsyms read after.
  const std::set<std::string> taken_with = {"_text",
                                            "schedule_with_a_name_longer_than_any_small_string",
                                            "do_idle_with_a_name_longer_than_any_small_string"};
  CHECK(std::set<std::string>(names.begin(), names.end()) == taken_with);
}
