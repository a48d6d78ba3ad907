// retention_test.cpp - dropping old epochs: the policy (age, longer for
// tagged spans, the oldest first over the size cap), the file really
// shrinking (auto_vacuum INCREMENTAL, also after switching a database of
// schema 1 that had none), and a reader that has the database open keeping
// its snapshot across a drop.
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "libprofile/store/profile_db.h"
#include "libprofile/store/retention.h"
#include "store/store_test_util.h"

namespace fs = std::filesystem;
using namespace lcpi;

namespace {

using lcpi::testing::Ok;
using lcpi::testing::OkVoid;
using lcpi::testing::OpenOk;

struct TempDir : lcpi::testing::TempDir {
  TempDir() : lcpi::testing::TempDir("lcpi-retention-test") {}
};

// The database file's size once everything in the WAL is in it (a
// checkpoint by a connection of its own, as SQLite's automatic ones do).
uint64_t FileBytes(const std::string& path) {
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  int rc = sqlite3_exec(raw, "PRAGMA wal_checkpoint(PASSIVE)", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  REQUIRE(rc == SQLITE_OK);
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return static_cast<uint64_t>(st.st_size);
}

uint64_t Samples(ProfileDb& db, const EpochSet& set) {
  uint64_t n = 0;
  for (const ImageTotal& t : Ok(db.ImageTotals(set))) n += t.count;
  return n;
}

// `rows` counts of one sample each, spread over offsets, into `epoch`.
void Fill(ProfileDb& db, int64_t epoch, uint64_t rows) {
  MergeBatch b;
  b.epoch = epoch;
  b.images.push_back({"build-id:aa", "/bin/prog", ImageKind::kUser});
  b.events.push_back({"cycles", "cpu-clock", 1000});
  for (uint64_t i = 0; i < rows; ++i) b.counts.push_back({0, 0, i * 4, 1});
  OkVoid(db.Merge(b));
}

EpochInfo Epoch(int64_t id, std::optional<int64_t> ended, EpochKind kind = EpochKind::kWindow,
                std::optional<std::string> tag = {}) {
  EpochInfo e;
  e.id = id;
  e.started = ended ? *ended - 60 : 0;
  e.ended = ended;
  e.kind = kind;
  e.tag = tag;
  return e;
}

// Four windows of `rows` counts each; the last is current.
std::vector<int64_t> FourWindows(ProfileDb& db, uint64_t rows) {
  std::vector<int64_t> ids = {Ok(db.CurrentEpoch())};
  for (int i = 0; i < 3; ++i) ids.push_back(Ok(db.NewEpoch(std::nullopt, EpochKind::kWindow)));
  for (int64_t id : ids) Fill(db, id, rows);
  return ids;
}

}  // namespace

TEST_CASE("epochs older than the retention expire, tagged spans later", "[retention]") {
  // now = 100000; one day = 86400.
  std::vector<EpochInfo> e = {Epoch(1, 1000, EpochKind::kEpoch),  // untagged span, 99000 s ago
                              Epoch(2, 2000),                     // its window
                              Epoch(3, 3000, EpochKind::kEpoch, "release"),  // tagged span
                              Epoch(4, 50000),                     // its window, 50000 s ago
                              Epoch(5, 90000, EpochKind::kEpoch),  // untagged, recent
                              Epoch(6, std::nullopt)};             // current
  RetentionPolicy p;
  p.keep_newest = 0;  // ages alone (the newest kept: "a forward clock jump ...")
  p.retain = 86400;
  p.retain_tagged = 97500;
  CHECK(ExpiredEpochs(e, p, 100000) == std::vector<int64_t>{1, 2});
  p.retain_tagged = 40000;
  CHECK(ExpiredEpochs(e, p, 100000) == std::vector<int64_t>{1, 2, 3, 4});
  p.retain = 1;  // everything ended, never the current one
  CHECK(ExpiredEpochs(e, p, 100000) == std::vector<int64_t>{1, 2, 3, 4, 5});
  // Over the cap: untagged oldest first, then tagged, never the current.
  CHECK(NextOverCap(e) == 1);
  std::vector<EpochInfo> tagged_left = {e[2], e[3], e[5]};
  CHECK(NextOverCap(tagged_left) == 3);
  CHECK_FALSE(NextOverCap({e[5]}).has_value());
  auto spans = SpanTags(e);
  CHECK_FALSE(spans[1].has_value());
  CHECK(*spans[3] == "release");
}

// Issue 25: a forward step of the wall clock larger than --retain (a bad
// NTP server, an RTC reset, an operator's typo) made every stored window
// look expired, and retention dropped all history at once.
TEST_CASE("a forward clock jump never drops the newest windows", "[retention]") {
  // Hourly windows for two days, ending at t = 200000; the current one after.
  std::vector<EpochInfo> e = {Epoch(1, 200000 - 48 * 3600, EpochKind::kEpoch)};
  for (int64_t i = 47; i >= 1; --i) e.push_back(Epoch(49 - i, 200000 - i * 3600));
  e.push_back(Epoch(49, std::nullopt));
  RetentionPolicy p;
  p.retain = 7 * 86400;
  CHECK(ExpiredEpochs(e, p, 200000).empty());
  // The clock jumps a year ahead: at most the older ones go, never the
  // newest policy.keep_newest.
  const std::vector<int64_t> after_jump = ExpiredEpochs(e, p, 200000 + 365 * 86400);
  CHECK(std::count(after_jump.begin(), after_jump.end(), 48) == 0);  // the newest window
  REQUIRE(p.keep_newest > 0);
  REQUIRE(p.keep_newest < 48);
  CHECK(after_jump.size() == 48 - p.keep_newest);
  for (int64_t id : after_jump) CHECK(id <= static_cast<int64_t>(48 - p.keep_newest));
}

TEST_CASE("dropping epochs gives their space back: the file shrinks", "[retention]") {
  TempDir dir;
  const std::string path = dir.File("p.db");
  auto db = OpenOk(path);
  CHECK(Ok(db->IncrementalVacuumOn()));  // new databases are created with it
  std::vector<int64_t> ids = FourWindows(*db, 20000);
  OkVoid(db->DropEpochs({}));  // nothing: a checkpoint-free no-op
  const uint64_t before = FileBytes(path);
  const uint64_t total = Samples(*db, EpochSet::All());
  OkVoid(db->DropEpochs({ids[0], ids[1], ids[2]}));
  const uint64_t after = FileBytes(path);
  INFO("before " << before << " bytes, after " << after);
  // Three quarters of the counts went; most of their pages must have left the file.
  CHECK(after < before / 2);
  CHECK(Ok(db->DatabaseSize()).bytes == after);
  CHECK(Ok(db->DatabaseSize()).free_bytes == 0);
  CHECK(Samples(*db, EpochSet::All()) == total / 4);
  CHECK(Ok(db->ListEpochs()).size() == 1);
  OkVoid(db->CheckIntegrity());
  // The current epoch is never dropped.
  auto bad = db->DropEpochs({ids[3]});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code() == Errc::kInvalidArgument);
}

