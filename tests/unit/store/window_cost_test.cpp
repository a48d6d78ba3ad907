// window_cost_test.cpp - schema 7: what each window's sampling cost, stored
// as sums (window_costs) so that merges add, a rollup keeps the figures
// weighted by samples and CPU time, a drop takes them; lcpid's pids per
// window (observer_pids); a schema 6 database migrates and reads "not
// measured"; schema 9: the call stacks taken, added up the same way.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "libprofile/store/profile_db.h"
#include "store/store_test_util.h"

using namespace lcpi;

namespace {

using lcpi::testing::Ok;
using lcpi::testing::OkVoid;
using lcpi::testing::OpenOk;
using lcpi::testing::RawExec;
using lcpi::testing::RawInt;

struct TempDir : lcpi::testing::TempDir {
  TempDir() : lcpi::testing::TempDir("lcpi-window-cost-test") {}
};

MergeBatch Batch(int64_t epoch, std::optional<WindowCost> cost, uint32_t pid) {
  MergeBatch b;
  b.epoch = epoch;
  b.images.push_back({"build-id:aa", "/bin/prog", ImageKind::kUser});
  b.events.push_back({"cycles", "cpu-clock", 200000});
  b.counts.push_back({0, 0, 0x10, 5});
  b.cost = cost;
  b.observer_pid = pid;
  return b;
}

// samples, cpu_ns, interrupt_ns, interrupt_ci95_ns, daemon_ns, module_samples,
// module_handler_ns, stack_samples
WindowCost Cost(uint64_t samples, uint64_t cpu_ns, uint64_t interrupt_ns, uint64_t ci,
                uint64_t daemon_ns, uint64_t module_samples = 0, uint64_t module_ns = 0,
                uint64_t stacks = 0) {
  return WindowCost{samples,   cpu_ns,         interrupt_ns, ci,
                    daemon_ns, module_samples, module_ns,    stacks};
}

bool Same(const WindowCost& a, const WindowCost& b) {
  return a.samples == b.samples && a.cpu_ns == b.cpu_ns && a.interrupt_ns == b.interrupt_ns &&
         a.interrupt_ci95_ns == b.interrupt_ci95_ns && a.daemon_ns == b.daemon_ns &&
         a.module_samples == b.module_samples && a.module_handler_ns == b.module_handler_ns &&
         a.stack_samples == b.stack_samples;
}

}  // namespace

