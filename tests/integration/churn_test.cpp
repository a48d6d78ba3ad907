// churn_test.cpp - process churn under lcpid, end to end as root: 10,000
// short-lived processes (attributed, lost counted, memory bounded), a pid
// number reused by another program, and a binary replaced on disk while it
// runs. Each asserts from the database which image every sample went to.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "libprofile/image/elf_symbols.h"
#include "libprofile/image/image_id.h"
#include "reliability_util.h"

using lcpi::testing::DaemonFixture;
using lcpi::testing::Num;
using lcpi::testing::Outcome;
using lcpi::testing::RunOut;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kWorkloads = WORKLOAD_DIR;

template <class T>
T Must(lcpi::Expected<T> e) {
  REQUIRE(e);
  return std::move(*e);
}

// Samples per image id over the whole database, and the images by id.
std::map<int64_t, uint64_t> PerImageId(lcpi::ProfileDb& db) {
  std::map<int64_t, uint64_t> out;
  for (const lcpi::ImageTotal& t : Must(db.ImageTotals(lcpi::kAllEpochs)))
    out[t.image_id] += t.count;
  return out;
}

std::map<int64_t, lcpi::ImageInfo> Images(lcpi::ProfileDb& db) {
  std::map<int64_t, lcpi::ImageInfo> out;
  for (const lcpi::ImageInfo& i : Must(db.ListImages())) out[i.id] = i;
  return out;
}

int64_t ImageByIdentity(lcpi::ProfileDb& db, const std::string& identity) {
  for (const lcpi::ImageInfo& i : Must(db.ListImages()))
    if (i.identity == identity) return i.id;
  return -1;
}

std::string IdentityOf(const std::string& path) {
  auto id = lcpi::IdentifyElfFile(path);
  REQUIRE(id);
  return id->identity;
}

// Samples per function of image `id`, symbolized with the ELF file at `elf_path`.
std::map<std::string, uint64_t> PerSymbol(lcpi::ProfileDb& db, int64_t id,
                                          const std::string& elf_path) {
  std::map<std::string, uint64_t> out;
  if (id < 0) return out;
  auto elf = lcpi::ElfImage::Open(elf_path);
  REQUIRE(elf);
  for (const lcpi::EventInfo& ev : Must(db.ListEvents()))
    for (const lcpi::OffsetCount& oc :
         Must(db.OffsetCounts(lcpi::kAllEpochs, id, ev.id, 0, UINT64_MAX >> 1))) {
      auto hit = (*elf)->LookupFileOffset(oc.offset);
      out[hit ? hit->symbol->name : "?"] += oc.count;
    }
  return out;
}

// Samples on the [unknown COMM] images of these command names.
uint64_t UnknownOf(lcpi::ProfileDb& db, std::initializer_list<const char*> comms) {
  std::map<int64_t, uint64_t> totals = PerImageId(db);
  uint64_t n = 0;
  for (const auto& [id, info] : Images(db))
    for (const char* comm : comms)
      if (info.path == std::string("[unknown ") + comm + "]") n += totals[id];
  return n;
}

}  // namespace

TEST_CASE("10,000 short-lived processes: attributed, lost counted, memory bounded", "[slow]") {
  DaemonFixture d;
  REQUIRE(d.running());
  const std::string blip = kWorkloads + "/blip";
  const int kProcesses = 10000;
  uint64_t peak_rss = 0;
  Outcome churn;
  std::atomic<bool> finished{false};
  Clock::time_point start = Clock::now();
  std::thread driver([&] {
    // two at a time: both CPUs churn; each blip spins 1 ms
    churn = RunOut({kWorkloads + "/churn", blip, std::to_string(kProcesses), "2", "1000"});
    finished = true;
  });
  // the daemon's memory while it runs
  while (!finished) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    peak_rss = std::max(peak_rss, Num(d.Status(), "rss_bytes"));
  }
  driver.join();
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  REQUIRE(churn.status == 0);
  CHECK(std::stoi(churn.out) == kProcesses);
  auto st = d.Status();
  peak_rss = std::max(peak_rss, Num(st, "rss_bytes"));
  uint64_t samples = Num(st, "samples");
  CHECK(samples ==
        Num(st, "attributed") + Num(st, "unknown") + Num(st, "lost") + Num(st, "in_tables"));
  REQUIRE(d.Stop() == 0);
  auto db = d.OpenDb();
  REQUIRE(db);
  REQUIRE(db->CheckIntegrity());
  uint64_t on_blip = PerImageId(*db)[ImageByIdentity(*db, IdentityOf(blip))];
  uint64_t unknown = UnknownOf(*db, {"blip", "churn"});
  auto stats = Must(db->Stats(lcpi::kAllEpochs));
  double share = on_blip ? 100.0 * on_blip / (on_blip + unknown) : 0;
  WARN("churn: " << kProcesses << " processes in " << wall << " s; " << on_blip
                 << " samples on blip, " << unknown << " unknown (" << share
                 << " % attributed); lost " << stats["lost"] << ", dropped " << stats["dropped"]
                 << " of " << stats["samples"] << "; peak RSS " << peak_rss / 1024 << " KiB");
  REQUIRE(on_blip > 10000);  // 10,000 x 1 ms at 5,000/s: about 50,000
  CHECK(share >= 99.0);
  CHECK(peak_rss < lcpi::testing::PeakRssBound(64ull << 20));
}

