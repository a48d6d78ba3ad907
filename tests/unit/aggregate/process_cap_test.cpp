// process_cap_test.cpp - the cap on per-process rows (Aggregator::
// set_max_processes): within a window the first N pids keep rows of their
// own, later pids are rolled up by command into rows of pid kRolledUpPid,
// no sample is lost doing so, and a new window admits new pids again.
#include <catch2/catch.hpp>
#include <map>
#include <tuple>

#include "aggregate_test_util.h"
#include "libprofile/aggregate/aggregator.h"
#include "test_files.h"

using lcpi::Aggregator;
using lcpi::ImageTable;
using lcpi::kRolledUpPid;
using lcpi::MergeBatch;
using lcpi::ProcessTracker;
using lcpi::RecordBuffer;
using lcpi::testing::Cycles;
using lcpi::testing::TempDir;

namespace {

// One user sample of `count` for each pid (unmapped pcs: the unknown image
// of the process's command).
RecordBuffer Samples(const std::vector<uint32_t>& pids, uint16_t count) {
  std::vector<lcpi::testing::TestRecord> records;
  for (uint32_t pid : pids) records.push_back({pid, 0x400000 + pid, count});
  return lcpi::testing::Buffer(records);
}

// pid -> command -> count in the batch's process rows.
std::map<uint32_t, std::map<std::string, uint64_t>> ByPid(const MergeBatch& b) {
  std::map<uint32_t, std::map<std::string, uint64_t>> out;
  for (const lcpi::ProcessRow& p : b.processes) out[p.pid][p.comm] += p.count;
  return out;
}

}  // namespace

TEST_CASE("pids beyond the cap are rolled up by command, nothing lost") {
  ImageTable images;
  ProcessTracker tracker;
  for (uint32_t pid = 1; pid <= 6; ++pid) tracker.OnComm(pid, pid % 2 ? "sh" : "cc", true, 0);
  Aggregator agg(images, tracker, nullptr);
  agg.set_max_processes(2);
  agg.Add(Samples({1, 2, 3, 4, 5, 6}, 10));
  Aggregator::TakenBatch taken = agg.TakeBatch(1, Cycles());
  const MergeBatch& b = taken.batch;
  auto by_pid = ByPid(b);
  CHECK(by_pid.size() == 3);  // 1, 2 and the rolled-up rows
  CHECK(by_pid[1]["sh"] == 10);
  CHECK(by_pid[2]["cc"] == 10);
  CHECK(by_pid[kRolledUpPid]["sh"] == 20);  // 3, 5
  CHECK(by_pid[kRolledUpPid]["cc"] == 20);  // 4, 6
  uint64_t total = 0;
  for (const lcpi::ProcessRow& p : b.processes) total += p.count;
  CHECK(total == 60);
  CHECK(agg.processes_rolled_up() == 4);
  std::map<std::string, int64_t> stats(b.stats.begin(), b.stats.end());
  CHECK(stats["processes_rolled_up"] == 4);

  // The stored rows: a real database takes the rolled-up pid and gives it back.
  TempDir dir;
  auto db = lcpi::ProfileDb::Open(dir / "p.db", lcpi::DbMode::kReadWrite);
  REQUIRE(db);
  REQUIRE((*db)->CurrentEpoch());
  REQUIRE((*db)->Merge(b));
  agg.Committed(taken.marks);
  auto totals = (*db)->ProcessTotals(1);
  REQUIRE(totals);
  std::map<std::tuple<uint32_t, std::string>, uint64_t> stored;
  for (const lcpi::ProcessTotal& t : *totals) stored[{t.pid, t.comm}] += t.count;
  CHECK(stored[{kRolledUpPid, "sh"}] == 20);
  CHECK(stored.size() == 4);

  // Later in the same window: admitted pids keep their rows, pid 3 stays
  // rolled up (and is not counted again), a new pid is rolled up.
  tracker.OnComm(7, "sh", true, 0);
  agg.Add(Samples({1, 3, 7}, 1));
  by_pid = ByPid(agg.TakeBatch(1, Cycles()).batch);
  CHECK(by_pid[1]["sh"] == 1);
  CHECK(by_pid[kRolledUpPid]["sh"] == 2);
  CHECK(agg.processes_rolled_up() == 5);

  // A new window admits pids again, up to the cap.
  agg.NewWindow();
  agg.Add(Samples({7, 3, 5}, 1));
  by_pid = ByPid(agg.TakeBatch(2, Cycles()).batch);
  CHECK(by_pid[7]["sh"] == 1);
  CHECK(by_pid[3]["sh"] == 1);
  CHECK(by_pid[kRolledUpPid]["sh"] == 1);
}

