// lcpid --hold-unshipped (issue #28): windows lcpi-ship has not sent, by the
// mark it leaves (libprofile/store/ship_mark.h), are kept past --retain and
// never rolled up; once the mark moves on, retention drops what is sent;
// the size cap still drops held windows, and says so in status.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "daemon_fixture.h"
#include "libprofile/store/ship_mark.h"

using lcpi::testing::Lcpid;
using lcpi::testing::TempDir;

namespace {

// A window a second, expiring a second after it ends, none kept for the
// clock's sake and no rollups: without a hold, each window is gone at the
// next close.
std::vector<std::string> Options(const std::string& mark, std::vector<std::string> extra = {}) {
  std::vector<std::string> o = {"--window",         "1s", "--retain",       "1s",
                                "--keep-windows",   "0",  "--rollup-after", "0",
                                "--hold-unshipped", mark};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

void Wait(int seconds) { std::this_thread::sleep_for(std::chrono::seconds(seconds)); }

}  // namespace

TEST_CASE("windows not shipped outlive --retain until the mark passes them") {
  TempDir dir("lcpi-ship-hold");
  const std::string mark = dir.path + "/state.db.mark";
  Lcpid d(dir.path, 600, Options(mark));
  REQUIRE(d.running());
  Wait(5);
  auto st = d.Status();
  CHECK(st["hold_unshipped"] == mark);
  CHECK(st["ship_mark"] == "none");  // nothing shipped: everything held
  CHECK(st["dropped_epochs"] == "0");
  std::vector<lcpi::EpochInfo> before;
  {
    auto db = d.OpenDb();
    REQUIRE(db);
    auto epochs = db->ListEpochs();
    REQUIRE(epochs);
    before = *epochs;
  }
  REQUIRE(before.size() >= 4);
  // The shipper has sent the first two epochs.
  const int64_t from = before[2].started;
  REQUIRE(lcpi::WriteShipMark(mark, from));
  Wait(3);
  st = d.Status();
  CHECK(st["ship_mark"] == std::to_string(from));
  CHECK(std::stoll(st["ship_lag_s"]) >= 0);
  CHECK(std::stoll(st["dropped_epochs"]) >= 2);
  CHECK(st["unshipped_dropped_epochs"] == "0");
  REQUIRE(d.Stop() == 0);
  auto db = d.OpenDb();
  REQUIRE(db);
  auto after = db->ListEpochs();
  REQUIRE(after);
  // Those sent are gone, and every one not sent is still there.
  for (const lcpi::EpochInfo& e : before) {
    bool kept = false;
    for (const lcpi::EpochInfo& a : *after) kept |= a.id == e.id && a.started == e.started;
    INFO("epoch " << e.id << " started " << e.started << ", the mark " << from);
    CHECK(kept == (e.started >= from));
  }
}

TEST_CASE("the size cap still drops windows not shipped, and counts them") {
  TempDir dir("lcpi-ship-hold");
  const std::string mark = dir.path + "/state.db.mark";
  // The kernel's symbols alone are over a megabyte: every pass drops.
  Lcpid d(dir.path, 600, Options(mark, {"--max-db-size", "1M"}));
  REQUIRE(d.running());
  Wait(5);
  auto st = d.Status();
  CHECK(std::stoll(st["dropped_epochs"]) >= 2);
  CHECK(st["unshipped_dropped_epochs"] == st["dropped_epochs"]);
  REQUIRE(d.Stop() == 0);
}
