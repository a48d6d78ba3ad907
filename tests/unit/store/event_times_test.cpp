// event_times_test.cpp - schema 4: each epoch keeps its events' times
// enabled and running (the multiplex scale) and the precise_ip used. Merges
// add the times up, a rollup sums them, and facts written without times
// read as 0 and 0 ("not known").
#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <string>

#include "libprofile/store/profile_db.h"
#include "store/store_test_util.h"

using namespace lcpi;

namespace {

using lcpi::testing::Ok;
using lcpi::testing::OpenOk;
using lcpi::testing::RawExec;
using lcpi::testing::RawInt;

struct TempDir : lcpi::testing::TempDir {
  TempDir() : lcpi::testing::TempDir("lcpi-event-times-test") {}
};

MergeBatch Batch(int64_t epoch, uint64_t enabled, uint64_t running, int precise = 0) {
  MergeBatch b;
  b.epoch = epoch;
  b.images.push_back({"build-id:aa", "/bin/prog", ImageKind::kUser});
  b.events.push_back({"cycles", "cycles", 1000, enabled, running, precise});
  b.counts.push_back({0, 0, 16, 10});
  return b;
}

}  // namespace

TEST_CASE("a schema 3 database migrates: its epochs' times are not known", "[store]") {
  TempDir dir;
  const std::string path = dir.File("p.db");
  {
    auto db = OpenOk(path);
    REQUIRE(db->Merge(Batch(Ok(db->CurrentEpoch()), 0, 0)));
  }
  // Back to schema 3: epoch_events as 003 left it, with a row in it.
  RawExec(path, lcpi::testing::kUndoSchema5);
  RawExec(path,
          "ALTER TABLE epoch_events DROP COLUMN precise; "
          "ALTER TABLE epoch_events DROP COLUMN time_running; "
          "ALTER TABLE epoch_events DROP COLUMN time_enabled; PRAGMA user_version = 3;");
  auto db = OpenOk(path);
  auto facts = Ok(db->EpochEvents(EpochSet::All()));
  REQUIRE(facts.size() == 1);
  CHECK(facts[0].used == "cycles");
  CHECK(facts[0].period == 1000);
  CHECK(facts[0].time_enabled == 0);
  CHECK(facts[0].time_running == 0);
  CHECK(facts[0].precise == 0);
  // and the next merge adds to them
  REQUIRE(db->Merge(Batch(facts[0].epoch_id, 300, 100, 1)));
  facts = Ok(db->EpochEvents(EpochSet::All()));
  CHECK(facts[0].time_enabled == 300);
  CHECK(facts[0].time_running == 100);
  CHECK(facts[0].precise == 1);
}

TEST_CASE("merges add each epoch's times enabled and running", "[store]") {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  const int64_t a = Ok(db->CurrentEpoch());
  REQUIRE(db->Merge(Batch(a, 1000, 600, 2)));
  REQUIRE(db->Merge(Batch(a, 2000, 1000, 2)));
  const int64_t b = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  REQUIRE(db->Merge(Batch(b, 500, 500)));
  auto facts = Ok(db->EpochEvents(EpochSet::All()));
  REQUIRE(facts.size() == 2);
  CHECK(facts[0].epoch_id == a);
  CHECK(facts[0].time_enabled == 3000);
  CHECK(facts[0].time_running == 1600);
  CHECK(facts[0].precise == 2);
  CHECK(facts[1].epoch_id == b);
  CHECK(facts[1].time_enabled == 500);
  CHECK(facts[1].time_running == 500);
  CHECK(facts[1].precise == 0);
}

TEST_CASE("a merge without times leaves them not known", "[store]") {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  REQUIRE(db->Merge(Batch(Ok(db->CurrentEpoch()), 0, 0)));
  auto facts = Ok(db->EpochEvents(EpochSet::All()));
  REQUIRE(facts.size() == 1);
  CHECK(facts[0].time_enabled == 0);
  CHECK(facts[0].time_running == 0);
}

TEST_CASE("a rollup sums the merged epochs' times", "[store]") {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  const int64_t a = Ok(db->CurrentEpoch());
  REQUIRE(db->Merge(Batch(a, 1000, 400)));
  const int64_t b = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  REQUIRE(db->Merge(Batch(b, 1000, 600)));
  const int64_t c = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  REQUIRE(db->Merge(Batch(c, 7, 7)));
  REQUIRE(db->MergeEpochs({a, b}));
  auto facts = Ok(db->EpochEvents(EpochSet::Of({a})));
  REQUIRE(facts.size() == 1);
  CHECK(facts[0].time_enabled == 2000);
  CHECK(facts[0].time_running == 1000);
  facts = Ok(db->EpochEvents(EpochSet::Of({c})));
  REQUIRE(facts.size() == 1);
  CHECK(facts[0].time_enabled == 7);
}