TEST_CASE("a database without incremental vacuum is switched, then shrinks", "[retention]") {
  TempDir dir;
  const std::string path = dir.File("old.db");
  {  // as lcpi before this version created it: auto_vacuum NONE
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
    REQUIRE(sqlite3_exec(raw, "CREATE TABLE t (x); DROP TABLE t;", nullptr, nullptr, nullptr) ==
            SQLITE_OK);
    sqlite3_close(raw);
  }
  auto db = OpenOk(path);
  CHECK_FALSE(Ok(db->IncrementalVacuumOn()));
  std::vector<int64_t> ids = FourWindows(*db, 20000);
  const uint64_t before = FileBytes(path);
  OkVoid(db->DropEpochs({ids[0]}));
  CHECK(FileBytes(path) == before);  // the pages stay, free, in the file
  CHECK(Ok(db->DatabaseSize()).free_bytes > 0);
  OkVoid(db->EnableIncrementalVacuum());
  CHECK(Ok(db->IncrementalVacuumOn()));
  const uint64_t vacuumed = FileBytes(path);
  CHECK(vacuumed < before);
  OkVoid(db->DropEpochs({ids[1], ids[2]}));
  INFO("before " << before << ", vacuumed " << vacuumed << ", after " << FileBytes(path));
  CHECK(FileBytes(path) < vacuumed / 2);
  OkVoid(db->CheckIntegrity());
}