TEST_CASE("a reused pid: each program's samples stay on its own image") {
  DaemonFixture d;
  REQUIRE(d.running());
  const std::string a = kWorkloads + "/reuse_a", b = kWorkloads + "/reuse_b";
  Outcome o = RunOut({kWorkloads + "/pid_reuse", a, b, "1.5"});
  INFO("pid_reuse: " << o.out);
  REQUIRE(o.status == 0);
  const uint32_t pid = static_cast<uint32_t>(std::stoul(o.out));
  REQUIRE(d.Stop() == 0);
  auto db = d.OpenDb();
  REQUIRE(db);
  int64_t id_a = ImageByIdentity(*db, IdentityOf(a)), id_b = ImageByIdentity(*db, IdentityOf(b));
  REQUIRE(id_a >= 0);
  REQUIRE(id_b >= 0);
  std::map<std::string, uint64_t> sa = PerSymbol(*db, id_a, a), sb = PerSymbol(*db, id_b, b);
  uint64_t unknown = UnknownOf(*db, {"reuse_a", "reuse_b", "pid_reuse"});
  // both programs ran under the same pid, and the database says so
  std::set<int64_t> images_of_pid;
  for (const lcpi::ProcessTotal& p : Must(db->ProcessTotals(lcpi::kAllEpochs)))
    if (p.pid == pid) images_of_pid.insert(p.image_id);
  WARN("pid reuse: pid " << pid << " ran reuse_a (" << sa["reuse_a_work"]
                         << " samples in reuse_a_work) then reuse_b (" << sb["reuse_b_work"]
                         << " in reuse_b_work); " << unknown << " unknown");
  CHECK(images_of_pid.count(id_a) == 1);
  CHECK(images_of_pid.count(id_b) == 1);
  CHECK(sa["reuse_a_work"] > 300);  // 1.5 s at 5,000/s: up to 7,500 (fewer on a busy host)
  CHECK(sb["reuse_b_work"] > 300);
  // each image holds only its own program's work
  CHECK(sa.count("reuse_b_work") == 0);
  CHECK(sb.count("reuse_a_work") == 0);
  CHECK(unknown * 100 <= sa["reuse_a_work"] + sb["reuse_b_work"]);
}

TEST_CASE("a binary replaced while it runs keeps its samples on the old build-id") {
  DaemonFixture d;
  REQUIRE(d.running());
  const std::string v1 = kWorkloads + "/replaced_v1", v2 = kWorkloads + "/replaced_v2";
  const std::string dir = fs::path(d.db_path()).parent_path();
  const std::string prog = dir + "/prog";
  fs::copy_file(v1, prog);
  // the old build runs 3 s; after 1 s the new build is renamed over it and run
  Outcome old_run, new_run;
  std::thread old_thread([&] { old_run = RunOut({prog, "3"}); });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  fs::copy_file(v2, prog + ".new");
  fs::rename(prog + ".new", prog);
  new_run = RunOut({prog, "1.5"});
  old_thread.join();
  REQUIRE(old_run.status == 0);
  REQUIRE(new_run.status == 0);
  REQUIRE(d.Stop() == 0);
  auto db = d.OpenDb();
  REQUIRE(db);
  int64_t id1 = ImageByIdentity(*db, IdentityOf(v1)), id2 = ImageByIdentity(*db, IdentityOf(v2));
  REQUIRE(id1 >= 0);
  REQUIRE(id2 >= 0);
  CHECK(id1 != id2);
  auto images = Images(*db);
  CHECK(images[id1].path == prog);  // one path, two images
  CHECK(images[id2].path == prog);
  std::map<std::string, uint64_t> s1 = PerSymbol(*db, id1, v1), s2 = PerSymbol(*db, id2, v2);
  uint64_t unknown = UnknownOf(*db, {"prog"});
  WARN("replaced binary: old build " << s1["replaced_v1_work"] << " samples, new build "
                                     << s2["replaced_v2_work"] << ", unknown " << unknown);
  CHECK(s1["replaced_v1_work"] > 300);  // 3 s at 5,000/s: up to 15,000 (fewer on a busy host)
  CHECK(s2["replaced_v2_work"] > 300);  // 1.5 s: up to 7,500
  CHECK(s1.count("replaced_v2_work") == 0);
  CHECK(s2.count("replaced_v1_work") == 0);
  CHECK(unknown * 100 <= s1["replaced_v1_work"] + s2["replaced_v2_work"]);
}