TEST_CASE("a window's cost adds up over its merges, and its pids are kept") {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  int64_t e1 = Ok(db->CurrentEpoch());
  OkVoid(db->Merge(Batch(e1, Cost(1000, 2'000'000'000, 16'000'000, 2'000'000, 3'000'000), 42)));
  OkVoid(
      db->Merge(Batch(e1, Cost(500, 1'000'000'000, 8'000'000, 1'000'000, 1'000'000, 8, 800), 42)));
  OkVoid(db->Merge(Batch(e1, std::nullopt, 0)));  // no estimate yet: nothing added
  auto c = Ok(db->Cost(EpochSet::Of({e1})));
  REQUIRE(c.has_value());
  CHECK(Same(*c, Cost(1500, 3'000'000'000, 24'000'000, 3'000'000, 4'000'000, 8, 800)));
  CHECK(Ok(db->ObserverPids(EpochSet::All())) == std::vector<uint32_t>{42});

  int64_t e2 = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  OkVoid(db->Merge(
      Batch(e2, Cost(3000, 2'000'000'000, 30'000'000, 6'000'000, 9'000'000, 0, 0, 60), 77)));
  int64_t e3 = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  OkVoid(db->Merge(Batch(e3, std::nullopt, 0)));
  // Over several windows: the sums of their rows; a window without one adds nothing.
  CHECK(Same(Ok(db->Cost(EpochSet::All())).value(),
             Cost(4500, 5'000'000'000, 54'000'000, 9'000'000, 13'000'000, 8, 800, 60)));
  CHECK_FALSE(Ok(db->Cost(EpochSet::Of({e3}))).has_value());
  CHECK(Ok(db->ObserverPids(EpochSet::Of({e1, e2}))) == std::vector<uint32_t>{42, 77});
  CHECK(Ok(db->ObserverPids(EpochSet::Of({e3}))).empty());

  SECTION("a rollup keeps the sums (so the figures stay sample-weighted) and every pid") {
    OkVoid(db->MergeEpochs({e1, e2}));
    CHECK(Same(Ok(db->Cost(EpochSet::Of({e1}))).value(),
               Cost(4500, 5'000'000'000, 54'000'000, 9'000'000, 13'000'000, 8, 800, 60)));
    CHECK(Ok(db->ObserverPids(EpochSet::Of({e1}))) == std::vector<uint32_t>{42, 77});
    CHECK(RawInt(dir.File("p.db"), "SELECT count(*) FROM window_costs") == 1);
  }
  SECTION("a rollup into a window without a row takes the others'") {
    Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));  // e3 is no longer current
    OkVoid(db->MergeEpochs({e3, e2}));
    CHECK(Same(Ok(db->Cost(EpochSet::Of({e3}))).value(),
               Cost(3000, 2'000'000'000, 30'000'000, 6'000'000, 9'000'000, 0, 0, 60)));
    CHECK(Ok(db->ObserverPids(EpochSet::Of({e3}))) == std::vector<uint32_t>{77});
  }
  SECTION("a drop takes the window's cost and pids") {
    OkVoid(db->DropEpochs({e1}));
    CHECK(Same(Ok(db->Cost(EpochSet::All())).value(),
               Cost(3000, 2'000'000'000, 30'000'000, 6'000'000, 9'000'000, 0, 0, 60)));
    CHECK(Ok(db->ObserverPids(EpochSet::All())) == std::vector<uint32_t>{77});
  }
}

TEST_CASE("a schema 6 database migrates to window costs: its windows were not measured") {
  TempDir dir;
  const std::string path = dir.File("p.db");
  {
    auto db = OpenOk(path);
    OkVoid(db->Merge(Batch(Ok(db->CurrentEpoch()), std::nullopt, 0)));
  }
  RawExec(path, lcpi::testing::kUndoSchema7);
  auto db = OpenOk(path);
  CHECK(RawInt(path, "PRAGMA user_version") == ProfileDb::LatestSchemaVersion());
  CHECK(ProfileDb::LatestSchemaVersion() == 9);
  CHECK_FALSE(Ok(db->Cost(EpochSet::All())).has_value());
  CHECK(Ok(db->ObserverPids(EpochSet::All())).empty());
}

TEST_CASE("a schema 7 database migrates to lcpid's executable per window: none known before") {
  TempDir dir;
  const std::string path = dir.File("p.db");
  {
    auto db = OpenOk(path);
    MergeBatch b = Batch(Ok(db->CurrentEpoch()), std::nullopt, 42);
    b.observer_image = "build-id:aa";
    OkVoid(db->Merge(b));
    CHECK(Ok(db->ObserverImages(EpochSet::All())) == std::vector<std::string>{"build-id:aa"});
  }
  RawExec(path, lcpi::testing::kUndoSchema8);
  auto db = OpenOk(path);
  CHECK(RawInt(path, "PRAGMA user_version") == ProfileDb::LatestSchemaVersion());
  CHECK(Ok(db->ObserverImages(EpochSet::All())).empty());
  CHECK(Ok(db->ObserverPids(EpochSet::All())) == std::vector<uint32_t>{42});
}

TEST_CASE("a schema 8 database migrates to stacks in the window costs: none counted before") {
  TempDir dir;
  const std::string path = dir.File("p.db");
  {
    auto db = OpenOk(path);
    OkVoid(db->Merge(Batch(Ok(db->CurrentEpoch()),
                           Cost(1000, 2'000'000'000, 16'000'000, 2'000'000, 3'000'000, 0, 0, 50),
                           42)));
  }
  RawExec(path, lcpi::testing::kUndoSchema9);
  {
    auto db = OpenOk(path);
    CHECK(RawInt(path, "PRAGMA user_version") == ProfileDb::LatestSchemaVersion());
    // the row written before stays, its stacks not counted
    CHECK(Same(Ok(db->Cost(EpochSet::All())).value(),
               Cost(1000, 2'000'000'000, 16'000'000, 2'000'000, 3'000'000)));
    // and later merges add theirs
    OkVoid(db->Merge(
        Batch(Ok(db->CurrentEpoch()), Cost(10, 1'000'000, 160'000, 20'000, 30'000, 0, 0, 5), 42)));
    CHECK(Ok(db->Cost(EpochSet::All()))->stack_samples == 5);
  }
}