TEST_CASE("a reader keeps its snapshot while epochs are dropped", "[retention]") {
  TempDir dir;
  const std::string path = dir.File("p.db");
  auto writer = OpenOk(path);
  std::vector<int64_t> ids = FourWindows(*writer, 20000);
  auto reader = OpenOk(path, DbMode::kReadOnly);
  OkVoid(reader->BeginSnapshot());
  const uint64_t seen = Samples(*reader, EpochSet::Of({ids[0]}));
  REQUIRE(seen == 20000);
  OkVoid(writer->DropEpochs({ids[0], ids[1]}));
  // Still the reader's view, whole: the rows, the offsets, the epochs.
  CHECK(Samples(*reader, EpochSet::Of({ids[0]})) == seen);
  CHECK(Ok(reader->OffsetCounts(ids[1], 1, 1, 0, UINT64_MAX >> 1)).size() == 20000);
  CHECK(Ok(reader->ListEpochs()).size() == 4);
  OkVoid(reader->EndSnapshot());
  // A new read sees the drop.
  CHECK(Samples(*reader, EpochSet::Of({ids[0]})) == 0);
  CHECK(Ok(reader->ListEpochs()).size() == 2);
  OkVoid(reader->CheckIntegrity());
  // With the reader gone from its snapshot, the next drop shrinks the file.
  reader.reset();
  const uint64_t before = FileBytes(path);
  OkVoid(writer->DropEpochs({ids[2]}));
  CHECK(FileBytes(path) < before);
}

TEST_CASE("rollup groups: old windows of one span, one day and one period", "[retention]") {
  const int64_t day = 86400, t0 = 10 * day;  // a day boundary
  auto at = [&](int64_t id, int64_t start, std::optional<int64_t> end,
                EpochKind kind = EpochKind::kWindow, std::optional<std::string> tag = {}) {
    EpochInfo e = Epoch(id, end, kind, tag);
    e.started = start;
    return e;
  };
  std::vector<EpochInfo> e = {
      at(1, t0, t0 + 3600, EpochKind::kEpoch),  // day 10: 1, 2, 3 (one span)
      at(2, t0 + 3600, t0 + 7200),
      at(3, t0 + 7200, t0 + day),
      at(4, t0 + day, t0 + day + 3600),  // day 11: 4, 5; then a tagged span: 6, 7
      at(5, t0 + day + 3600, t0 + day + 7200),
      at(6, t0 + day + 7200, t0 + day + 10800, EpochKind::kEpoch, "release"),
      at(7, t0 + day + 10800, t0 + day + 14400),
      at(8, t0 + day + 14400, t0 + day + 18000),  // sampled at another period
      at(9, t0 + day + 18000, t0 + 3 * day),      // recent
      at(10, t0 + 3 * day, std::nullopt)};        // current
  std::vector<EpochEvent> facts;
  for (int64_t id = 1; id <= 9; ++id)
    facts.push_back({id, 1, "cpu-clock", id == 8 ? 2000u : 1000u});
  RetentionPolicy p;
  p.rollup_after = day;
  const int64_t now = t0 + 3 * day + 60;  // 9 ended 60 s ago
  using G = std::vector<std::vector<int64_t>>;
  CHECK(RollupGroups(e, facts, p, now) == G{{1, 2, 3}, {4, 5}, {6, 7}});
  p.rollup_after = 0;
  CHECK(RollupGroups(e, facts, p, now).empty());
}

