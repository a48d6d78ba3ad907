// process_cgroups_test.cpp - schema 5: each process row carries its
// process's cgroup, each path kept once (table cgroups). Rows of one pid and
// command in two cgroups stay apart, through merges, rollups and the
// --max-processes cap; a drop deletes the paths no row uses; a schema 4
// database migrates with its rows in no cgroup.
#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <tuple>

#include "libprofile/base/cgroup_label.h"
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
  TempDir() : lcpi::testing::TempDir("lcpi-process-cgroups-test") {}
};

const std::string kNginx = "/system.slice/nginx.service";
const std::string kDocker =
    "/system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope";

ProcessRow Row(uint32_t pid, const std::string& comm, uint64_t count, const std::string& cgroup) {
  ProcessRow r;
  r.pid = pid;
  r.comm = comm;
  r.count = count;
  r.cgroup = cgroup;
  return r;
}

MergeBatch Batch(int64_t epoch, std::vector<ProcessRow> rows) {
  MergeBatch b;
  b.epoch = epoch;
  b.images.push_back({"build-id:aa", "/bin/prog", ImageKind::kUser});
  b.events.push_back({"cycles", "cpu-clock", 1000});
  b.processes = std::move(rows);
  return b;
}

// (pid, comm, cgroup) -> count, summed over images and events.
std::map<std::tuple<uint32_t, std::string, std::string>, uint64_t> Totals(ProfileDb& db,
                                                                          int64_t epoch) {
  std::map<std::tuple<uint32_t, std::string, std::string>, uint64_t> out;
  for (const ProcessTotal& t : Ok(db.ProcessTotals(epoch)))
    out[{t.pid, t.comm, t.cgroup}] += t.count;
  return out;
}

}  // namespace

TEST_CASE("process rows keep their cgroup, each path stored once", "[store]") {
  TempDir dir;
  const std::string path = dir.File("p.db");
  auto db = OpenOk(path);
  const int64_t e = Ok(db->CurrentEpoch());
  OkVoid(db->Merge(Batch(e, {Row(10, "nginx", 5, kNginx), Row(11, "nginx", 7, kNginx),
                             Row(12, "sh", 3, kDocker), Row(13, "x", 1, "")})));
  // The same pid and command later in another cgroup: a row of its own.
  OkVoid(db->Merge(Batch(e, {Row(10, "nginx", 2, kNginx), Row(10, "nginx", 4, kDocker)})));
  auto totals = Totals(*db, e);
  CHECK(totals.size() == 5);
  CHECK(totals[{10, "nginx", kNginx}] == 7);
  CHECK(totals[{10, "nginx", kDocker}] == 4);
  CHECK(totals[{11, "nginx", kNginx}] == 7);
  CHECK(totals[{12, "sh", kDocker}] == 3);
  CHECK(totals[{13, "x", ""}] == 1);
  CHECK(RawInt(path, "SELECT count(*) FROM cgroups") == 2);
  // and the other epochs' forms read it too
  CHECK(Ok(db->ProcessTotals(kAllEpochs)).size() == 5);
  CHECK(Ok(db->ProcessTotals(EpochSet::Of({e}))).size() == 5);
  OkVoid(db->CheckIntegrity());
}

TEST_CASE("a cgroup path over the bound is stored as none and counted", "[store]") {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  const int64_t e = Ok(db->CurrentEpoch());
  const std::string longest = "/" + std::string(kMaxCgroupPath - 1, 'a');
  const std::string over = longest + "a";
  OkVoid(db->Merge(Batch(e, {Row(1, "a", 1, longest), Row(2, "b", 1, over)})));
  auto totals = Totals(*db, e);
  CHECK(totals[{1, "a", longest}] == 1);
  CHECK(totals[{2, "b", ""}] == 1);
  CHECK(Ok(db->Stats(e))["cgroups_refused"] == 1);
}

