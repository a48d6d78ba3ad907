// observer_test.cpp - lcpi's own samples on a line of their own in every
// lcpiprof view ([lcpi: observer], observer.h), moved, never dropped: lcpid's
// pid in its own window (observer_pids), its executable by the identity
// it stored (observer_images), lcpi.ko and the kernel's sampling path; and the header's
// statement of what the profile cost, or that it was not measured.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "libprofile/report/observer.h"
#include "libprofile/report/report.h"
#include "store/store_test_util.h"

using namespace lcpi;
using namespace lcpi::report;
using lcpi::testing::Ok;
using lcpi::testing::OpenOk;

namespace {

// work (pid 10) and lcpid (pid 77) on one kernel; the kernel's
// perf_swevent_hrtimer has 50 samples, schedule 200.
MergeBatch Batch(int64_t epoch, uint32_t observer_pid, std::optional<WindowCost> cost) {
  MergeBatch b;
  b.epoch = epoch;
  b.images = {{"build-id:01", "/bin/work", ImageKind::kUser},
              {"kernel:k", "[kernel.kallsyms]", ImageKind::kKernel},
              {"build-id:02", "/usr/lib/libc.so.6", ImageKind::kUser},
              {"build-id:03", "/usr/sbin/lcpid", ImageKind::kUser},
              {"module:lcpi", "[lcpi]", ImageKind::kModule}};
  b.events = {{"cycles", "cpu-clock", 200000}};
  b.counts = {{0, 0, 0x10, 1000}, {1, 0, 0x150, 50}, {1, 0, 0x1000, 200},
              {2, 0, 0x20, 300},  {3, 0, 0x30, 40},  {4, 0, 0x10, 10}};
  b.symbols = {{1, 0x100, 0x100, "perf_swevent_hrtimer"},
               {1, 0x1000, 0x100, "schedule"},
               {4, 0x0, 0x100, "lcpi_overflow"}};
  b.processes = {{10, "work", 0, 0, 1000}, {10, "work", 1, 0, 230}, {10, "work", 2, 0, 200},
                 {10, "work", 4, 0, 10},   {77, "lcpid", 3, 0, 40}, {77, "lcpid", 2, 0, 100},
                 {77, "lcpid", 1, 0, 20}};
  b.stats = {{"attributed", 1600}};
  b.observer_pid = observer_pid;
  // lcpid identified its executable (/usr/sbin/lcpid) where it stored its pid.
  if (observer_pid) b.observer_image = "build-id:03";
  b.cost = cost;
  return b;
}

std::map<std::string, uint64_t> Counts(const Profile& p) {
  std::map<std::string, uint64_t> out;
  for (const Row& r : p.rows) out[r.name] += r.counts.at(0);
  return out;
}

Profile Build(ProfileDb& db, View view) {
  ProfOptions o;
  o.view = view;
  return Ok(BuildProfile(db, o));
}

}  // namespace

TEST_CASE("lcpi's own samples are one [lcpi: observer] line in every view, none lost") {
  lcpi::testing::TempDir dir{"lcpi-observer-test"};
  const std::string path = dir.File("p.db");
  {
    auto db = OpenOk(path);
    REQUIRE(db->Merge(Batch(Ok(db->CurrentEpoch()), 77, std::nullopt)).has_value());
  }
  auto db = OpenOk(path, DbMode::kReadOnly);

  // Images: the two images wholly, lcpid's process in libc and the kernel,
  // the sampling path out of the kernel: 40 + 10 + 100 + 20 + 50.
  Profile images = Build(*db, View::kImages);
  CHECK(Counts(images) == std::map<std::string, uint64_t>{{"/bin/work", 1000},
                                                          {"[kernel.kallsyms]", 180},
                                                          {"/usr/lib/libc.so.6", 200},
                                                          {kObserverLine, 220}});
  // Procedures: lcpid's code, lcpi.ko's and the sampling path: 40 + 10 + 50.
  std::map<std::string, uint64_t> procs = Counts(Build(*db, View::kProcedures));
  CHECK(procs.at(kObserverLine) == 100);
  CHECK(procs.at("schedule") == 200);
  CHECK_FALSE(procs.contains("perf_swevent_hrtimer"));
  CHECK_FALSE(procs.contains("lcpi_overflow"));
  // Processes: lcpid's pid.
  CHECK(Counts(Build(*db, View::kProcesses)) ==
        std::map<std::string, uint64_t>{{"work", 1440}, {kObserverLine, 160}});
}