TEST_CASE("without a cap every pid keeps its row") {
  ImageTable images;
  ProcessTracker tracker;
  Aggregator agg(images, tracker, nullptr);
  agg.set_max_processes(0);
  std::vector<uint32_t> pids;
  for (uint32_t pid = 1; pid <= 3000; ++pid) pids.push_back(pid);
  agg.Add(Samples(pids, 1));
  CHECK(ByPid(agg.TakeBatch(1, Cycles()).batch).size() == 3000);
  CHECK(agg.processes_rolled_up() == 0);
}

TEST_CASE("samples without a task join the rolled-up rows as [no pid]") {
  ImageTable images;
  ProcessTracker tracker;
  Aggregator agg(images, tracker, nullptr);
  agg.set_max_processes(1);
  agg.Add(Samples({kRolledUpPid, 5}, 2));  // perf's pid -1, then a real pid
  auto by_pid = ByPid(agg.TakeBatch(1, Cycles()).batch);
  CHECK(by_pid[kRolledUpPid]["[no pid]"] == 2);
  CHECK(by_pid[5].size() == 1);  // admitted: pid -1 took no place under the cap
  CHECK(agg.processes_rolled_up() == 0);
}

TEST_CASE("each pid rolled up in a window is counted once, across the whole pid space") {
  ImageTable images;
  ProcessTracker tracker;
  Aggregator agg(images, tracker, nullptr);
  agg.set_max_processes(1);
  std::vector<uint32_t> pids = {1};  // admitted; the rest roll up
  for (uint32_t pid = 2; pid <= 100001; ++pid) pids.push_back(pid);
  pids.push_back(4194303);  // the highest pid Linux gives
  agg.Add(Samples(pids, 1));
  agg.Add(Samples({4194303, 100001, 2}, 1));  // seen already this window
  CHECK(agg.processes_rolled_up() == 100001);
  CHECK(ByPid(agg.TakeBatch(1, Cycles()).batch)[kRolledUpPid].begin()->second == 100004);
  agg.NewWindow();  // counted again in the next window
  agg.Add(Samples({1, 4194303, 2}, 1));
  CHECK(agg.processes_rolled_up() == 100003);
}

TEST_CASE("process rows carry their cgroup, and rolled-up rows stay apart per cgroup") {
  ImageTable images;
  ProcessTracker tracker;
  auto web = std::make_shared<const std::string>("/system.slice/nginx.service");
  auto batch = std::make_shared<const std::string>("/system.slice/cron.service");
  for (uint32_t pid = 1; pid <= 5; ++pid) {
    tracker.OnComm(pid, "w", true, 0);
    tracker.SetCgroup(pid, 0, pid <= 3 ? web : batch);
  }
  tracker.OnComm(6, "w", true, 0);  // a cgroup never read
  Aggregator agg(images, tracker, nullptr);
  agg.set_max_processes(1);
  agg.Add(Samples({1, 2, 3, 4, 5, 6}, 10));
  // a kernel sample of pid 4 is in its process's cgroup too
  agg.Add(lcpi::testing::Buffer({{4, 0xffffffff81000000ull, 5, true}}));
  const MergeBatch b = agg.TakeBatch(1, Cycles()).batch;
  std::map<std::tuple<uint32_t, std::string>, uint64_t> rows;
  for (const lcpi::ProcessRow& p : b.processes) rows[{p.pid, p.cgroup}] += p.count;
  CHECK(rows.size() == 4);
  CHECK(rows[{1, *web}] == 10);
  CHECK(rows[{kRolledUpPid, *web}] == 20);        // 2, 3
  CHECK(rows[{kRolledUpPid, *batch}] == 20 + 5);  // 4, 5
  CHECK(rows[{kRolledUpPid, ""}] == 10);          // 6
}

TEST_CASE("a pid's samples stay with the cgroup they ran in: a read coming back, a re-exec") {
  ImageTable images;
  ProcessTracker tracker;
  auto web = std::make_shared<const std::string>("/system.slice/nginx.service");
  auto batch = std::make_shared<const std::string>("/system.slice/cron.service");
  Aggregator agg(images, tracker, nullptr);
  tracker.OnComm(1, "w", true, 0);
  agg.Add(Samples({1}, 10));  // its cgroup not read yet
  tracker.SetCgroup(1, 0, web);
  agg.Add(Samples({1}, 20));
  // The same command execs again in another cgroup, within the flush.
  tracker.OnComm(1, "w", true, 100);
  tracker.SetCgroup(1, 100, batch);
  RecordBuffer later = Samples({1}, 40);
  later.header.t_first = 110;
  later.header.t_last = 120;
  agg.Add(later);
  const MergeBatch b = agg.TakeBatch(1, Cycles()).batch;
  std::map<std::string, uint64_t> rows;
  for (const lcpi::ProcessRow& p : b.processes) rows[p.cgroup] += p.count;
  CHECK(rows.size() == 3);
  CHECK(rows[""] == 10);
  CHECK(rows[*web] == 20);
  CHECK(rows[*batch] == 40);
}