// Issue 28: retention dropped windows lcpi-ship had not sent, and a rollup
// folded unsent windows into a sent one; both were lost to the fleet
// without a count. Held windows go only by the size cap, which lcpid counts.
TEST_CASE("windows the shipper has not sent are held from age and rollups", "[retention]") {
  const int64_t hour = 3600, t0 = 10 * 86400;
  std::vector<EpochInfo> e;
  for (int64_t id = 1; id <= 6; ++id) {
    EpochInfo w = Epoch(id, t0 + id * hour);
    w.started = t0 + (id - 1) * hour;
    e.push_back(w);
  }
  e.push_back(Epoch(7, std::nullopt));
  std::vector<EpochEvent> facts;
  for (int64_t id = 1; id <= 6; ++id) facts.push_back({id, 1, "cpu-clock", 1000u});
  RetentionPolicy p;
  p.keep_newest = 0;
  p.retain = 60;
  p.rollup_after = 60;
  const int64_t now = t0 + 7 * hour;
  using G = std::vector<std::vector<int64_t>>;
  CHECK(ExpiredEpochs(e, p, now) == std::vector<int64_t>{1, 2, 3, 4, 5, 6});
  CHECK(RollupGroups(e, facts, p, now) == G{{1, 2, 3, 4, 5, 6}});
  p.hold_from = t0 + 3 * hour;  // 4, 5 and 6 are not shipped yet
  CHECK(ExpiredEpochs(e, p, now) == std::vector<int64_t>{1, 2, 3});
  CHECK(RollupGroups(e, facts, p, now) == G{{1, 2, 3}});
  p.hold_from = 0;  // nothing shipped yet
  CHECK(ExpiredEpochs(e, p, now).empty());
  CHECK(RollupGroups(e, facts, p, now).empty());
  // The size cap still drops the oldest: the caller counts it as unshipped.
  CHECK(NextOverCap(e) == 1);
}

TEST_CASE("rollup groups: windows opened at another precise_ip stay apart", "[retention]") {
  const int64_t day = 86400, t0 = 10 * day;
  std::vector<EpochInfo> e;
  for (int64_t id = 1; id <= 4; ++id) {
    EpochInfo w = Epoch(id, t0 + id * 3600, id == 1 ? EpochKind::kEpoch : EpochKind::kWindow);
    w.started = t0 + (id - 1) * 3600;
    e.push_back(w);
  }
  std::vector<EpochEvent> facts;
  for (int64_t id = 1; id <= 4; ++id)
    facts.push_back({id, 1, "cycles", 1000u, 0u, 0u, id >= 3 ? 2 : 0});  // 3, 4: precise 2
  RetentionPolicy p;
  p.rollup_after = 3600;
  using G = std::vector<std::vector<int64_t>>;
  CHECK(RollupGroups(e, facts, p, t0 + 3 * day) == G{{1, 2}, {3, 4}});
}

TEST_CASE("a rollup keeps every sample in fewer epochs", "[retention]") {
  TempDir dir;
  const std::string path = dir.File("p.db");
  auto db = OpenOk(path);
  std::vector<int64_t> ids = FourWindows(*db, 20000);  // the same offsets in each
  const uint64_t total = Samples(*db, EpochSet::All());
  auto before = Ok(db->ListEpochs());
  const uint64_t bytes = FileBytes(path);
  OkVoid(db->MergeEpochs({ids[0], ids[1], ids[2]}));
  auto after = Ok(db->ListEpochs());
  REQUIRE(after.size() == 2);
  CHECK(after[0].id == ids[0]);
  CHECK(after[0].started == before[0].started);
  CHECK(*after[0].ended == *before[2].ended);
  CHECK(Samples(*db, EpochSet::All()) == total);
  CHECK(Samples(*db, EpochSet::Of({ids[0]})) == 3 * 20000);
  auto offsets = Ok(db->OffsetCounts(ids[0], 1, 1, 0, UINT64_MAX >> 1));
  REQUIRE(offsets.size() == 20000);  // summed per offset, not stacked
  CHECK(offsets[0].count == 3);
  CHECK(Ok(db->EpochEvents(EpochSet::Of({ids[1]}))).empty());
  INFO("bytes before " << bytes << ", after " << FileBytes(path));
  CHECK(FileBytes(path) < bytes * 2 / 3);
  OkVoid(db->CheckIntegrity());
  // Not the current epoch, not an id that does not exist.
  CHECK_FALSE(db->MergeEpochs({ids[0], ids[3]}));
  CHECK_FALSE(db->MergeEpochs({ids[0], 999}));
}