TEST_CASE("new cgroup paths per window are bounded, the busiest first", "[store]") {
  // A user who may make cgroups (a delegated subtree) and starts a process
  // in a new one at each flush must not grow the database without bound.
  TempDir dir;
  const std::string path = dir.File("p.db");
  auto db = OpenOk(path);
  const int64_t e = Ok(db->CurrentEpoch());
  std::vector<ProcessRow> churn;
  for (uint32_t i = 0; i < kMaxNewCgroupsPerWindow; i++)
    churn.push_back(Row(1000 + i, "churn", 1, "/user.slice/u/c" + std::to_string(i)));
  churn.push_back(Row(1, "nginx", 500, kNginx));  // the busiest goes first
  OkVoid(db->Merge(Batch(e, churn)));
  CHECK(Totals(*db, e)[{1, "nginx", kNginx}] == 500);
  // The window's allowance is spent: a path new in a later merge is stored
  // as none and counted; one already stored still has its id.
  OkVoid(db->Merge(Batch(e, {Row(2, "sh", 3, kDocker), Row(3, "nginx", 2, kNginx)})));
  auto totals = Totals(*db, e);
  CHECK(totals[{2, "sh", ""}] == 3);
  CHECK(totals[{3, "nginx", kNginx}] == 2);
  CHECK(RawInt(path, "SELECT count(*) FROM cgroups") == kMaxNewCgroupsPerWindow);
  CHECK(Ok(db->Stats(e))[kCgroupsOverLimitStat] == 2);
  // The next window has an allowance of its own.
  const int64_t next = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  OkVoid(db->Merge(Batch(next, {Row(2, "sh", 3, kDocker)})));
  CHECK(Totals(*db, next)[{2, "sh", kDocker}] == 3);
  OkVoid(db->CheckIntegrity());
}

TEST_CASE("a rollup and its cap keep cgroups apart", "[store]") {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  const int64_t a = Ok(db->CurrentEpoch());
  const int64_t b = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  const int64_t c = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  OkVoid(db->Merge(Batch(a, {Row(1, "w", 100, kNginx), Row(2, "w", 1, kNginx)})));
  OkVoid(db->Merge(Batch(
      b, {Row(1, "w", 50, kNginx), Row(3, "w", 2, kDocker), Row(kRolledUpPid, "w", 8, kDocker)})));
  OkVoid(db->MergeEpochs({a, b}, 1));
  (void)c;
  auto totals = Totals(*db, a);
  CHECK(totals.size() == 3);
  CHECK(totals[{1, "w", kNginx}] == 150);
  // Beyond the cap: one row per command and cgroup.
  CHECK(totals[{kRolledUpPid, "w", kNginx}] == 1);
  CHECK(totals[{kRolledUpPid, "w", kDocker}] == 2 + 8);
}

TEST_CASE("the cgroup paths no row uses are deleted once, after the drops and rollups", "[store]") {
  TempDir dir;
  const std::string path = dir.File("p.db");
  auto db = OpenOk(path);
  const int64_t a = Ok(db->CurrentEpoch());
  OkVoid(db->Merge(Batch(a, {Row(1, "w", 1, kNginx), Row(2, "w", 1, kDocker)})));
  const int64_t b = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  OkVoid(db->Merge(Batch(b, {Row(1, "w", 1, kNginx)})));
  REQUIRE(RawInt(path, "SELECT count(*) FROM cgroups") == 2);
  OkVoid(db->DropEpochs({a}));
  // Left to the one scan of process_counts a retention pass makes.
  CHECK(RawInt(path, "SELECT count(*) FROM cgroups") == 2);
  OkVoid(db->DeleteUnreferenced());
  CHECK(RawInt(path, "SELECT count(*) FROM cgroups") == 1);
  CHECK(Totals(*db, b).size() == 1);
  // A path seen again after it was deleted gets a row again.
  OkVoid(db->Merge(Batch(b, {Row(2, "w", 1, kDocker)})));
  CHECK((Totals(*db, b)[{2, "w", kDocker}]) == 1);
  OkVoid(db->CheckIntegrity());
}

TEST_CASE("a schema 4 database migrates: its process rows are in no cgroup", "[store]") {
  TempDir dir;
  const std::string path = dir.File("p.db");
  {
    auto db = OpenOk(path);
    OkVoid(db->Merge(Batch(Ok(db->CurrentEpoch()), {Row(7, "old", 9, "")})));
  }
  // Back to schema 4: process_counts as 001 made it, with a row in it.
  RawExec(path, lcpi::testing::kUndoSchema5);
  auto db = OpenOk(path);
  const int64_t e = Ok(db->CurrentEpoch());
  auto totals = Totals(*db, e);
  REQUIRE(totals.size() == 1);
  CHECK((totals[{7, "old", ""}]) == 9);
  OkVoid(db->Merge(Batch(e, {Row(7, "old", 1, kNginx)})));
  totals = Totals(*db, e);
  CHECK((totals[{7, "old", ""}]) == 9);
  CHECK((totals[{7, "old", kNginx}]) == 1);
  OkVoid(db->CheckIntegrity());
}