TEST_CASE(
    "a window lcpid stored neither its pid nor its executable for: lcpi.ko and the "
    "sampling path only") {
  lcpi::testing::TempDir dir{"lcpi-observer-test"};
  auto db = OpenOk(dir.File("p.db"));
  REQUIRE(db->Merge(Batch(Ok(db->CurrentEpoch()), 0, std::nullopt)).has_value());
  // Nothing names lcpid by command or by file name: its rows stay its own.
  CHECK(Counts(Build(*db, View::kImages)) ==
        std::map<std::string, uint64_t>{{"/bin/work", 1000},
                                        {"[kernel.kallsyms]", 200},
                                        {"/usr/lib/libc.so.6", 300},
                                        {"/usr/sbin/lcpid", 40},
                                        {kObserverLine, 60}});
  CHECK(Counts(Build(*db, View::kProcedures)).at(kObserverLine) == 60);
  CHECK(Counts(Build(*db, View::kProcesses)) ==
        std::map<std::string, uint64_t>{{"work", 1440}, {"lcpid", 160}});
}

TEST_CASE("only lcpid's own pid is the observer once lcpid stored it") {
  lcpi::testing::TempDir dir{"lcpi-observer-test"};
  auto db = OpenOk(dir.File("p.db"));
  // pid 10 stored as lcpid's: the process named lcpid (77) is someone else's.
  REQUIRE(db->Merge(Batch(Ok(db->CurrentEpoch()), 10, std::nullopt)).has_value());
  CHECK(Counts(Build(*db, View::kProcesses)) ==
        std::map<std::string, uint64_t>{{kObserverLine, 1440}, {"lcpid", 160}});
}

TEST_CASE("the sampling path's kernel functions are known by name, suffixes too") {
  for (const char* name : {"perf_event_overflow", "__perf_event_overflow", "perf_swevent_hrtimer",
                           "x86_pmu_handle_irq", "armv8pmu_handle_irq", "perf_event_nmi_handler",
                           "__perf_event_overflow.isra.0", "lcpi_overflow"})
    CHECK(IsObserverSymbol(name));
  for (const char* name : {"schedule", "perf_event_open", "do_syscall_64", "x86_pmu_enable", ""})
    CHECK_FALSE(IsObserverSymbol(name));
}

