// merge_quarantine_test.cpp - a batch holding one image whose rows the store
// cannot hold (a value out of range, from a hostile JIT map) is not refused
// whole: that image's rows are set aside and counted, the rest is committed
// (issue 25: one perf-map line stopped every merge).
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <string>

#include "libprofile/store/profile_db.h"
#include "store/store_test_util.h"

using lcpi::testing::Ok;
using lcpi::testing::OpenOk;
using lcpi::testing::TempDir;

namespace {

constexpr uint64_t kTop = 1ull << 63;

// Three images: a program, a JIT image and the kernel, one event, counts and
// a process row for each, symbols for the JIT image and the kernel.
lcpi::MergeBatch ThreeImages(int64_t epoch) {
  lcpi::MergeBatch b;
  b.epoch = epoch;
  b.images = {{"build-id:00aa", "/usr/bin/app", lcpi::ImageKind::kUser},
              {"jit:boot:42:7", "[jit 42]", lcpi::ImageKind::kJit},
              {"kernel:beef", "[kernel]", lcpi::ImageKind::kKernel}};
  b.events = {{"cycles", "cpu-clock", 1000000}};
  for (uint32_t image = 0; image < 3; ++image) {
    for (uint64_t i = 0; i < 10; ++i) b.counts.push_back({image, 0, 0x1000 + 4 * i, 1 + i});
    b.processes.push_back({100 + image, "app", image, 0, 55});
  }
  b.symbols = {{1, 0x1000, 0x40, "good_jit_fn"}, {2, 0x1000, 0x40, "schedule"}};
  b.stats = {{"samples", 165}};
  return b;
}

std::map<std::string, uint64_t> TotalsByIdentity(lcpi::ProfileDb& db) {
  std::map<int64_t, std::string> identity;
  for (const auto& im : Ok(db.ListImages())) identity[im.id] = im.identity;
  std::map<std::string, uint64_t> t;
  for (const auto& row : Ok(db.ImageTotals(lcpi::kAllEpochs)))
    t[identity[row.image_id]] += row.count;
  return t;
}

}  // namespace

TEST_CASE("a batch with one image the store cannot hold commits the others",
          "[profile_db][quarantine]") {
  TempDir dir("lcpi-quarantine");
  auto db = OpenOk(dir.File("lcpi.db"));
  const int64_t epoch = Ok(db->CurrentEpoch());

  lcpi::MergeBatch b = ThreeImages(epoch);
  // The perf-map line "0 8000000000000000 name": its range ends at 2^63.
  const std::string name = "hostile";
  SECTION("a symbol size of 2^63") { b.symbols.push_back({1, 0, kTop, name}); }
  SECTION("a count offset of 2^63") { b.counts.push_back({1, 0, kTop, 3}); }
  SECTION("a count above INT64_MAX") { b.counts.push_back({1, 0, 0x2000, kTop}); }

  lcpi::MergeReport report;
  lcpi::Expected<void> merged = db->Merge(b, &report);
  INFO((merged ? std::string("ok") : merged.error().ToString()));
  REQUIRE(merged.has_value());

  // The program and the kernel are on disk, with their symbols.
  std::map<std::string, uint64_t> totals = TotalsByIdentity(*db);
  CHECK(totals["build-id:00aa"] == 55);
  CHECK(totals["kernel:beef"] == 55);
  CHECK(totals.count("jit:boot:42:7") == 0);
  bool kernel_symbols = false;
  for (const auto& im : Ok(db->ListImages())) {
    if (im.identity == "kernel:beef") kernel_symbols = Ok(db->Symbols(im.id)).size() == 1;
  }
  CHECK(kernel_symbols);

  // The JIT image's rows were counted, in the report and in the stats.
  CHECK(report.quarantined_images == 1);
  CHECK(report.quarantined_rows >= 12);  // 10 counts, a process row, a symbol, the bad one
  CHECK(report.quarantined_samples >= 55);
  std::map<std::string, int64_t> stats = Ok(db->Stats(lcpi::kAllEpochs));
  CHECK(stats["samples"] == 165);
  CHECK(stats["quarantined.images"] == 1);
  CHECK(stats["quarantined.rows"] == static_cast<int64_t>(report.quarantined_rows));
  CHECK(stats["quarantined.samples"] == static_cast<int64_t>(report.quarantined_samples));
  CHECK(Ok(db->ProcessTotals(lcpi::kAllEpochs)).size() == 2);
}

TEST_CASE("a batch that is wrong as a whole is still refused whole", "[profile_db][quarantine]") {
  TempDir dir("lcpi-quarantine");
  auto db = OpenOk(dir.File("lcpi.db"));
  const int64_t epoch = Ok(db->CurrentEpoch());
  lcpi::MergeBatch b = ThreeImages(epoch);
  b.events[0].period = kTop;  // no image to set aside: the caller's mistake
  lcpi::MergeReport report;
  lcpi::Expected<void> merged = db->Merge(b, &report);
  REQUIRE_FALSE(merged.has_value());
  CHECK(merged.error().code() == lcpi::Errc::kInvalidArgument);
  CHECK(Ok(db->ListImages()).empty());
  CHECK(report.quarantined_rows == 0);
}
