// images_test.cpp - where lcpid reads each image from, as root on this host's
// real perf events: programs run from a private mount namespace (one whose
// path does not exist on the host, one whose path holds a different program
// there) each get their own identity and procedures, and a program deleted
// after it ran is still named by the tools.
#include <catch2/catch.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "daemon_fixture.h"
#include "libprofile/image/elf_symbols.h"
#include "libprofile/image/image_cache.h"
#include "libprofile/image/image_id.h"

using lcpi::testing::Capture;
using lcpi::testing::DaemonFixture;
using lcpi::testing::Run;
using lcpi::testing::TempDir;

namespace {

const std::string kWorkloads = WORKLOAD_DIR;

template <class T>
T Must(lcpi::Expected<T> e) {
  REQUIRE(e);
  return std::move(*e);
}

std::string IdentityOf(const std::string& path) {
  lcpi::Expected<lcpi::ImageIdentity> id = lcpi::IdentifyElfFile(path);
  REQUIRE(id);
  return id->identity;
}

// Samples of the newest epoch on the image of `identity`, per function of
// `elf_path` (the same program, read from where the test built it).
std::map<std::string, uint64_t> PerSymbol(lcpi::ProfileDb& db, const std::string& identity,
                                          const std::string& elf_path) {
  std::map<std::string, uint64_t> out;
  auto elf = lcpi::ElfImage::Open(elf_path);
  REQUIRE(elf);
  int64_t epoch = *db.CurrentEpoch();
  for (const lcpi::ImageInfo& image : Must(db.ListImages())) {
    if (image.identity != identity) continue;
    for (const lcpi::EventInfo& ev : Must(db.ListEvents()))
      for (const lcpi::OffsetCount& oc :
           Must(db.OffsetCounts(epoch, image.id, ev.id, 0, UINT64_MAX >> 1))) {
        auto hit = (*elf)->LookupFileOffset(oc.offset);
        out[hit ? hit->symbol->name : "?"] += oc.count;
      }
  }
  return out;
}

// Total samples of the newest epoch on the image of `identity`.
uint64_t OnIdentity(lcpi::ProfileDb& db, const std::string& identity) {
  std::map<int64_t, std::string> identities;
  for (const lcpi::ImageInfo& i : Must(db.ListImages())) identities[i.id] = i.identity;
  uint64_t n = 0;
  for (const lcpi::ImageTotal& t : Must(db.ImageTotals(*db.CurrentEpoch())))
    if (identities[t.image_id] == identity) n += t.count;
  return n;
}

// Waits (up to a minute: lcpid copies at low priority) for lcpid's copy of
// identity in the image cache; its path, or "".
std::string WaitForCopy(const std::string& db_path, const std::string& identity) {
  for (int i = 0; i < 600; i++) {
    std::string copy = lcpi::FindCachedImage(db_path, identity);
    if (!copy.empty()) return copy;
    usleep(100 * 1000);
  }
  return "";
}

// Checks the 60/30/10 shares of a shares workload within 2 points.
void CheckShares(std::map<std::string, uint64_t> sym, const std::string& prefix) {
  double a = sym[prefix + "60"], b = sym[prefix + "30"], c = sym[prefix + "10"];
  double total = a + b + c;
  INFO(prefix << "60 " << a << ", " << prefix << "30 " << b << ", " << prefix << "10 " << c);
  // 5 s at 5000 samples/s is up to 25000; a loaded shared host gives each
  // program far less (and lcpid may start late in it), so ask only for
  // enough to measure a share.
  REQUIRE(total > 500);
  CHECK(std::abs(100 * a / total - 60) < 2);
  CHECK(std::abs(100 * b / total - 30) < 2);
  CHECK(std::abs(100 * c / total - 10) < 2);
}

}  // namespace