TEST_CASE("every report's header states what the profile cost, or that it was not measured") {
  lcpi::testing::TempDir dir{"lcpi-observer-test"};
  auto db = OpenOk(dir.File("p.db"));
  const int64_t e1 = Ok(db->CurrentEpoch());
  // 1600 samples over 2 s of 4 CPUs (200/s/CPU), 20 us each +- 5, 2 us of lcpid's.
  REQUIRE(db->Merge(Batch(e1, 77,
                          WindowCost{1600, 8'000'000'000, 32'000'000, 8'000'000, 3'200'000, 25,
                                     25'000}))
              .has_value());
  RenderOptions text;
  text.width = 200;
  const std::string one = RenderProfile(Build(*db, View::kImages), text);
  CHECK_THAT(one, Catch::Contains("# cost:     lcpi cost 0.44 % \u00b1 0.10 of CPU in this window "
                                  "(interrupt 20.0 \u00b5s/sample, daemon 2000 ns/sample, "
                                  "module handler 1000 ns/sample, 200 samples/s/CPU)"));
  RenderOptions json;
  json.format = Format::kJson;
  CHECK_THAT(RenderProfile(Build(*db, View::kImages), json),
             Catch::Contains("\"cost\": {\"measured\": true, \"percent\": 0.4400, "
                             "\"ci95_percent\": 0.1000, \"interrupt_ns_per_sample\": 20000.0"));
  // A second window, unmeasured, and one measured at 3x the rate: the sums
  // weigh each by its samples and its CPU time.
  REQUIRE(db->NewEpoch(std::nullopt, EpochKind::kWindow).has_value());
  const int64_t e3 = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  REQUIRE(
      db->Merge(Batch(e3, 77, WindowCost{4800, 8'000'000'000, 48'000'000, 9'600'000, 4'800'000}))
          .has_value());
  ProfOptions all;
  all.epoch = "all";
  CHECK_THAT(RenderProfile(Ok(BuildProfile(*db, all)), text),
             Catch::Contains("lcpi cost 0.55 % \u00b1 0.11 of CPU in these 3 windows "
                             "(interrupt 12.5 \u00b5s/sample, daemon 1250 ns/sample, "
                             "module handler 1000 ns/sample, 400 samples/s/CPU)"));
  ProfOptions unmeasured;
  unmeasured.epoch = std::to_string(e3 - 1);
  CHECK_THAT(RenderProfile(Ok(BuildProfile(*db, unmeasured)), text),
             Catch::Contains("# cost:     lcpi cost not measured in this window"));
}

// Call stacks (schema 9): their interrupts are in interrupt_ns beside the
// flat samples', so the cost per sample divides by both, and the header
// says how many stacks a second were taken.
TEST_CASE("the header's cost counts the call stacks' interrupts and states their rate") {
  lcpi::testing::TempDir dir{"lcpi-observer-test"};
  auto db = OpenOk(dir.File("p.db"));
  // 1600 flat samples and 400 stacks over 2 s of 4 CPUs (200 and 50/s/CPU),
  // 2000 interrupts of 20 us each +- 5, 2 us of lcpid's a flat sample
  WindowCost cost{1600, 8'000'000'000, 40'000'000, 10'000'000, 3'200'000};
  cost.stack_samples = 400;
  REQUIRE(db->Merge(Batch(Ok(db->CurrentEpoch()), 77, cost)).has_value());
  RenderOptions text;
  text.width = 200;
  CHECK_THAT(RenderProfile(Build(*db, View::kImages), text),
             Catch::Contains("# cost:     lcpi cost 0.54 % \u00b1 0.12 of CPU in this window "
                             "(interrupt 20.0 \u00b5s/sample, daemon 2000 ns/sample, "
                             "200 samples/s/CPU, 50 stacks/s/CPU)"));
  RenderOptions json;
  json.format = Format::kJson;
  CHECK_THAT(RenderProfile(Build(*db, View::kImages), json),
             Catch::Contains("\"samples_per_s_per_cpu\": 200.0, \"stacks_per_s_per_cpu\": 50.0"));
  // a window of stacks and no flat sample (a hardware event on idle CPUs)
  // still cost its stacks' interrupts
  const int64_t e2 = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  WindowCost stacks_only{0, 8'000'000'000, 8'000'000, 2'000'000, 1'000'000};
  stacks_only.stack_samples = 400;
  REQUIRE(db->Merge(Batch(e2, 77, stacks_only)).has_value());
  ProfOptions second;
  second.epoch = std::to_string(e2);
  CHECK_THAT(RenderProfile(Ok(BuildProfile(*db, second)), text),
             Catch::Contains("# cost:     lcpi cost 0.11 % \u00b1 0.03 of CPU in this window "
                             "(interrupt 20.0 \u00b5s/sample, daemon 0 ns/sample, "
                             "0 samples/s/CPU, 50 stacks/s/CPU)"));
}

// Review round 15, finding 5: a user's own program named lcpid (~/bin/lcpid,
// a user-owned file: identity ":u1000") is not lcpid's executable; only the
// identity lcpid stored for its window is.
TEST_CASE(
    "a user's image named lcpid keeps its own row, and lcpid's stored identity is the observer") {
  lcpi::testing::TempDir dir{"lcpi-observer-test"};
  auto db = OpenOk(dir.File("p.db"));
  MergeBatch b = Batch(Ok(db->CurrentEpoch()), 77, std::nullopt);
  b.images.push_back({"build-id:04:u1000", "/home/u/bin/lcpid", ImageKind::kUser});
  b.counts.push_back({5, 0, 0x40, 500});
  b.processes.push_back({12, "miner", 5, 0, 500});
  b.observer_image = "build-id:03";  // /usr/sbin/lcpid, as lcpid identified itself
  REQUIRE(db->Merge(b).has_value());
  Profile images = Build(*db, View::kImages);
  CHECK(Counts(images).at("/home/u/bin/lcpid") == 500);
  CHECK(Counts(images).at(kObserverLine) == 220);
  std::map<std::string, uint64_t> procs = Counts(Build(*db, View::kProcedures));
  CHECK(procs.at(kObserverLine) == 100);  // lcpid's 40, lcpi.ko's 10, the sampling path's 50
  CHECK(procs.at("lcpid+0x40") == 500);   // the user's image, by its offset
}

// Finding 6: lcpid's pid in one window is someone else's in another; and a
// window without a stored pid (an older lcpid) has no observer process,
// whatever a process calls itself.
TEST_CASE("a pid lcpid had in one window is not the observer in another") {
  lcpi::testing::TempDir dir{"lcpi-observer-test"};
  auto db = OpenOk(dir.File("p.db"));
  const int64_t e1 = Ok(db->CurrentEpoch());
  REQUIRE(db->Merge(Batch(e1, 77, std::nullopt)).has_value());
  // Window 2: lcpid restarted as pid 99; a user's process got pid 77 and
  // calls itself lcpid too.
  const int64_t e2 = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
  MergeBatch b = Batch(e2, 99, std::nullopt);
  b.processes = {{10, "work", 0, 0, 1000}, {77, "lcpid", 0, 0, 600}};
  REQUIRE(db->Merge(b).has_value());
  ProfOptions all;
  all.epoch = "all";
  all.view = View::kProcesses;
  // Window 1's lcpid (160) is the observer; window 2's pid 77 (600) is not.
  CHECK(Counts(Ok(BuildProfile(*db, all))) ==
        std::map<std::string, uint64_t>{{"work", 2440}, {"lcpid", 600}, {kObserverLine, 160}});
  all.view = View::kImages;
  CHECK(Counts(Ok(BuildProfile(*db, all))).at("/bin/work") == 2000);

  SECTION("a rollup keeps apart a pid that was lcpid's in one window and not in another") {
    Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));  // e2 is no longer current
    REQUIRE(db->MergeEpochs({e1, e2}).has_value());
    all.view = View::kProcesses;
    // Which of pid 77's samples were lcpid's is no longer known: none is
    // hidden, and the rollup counts the pid it could not keep.
    CHECK(Counts(Ok(BuildProfile(*db, all))) ==
          std::map<std::string, uint64_t>{{"work", 2440}, {"lcpid", 760}});
    CHECK(Ok(db->Stats(e1)).at("observer_pids_reused") == 1);
  }
  SECTION("a window without lcpid's pid has no observer process, whatever its command") {
    const int64_t e4 = Ok(db->NewEpoch(std::nullopt, EpochKind::kWindow));
    MergeBatch old = Batch(e4, 0, std::nullopt);
    REQUIRE(db->Merge(old).has_value());
    ProfOptions one;
    one.epoch = std::to_string(e4);
    one.view = View::kProcesses;
    CHECK(Counts(Ok(BuildProfile(*db, one))) ==
          std::map<std::string, uint64_t>{{"work", 1440}, {"lcpid", 160}});
  }
}