namespace {

// Process rows for `pids` (count pid each, command "w" + pid % 2) and
// statistics into `epoch`.
void FillProcesses(ProfileDb& db, int64_t epoch, const std::vector<uint32_t>& pids) {
  MergeBatch b;
  b.epoch = epoch;
  b.images.push_back({"build-id:aa", "/bin/prog", ImageKind::kUser});
  b.events.push_back({"cycles", "cpu-clock", 1000});
  for (uint32_t pid : pids) b.processes.push_back({pid, "w" + std::to_string(pid % 2), 0, 0, pid});
  b.stats = {{"samples", 100}, {"lost", 3}};
  OkVoid(db.Merge(b));
}

}  // namespace

TEST_CASE("a rollup keeps at most the cap of pids per epoch", "[retention]") {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  std::vector<int64_t> ids = {Ok(db->CurrentEpoch())};
  for (int i = 0; i < 3; ++i) ids.push_back(Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow)));
  FillProcesses(*db, ids[0], {1, 2, 3, 4});
  FillProcesses(*db, ids[1], {5, 6, 7, 8, kRolledUpPid});
  FillProcesses(*db, ids[2], {1, 9});
  OkVoid(db->MergeEpochs({ids[0], ids[1], ids[2]}, 3));
  std::map<uint32_t, std::map<std::string, uint64_t>> by_pid;
  uint64_t total = 0;
  for (const ProcessTotal& t : Ok(db->ProcessTotals(ids[0]))) {
    by_pid[t.pid][t.comm] += t.count;
    total += t.count;
  }
  // The three busiest keep their rows (9, 8 and 7), the rest are summed by
  // command: nothing is lost.
  CHECK(by_pid.size() == 4);
  CHECK(by_pid[9]["w1"] == 9);
  CHECK(by_pid[8]["w0"] == 8);
  CHECK(by_pid[7]["w1"] == 7);
  CHECK(by_pid[kRolledUpPid]["w0"] == 2 + 4 + 6);
  CHECK(by_pid[kRolledUpPid]["w1"] == 2 * 1 + 3 + 5 + uint64_t{kRolledUpPid});  // its comm is w1
  CHECK(total == 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + uint64_t{kRolledUpPid} + 1 + 9);
  CHECK(Ok(db->Stats(ids[0]))["processes_rolled_up"] == 6);  // 1..6, each once
  OkVoid(db->CheckIntegrity());
}

TEST_CASE("what retention drops is counted in the current epoch", "[retention]") {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  std::vector<int64_t> ids = {Ok(db->CurrentEpoch())};
  for (int i = 0; i < 2; ++i) ids.push_back(Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow)));
  for (int64_t id : ids) FillProcesses(*db, id, {1});
  OkVoid(db->DropEpochs({ids[0]}));
  auto stats = Ok(db->Stats(EpochSet::All()));
  CHECK(stats["samples"] == 200);
  CHECK(stats["retention_dropped.samples"] == 100);
  CHECK(stats["retention_dropped.lost"] == 3);
  // Dropped again with the epoch that held them: still counted, not twice prefixed.
  OkVoid(db->DropEpochs({ids[1]}));
  stats = Ok(db->Stats(EpochSet::All()));
  CHECK(stats["samples"] == 100);
  CHECK(stats["retention_dropped.samples"] == 200);
  CHECK(stats.count("retention_dropped.retention_dropped.samples") == 0);
}
