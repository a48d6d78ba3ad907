// observer_cost_test.cpp - a real lcpid run, as root, on this host's perf
// events: once its calibration is done and a window merged, the database
// holds the window's cost and lcpid's pid, and lcpiprof's header states the
// cost ("lcpi cost X % ± Y of CPU in this window (...)") in text and JSON.
// Nothing asserts a speed (the CPUs are shared): only that the figures are
// there and agree with what status measured.
#include <catch2/catch.hpp>

#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include "daemon_fixture.h"

using lcpi::testing::Capture;
using lcpi::testing::DaemonFixture;
using lcpi::testing::Run;

TEST_CASE("a real lcpid run's report header states what the profile cost") {
  DaemonFixture d;
  REQUIRE(d.running());
  // Until the start's calibration is done (a minute at most).
  std::map<std::string, std::string> st;
  for (int i = 0; i < 600; i++) {
    st = d.Status();
    if (st["calibration_state"] == "done" || st["calibration_state"] == "failed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO("calibration_error: " << st["calibration_error"]);
  REQUIRE(st["calibration_state"] == "done");
  REQUIRE(Run({std::string(WORKLOAD_DIR) + "/shares", "1"}) == 0);
  INFO("flush: " << d.Ctl("flush"));

  {
    auto db = d.OpenDb();
    auto cost = db->Cost(lcpi::EpochSet::All());
    REQUIRE(cost.has_value());
    REQUIRE(cost->has_value());
    CHECK((*cost)->samples > 0);
    CHECK((*cost)->cpu_ns > 0);
    CHECK((*cost)->interrupt_ns > 0);
    CHECK((*cost)->daemon_ns > 0);
    auto pids = db->ObserverPids(lcpi::EpochSet::All());
    REQUIRE(pids.has_value());
    CHECK(pids->size() == 1);
  }

  const std::string text = Capture(std::string(LCPIPROF_PATH) + " --db " + d.db_path() + " 2>&1");
  INFO(text);
  CHECK(std::regex_search(
      text, std::regex("# cost: +lcpi cost [0-9]+\\.[0-9]{2} % \u00b1 [0-9]+\\.[0-9]{2} of CPU in "
                       "this window \\(interrupt [0-9]+\\.[0-9] \u00b5s/sample, daemon [0-9]+ "
                       "ns/sample, .*[0-9]+ samples/s/CPU\\)")));
  const std::string json =
      Capture(std::string(LCPIPROF_PATH) + " --db " + d.db_path() + " --format json 2>&1");
  INFO(json);
  CHECK(json.find("\"cost\": {\"measured\": true, \"percent\": ") != std::string::npos);
  // lcpid's own samples: a line of their own in the process view.
  const std::string procs =
      Capture(std::string(LCPIPROF_PATH) + " --db " + d.db_path() + " -P 2>&1");
  INFO(procs);
  CHECK(procs.find("[lcpi: observer]") != std::string::npos);
}