TEST_CASE("programs in a private mount namespace get their own identity and procedures") {
  // Two directories the namespace covers with its own tmpfs: one empty on
  // the host, one holding a different program (tiny) at the same path.
  TempDir dir("lcpi-images-test");
  std::string only_ns = dir.path + "/only-ns", both = dir.path + "/both";
  std::filesystem::create_directories(only_ns);
  std::filesystem::create_directories(both);
  std::filesystem::copy_file(kWorkloads + "/tiny", both + "/prog");
  std::string host_identity = IdentityOf(both + "/prog");
  std::string nobid = kWorkloads + "/shares_nobid", alt = kWorkloads + "/shares_alt";
  REQUIRE(IdentityOf(nobid) != IdentityOf(alt));

  // Started after lcpid (their mappings come as MMAP2 records), or before
  // it (found by the /proc scan).
  bool before = GENERATE(false, true);
  INFO((before ? "started before lcpid" : "started after lcpid"));
  // unshare -m makes every mount private: the host never sees these tmpfs.
  std::string script = "mount -t tmpfs lcpi-ns " + only_ns + " && mount -t tmpfs lcpi-ns " + both +
                       " && cp " + nobid + " " + only_ns + "/prog && cp " + alt + " " + both +
                       "/prog && { " + only_ns + "/prog 5 & " + both + "/prog 5 & wait; }";
  std::vector<std::string> argv = {"/usr/bin/unshare", "-m", "/bin/sh", "-c", script};
  pid_t early = -1;
  if (before) {
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    REQUIRE(posix_spawn(&early, args[0], nullptr, nullptr, args.data(), environ) == 0);
    usleep(300 * 1000);  // running before lcpid starts
  }
  DaemonFixture d;
  REQUIRE(d.running());
  if (before) {
    int status = 0;
    REQUIRE(waitpid(early, &status, 0) == early);
    REQUIRE(status == 0);
  } else {
    REQUIRE(Run(argv) == 0);
  }
  REQUIRE(!std::filesystem::exists(only_ns + "/prog"));  // the host did not see it
  // lcpid copies on a thread of its own, which stopping abandons
  CHECK(!WaitForCopy(d.db_path(), IdentityOf(nobid)).empty());
  CHECK(!WaitForCopy(d.db_path(), IdentityOf(alt)).empty());
  REQUIRE(d.Stop() == 0);
  auto db = d.OpenDb();
  REQUIRE(db);

  CheckShares(PerSymbol(*db, IdentityOf(nobid), nobid), "work");
  CheckShares(PerSymbol(*db, IdentityOf(alt), alt), "alt");
  // The host's file at the second path ran nowhere: none of the samples.
  CHECK(OnIdentity(*db, host_identity) == 0);
  // and nothing was filed under a path alone
  for (const lcpi::ImageInfo& i : Must(db->ListImages())) {
    INFO(i.identity << " " << i.path);
    CHECK(i.identity.rfind("file:", 0) != 0);
  }
  // and the tools name them, from lcpid's copies: the host has no such file
  std::string prof =
      Capture(std::string(LCPIPROF_PATH) + " --db " + d.db_path() + " -p --width 200 2>&1");
  INFO(prof);
  CHECK_THAT(prof, Catch::Contains("work60") && Catch::Contains("alt60"));
}

TEST_CASE("a program deleted after it ran is still named by lcpiprof and listed by lcpilist") {
  TempDir dir("lcpi-images-gone");
  std::string prog = dir.path + "/gone-prog";
  std::filesystem::copy_file(kWorkloads + "/shares", prog);
  lcpi::testing::Lcpid d(dir.path, 600);
  REQUIRE(d.running());
  REQUIRE(Run({prog, "2"}) == 0);
  // Deleted once lcpid has its copy (made on a thread of its own, at low
  // priority: on a busy host it may come after the program ended).
  CHECK(!WaitForCopy(d.db_path(), IdentityOf(kWorkloads + "/shares")).empty());
  REQUIRE(std::filesystem::remove(prog));
  auto status = d.Status();
  CHECK(status["image_cache_misses"] != "0");  // the copy was made while it ran
  CHECK(status["image_cache_files"] != "0");
  REQUIRE(d.Stop() == 0);

  std::string db = " --db " + d.db_path();
  std::string prof = Capture(std::string(LCPIPROF_PATH) + db + " -p --width 200 2>&1");
  INFO(prof);
  CHECK_THAT(prof, Catch::Contains("work60") && Catch::Contains("work30"));
  CHECK_THAT(prof, !Catch::Contains("cannot read " + prog));
  std::string list = Capture(std::string(LCPILIST_PATH) + db + " work60 gone-prog 2>&1");
  INFO(list);
  CHECK_THAT(list, Catch::Contains("work60 in " + prog));
  CHECK_THAT(list, !Catch::Contains("cannot read"));
  // the instructions themselves, disassembled from the copy: the loop's multiply by 31
  CHECK_THAT(list, Catch::Contains("imul") || Catch::Contains("shl") || Catch::Contains("lea"));

  // The program was in a directory others cannot pass (TempDir is 0700):
  // its copy is root's alone, more private than the database.
  std::string cached = lcpi::FindCachedImage(d.db_path(), IdentityOf(kWorkloads + "/shares"));
  REQUIRE(!cached.empty());
  auto mode = [](const std::string& p) {
    return std::filesystem::status(p).permissions() & std::filesystem::perms::all;
  };
  CHECK(mode(cached) == std::filesystem::perms(0600));
  CHECK((mode(cached) & std::filesystem::perms::others_all) == std::filesystem::perms::none);
}
