// time_windows_test.cpp - epochs as time windows (schema 3): a database of
// schema 1 opens and migrates with its data intact, windows are epochs of
// kind 'window' that continue a tag's span, time ranges select the epochs
// they overlap, queries over several epochs sum them, and each epoch keeps
// its own event facts (what was sampled, the period) after a later change.
#include <sqlite3.h>
#include <stdlib.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "libprofile/store/epoch_select.h"
#include "libprofile/store/profile_db.h"
#include "store/store_test_util.h"

namespace fs = std::filesystem;
using namespace lcpi;

namespace {

using lcpi::testing::Ok;
using lcpi::testing::OpenOk;
using lcpi::testing::RawExec;
using lcpi::testing::RawInt;

struct TempDir : lcpi::testing::TempDir {
  TempDir() : lcpi::testing::TempDir("lcpi-windows-test") {}
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One image, one event ("cycles" sampled as `used` every `period`), `count`
// samples at offset 16 and `count` more at 32, plus a stat.
MergeBatch Batch(int64_t epoch, uint64_t count, const std::string& used = "cycles",
                 uint64_t period = 1000) {
  MergeBatch b;
  b.epoch = epoch;
  b.images.push_back({"build-id:aa", "/bin/prog", ImageKind::kUser});
  b.events.push_back({"cycles", used, period});
  b.counts.push_back({0, 0, 16, count});
  b.counts.push_back({0, 0, 32, count});
  b.processes.push_back({42, "prog", 0, 0, 2 * count});
  b.stats.push_back({"samples", static_cast<int64_t>(2 * count)});
  return b;
}

uint64_t Total(const std::vector<ImageTotal>& totals) {
  uint64_t n = 0;
  for (const ImageTotal& t : totals) n += t.count;
  return n;
}

EpochInfo Epoch(int64_t id, int64_t started, std::optional<int64_t> ended,
                EpochKind kind = EpochKind::kWindow, std::optional<std::string> tag = {}) {
  EpochInfo e;
  e.id = id;
  e.started = started;
  e.ended = ended;
  e.kind = kind;
  e.tag = tag;
  return e;
}

std::vector<int64_t> Ids(const std::vector<EpochInfo>& epochs) {
  std::vector<int64_t> out;
  for (const EpochInfo& e : epochs) out.push_back(e.id);
  return out;
}

}  // namespace

TEST_CASE("a schema 1 database opens, migrates, and keeps its data", "[windows]") {
  TempDir dir;
  const std::string path = dir.File("v1.db");
  // Schema 1 exactly as lcpi wrote it, with one epoch of data.
  RawExec(path, ReadFile(LCPI_SOURCE_DIR "/schema/001_initial.sql") +
                    "PRAGMA user_version = 1; PRAGMA application_id = 1279479881;"
                    "INSERT INTO epochs (id, tag, started, ended) VALUES (1, 'old', 100, 200);"
                    "INSERT INTO epochs (id, tag, started) VALUES (2, NULL, 200);"
                    "INSERT INTO images VALUES (1, 'build-id:aa', '/bin/prog', 'user', 100);"
                    "INSERT INTO events VALUES (1, 'cycles', 'cpu-clock', 250000);"
                    "INSERT INTO counts VALUES (1, 1, 1, 16, 7), (2, 1, 1, 16, 5);");
  // Readers cannot migrate: they say so.
  auto ro = ProfileDb::Open(path, DbMode::kReadOnly);
  REQUIRE_FALSE(ro);
  CHECK(ro.error().code() == Errc::kUnsupported);

  auto db = OpenOk(path);
  auto epochs = Ok(db->ListEpochs());
  REQUIRE(epochs.size() == 2);
  CHECK(epochs[0].kind == EpochKind::kEpoch);  // every old epoch is a span of its own
  CHECK(epochs[1].kind == EpochKind::kEpoch);
  CHECK(*epochs[0].tag == "old");
  CHECK(Total(Ok(db->ImageTotals(1))) == 7);
  CHECK(Total(Ok(db->ImageTotals(EpochSet::Of({1, 2})))) == 12);
  // No per-epoch facts for old epochs: the events row stands for them.
  CHECK(Ok(db->EpochEvents(EpochSet::All())).empty());
  REQUIRE(db->CheckIntegrity());
  db.reset();
  // Now at the newest schema, readable by the tools.
  auto reader = OpenOk(path, DbMode::kReadOnly);
  CHECK(Ok(reader->ListEpochs()).size() == 2);
}

TEST_CASE("windows continue a tag's span and a new epoch ends it", "[windows]") {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  const int64_t first = Ok(db->CurrentEpoch());
  const int64_t tagged = Ok(db->NewEpoch("release", EpochKind::kEpoch, 1000));
  const int64_t w1 = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow, 1060));
  const int64_t w2 = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow, 1120));
  const int64_t next = Ok(db->NewEpoch(std::nullopt, EpochKind::kEpoch, 1180));
  const int64_t w3 = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow, 1240));
  auto epochs = Ok(db->ListEpochs());
  REQUIRE(epochs.size() == 6);
  CHECK(epochs[2].kind == EpochKind::kWindow);
  CHECK(epochs[2].started == 1060);
  CHECK(*epochs[1].ended == 1060);  // a window's start ends the one before
  CHECK(Ids(SpanOf(epochs, tagged)) == std::vector<int64_t>{tagged, w1, w2});
  CHECK(Ids(SpanOf(epochs, next)) == std::vector<int64_t>{next, w3});
  CHECK(Ids(SpanOf(epochs, w1)) == std::vector<int64_t>{w1});  // a window alone
  CHECK(Ids(SpanOf(epochs, first)) == std::vector<int64_t>{first});
  CHECK(SpanOf(epochs, 99).empty());
  // A window has no tag.
  auto bad = db->NewEpoch("x", EpochKind::kWindow);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code() == Errc::kInvalidArgument);
}

TEST_CASE("a time range selects the epochs it overlaps", "[windows]") {
  // Three one-minute windows, then the current one from 1180.
  std::vector<EpochInfo> e = {Epoch(1, 1000, 1060, EpochKind::kEpoch), Epoch(2, 1060, 1120),
                              Epoch(3, 1120, 1180), Epoch(4, 1180, std::nullopt)};
  auto sel = [&](std::optional<int64_t> since, std::optional<int64_t> until) {
    return Ids(EpochsOverlapping(e, since, until, 1200));
  };
  using V = std::vector<int64_t>;
  CHECK(sel({}, {}) == V{1, 2, 3, 4});
  CHECK(sel(1060, 1120) == V{2});        // exactly one window
  CHECK(sel(1059, 1121) == V{1, 2, 3});  // touching both neighbours
  CHECK(sel(1100, {}) == V{2, 3, 4});    // open end: up to now
  CHECK(sel({}, 1060) == V{1});
  CHECK(sel(1190, {}) == V{4});  // the current window runs to now
  CHECK(sel(1300, {}).empty());  // after now
  CHECK(sel({}, 900).empty());   // before the first
}

TEST_CASE("queries over several windows sum them", "[windows]") {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  std::vector<int64_t> ids = {Ok(db->CurrentEpoch())};
  for (int i = 1; i < 4; ++i) ids.push_back(Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow)));
  for (size_t i = 0; i < ids.size(); ++i) REQUIRE(db->Merge(Batch(ids[i], 10 * (i + 1))));
  // Windows 2 and 3 (ids[1], ids[2]): 2 * (20 + 30) samples.
  EpochSet two = EpochSet::Of({ids[1], ids[2]});
  CHECK(Total(Ok(db->ImageTotals(two))) == 100);
  auto offsets = Ok(db->OffsetCounts(two, 1, 1, 0, 64));
  REQUIRE(offsets.size() == 2);
  CHECK(offsets[0].count == 50);
  CHECK(offsets[1].count == 50);
  auto procs = Ok(db->ProcessTotals(two));
  REQUIRE(procs.size() == 1);
  CHECK(procs[0].count == 100);
  CHECK(Ok(db->Stats(two))["samples"] == 100);
  // One id, all of them, none.
  CHECK(Total(Ok(db->ImageTotals(EpochSet::Of({ids[3]})))) == 80);
  CHECK(Total(Ok(db->ImageTotals(EpochSet::All()))) == 200);
  CHECK(Ok(db->ImageTotals(EpochSet::Of({}))).empty());
  // The sum of the windows equals the whole.
  uint64_t sum = 0;
  for (int64_t id : ids) sum += Total(Ok(db->ImageTotals(id)));
  CHECK(sum == Total(Ok(db->ImageTotals(kAllEpochs))));
  // Sizes per epoch: samples and rows (2 counts + 1 process row each).
  auto sizes = Ok(db->EpochSizes());
  REQUIRE(sizes.size() == 4);
  CHECK(sizes[1].epoch_id == ids[1]);
  CHECK(sizes[1].samples == 40);
  CHECK(sizes[1].rows == 3);
}

TEST_CASE("each window keeps its own event facts after the configuration changed", "[windows]") {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  const int64_t a = Ok(db->CurrentEpoch());
  REQUIRE(db->Merge(Batch(a, 5, "cpu-clock", 250000)));
  const int64_t b = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  REQUIRE(db->Merge(Batch(b, 5, "cycles", 1000000)));
  // The events row follows the newest merge ...
  auto events = Ok(db->ListEvents());
  REQUIRE(events.size() == 1);
  CHECK(events[0].used == "cycles");
  CHECK(events[0].period == 1000000);
  // ... and each window still says what it sampled.
  auto facts = Ok(db->EpochEvents(EpochSet::Of({a})));
  REQUIRE(facts.size() == 1);
  CHECK(facts[0].used == "cpu-clock");
  CHECK(facts[0].period == 250000);
  facts = Ok(db->EpochEvents(EpochSet::All()));
  REQUIRE(facts.size() == 2);
  CHECK(facts[1].epoch_id == b);
  CHECK(facts[1].period == 1000000);
}

TEST_CASE("windows sampled at different periods add up by their periods", "[windows]") {
  // The same work in two windows: the first sampled at 1,250/s (period
  // 800,000 ns), the second at 5,000/s (200,000): a quarter of the samples
  // in the first stand for as much as the second's. Summed, each window's
  // counts are weighted by its period over the newest one's.
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  const int64_t slow = Ok(db->CurrentEpoch());
  REQUIRE(db->Merge(Batch(slow, 10, "cpu-clock", 800000)));
  const int64_t fast = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  REQUIRE(db->Merge(Batch(fast, 40, "cpu-clock", 200000)));
  for (const EpochSet& both : {EpochSet::Of({slow, fast}), EpochSet::All()}) {
    CHECK(Total(Ok(db->ImageTotals(both))) == 160);  // 2 x (10 x 4 + 40)
    auto offsets = Ok(db->OffsetCounts(both, 1, 1, 0, 64));
    REQUIRE(offsets.size() == 2);
    CHECK(offsets[0].count == 80);
    CHECK(offsets[1].count == 80);
    auto procs = Ok(db->ProcessTotals(both));
    REQUIRE(procs.size() == 1);
    CHECK(procs[0].count == 160);
  }
  // one window alone, or windows at one period: the counts as stored
  CHECK(Total(Ok(db->ImageTotals(EpochSet::Of({slow})))) == 20);
  CHECK(Total(Ok(db->ImageTotals(EpochSet::Of({fast})))) == 80);
}
