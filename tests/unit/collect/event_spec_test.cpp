// event_spec_test.cpp - the event names lcpid accepts and how each may
// degrade: only cycles may be sampled as the software cpu-clock where the
// PMU lacks it ("never fake an event"); every other hardware event is
// refused by name, with a message naming the event and the PMU.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <linux/perf_event.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "libprofile/collect/event_spec.h"

TEST_CASE("only cycles may fall back to cpu-clock") {
  lcpi::Expected<lcpi::EventSpec> cycles = lcpi::ParseEvent("cycles");
  REQUIRE(cycles);
  CHECK(cycles->fallback_to_cpu_clock);
  for (const char* name : {"imiss", "dmiss", "instructions", "branch-misses", "cache-misses",
                           "cpu-clock", "task-clock", "r:4:0x3c", "r:0:0"}) {
    INFO(name);
    lcpi::Expected<lcpi::EventSpec> e = lcpi::ParseEvent(name);
    REQUIRE(e);
    CHECK_FALSE(e->fallback_to_cpu_clock);
  }
}

TEST_CASE("an event spec does not fall back unless it says so") {
  lcpi::EventSpec spec;
  CHECK_FALSE(spec.fallback_to_cpu_clock);
  CHECK_FALSE(lcpi::CpuClockEvent().fallback_to_cpu_clock);
}

TEST_CASE("the refusal names the event, the PMU and the error") {
  lcpi::Expected<lcpi::EventSpec> imiss = lcpi::ParseEvent("imiss");
  REQUIRE(imiss);
  std::string none = lcpi::RefusalReason(*imiss, "", "No such file or directory");
  CHECK(none.find("'imiss'") != std::string::npos);
  CHECK(none.find("refused") != std::string::npos);
  CHECK(none.find("no hardware PMU") != std::string::npos);
  CHECK(none.find("No such file or directory") != std::string::npos);
  CHECK(none.find("not sampled as anything else") != std::string::npos);
  std::string cpu = lcpi::RefusalReason(*imiss, "cpu_atom/cpu_core", "Operation not supported");
  CHECK(cpu.find("(cpu_atom/cpu_core)") != std::string::npos);
  CHECK(cpu.find("Operation not supported") != std::string::npos);
}

TEST_CASE("the CPU's PMU is found by type or by its cpus list") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("event_spec_test." + std::to_string(getpid()));
  fs::remove_all(dir);
  auto pmu = [&](const std::string& name, const char* type, bool cpus) {
    fs::create_directories(dir / name);
    std::ofstream(dir / name / "type") << type << "\n";
    if (cpus) std::ofstream(dir / name / "cpus") << "0-3\n";
  };
  CHECK(lcpi::CpuPmuName(dir.string()).empty());  // no directory at all
  pmu("software", "1", false);
  pmu("tracepoint", "2", false);
  pmu("kprobe", "6", false);
  pmu("uncore_imc_0", "13", false);
  CHECK(lcpi::CpuPmuName(dir.string()).empty());  // a host without a PMU (QEMU/TCG)
  pmu("cpu", "4", false);
  CHECK(lcpi::CpuPmuName(dir.string()) == "cpu");
  fs::remove_all(dir / "cpu");
  pmu("cpu_core", "4", true);
  pmu("cpu_atom", "10", true);
  CHECK(lcpi::CpuPmuName(dir.string()) == "cpu_atom/cpu_core");
  fs::remove_all(dir);
}

namespace {

using Asked = std::vector<std::pair<int, bool>>;  // precise_ip, exclude_guest

// A PMU modelled as perf_event_open's errno (0: created) for an event at a
// level, as tests/unit/kmod/attr_test.cpp models them from the kernel's lines.
using Pmu = std::function<int(uint32_t type, uint64_t config, const lcpi::OpenLevel&)>;

// AMD with IBS (6.1 and 6.12 amd/core.c amd_pmu_hw_config, amd/ibs.c:236-248
// forward_event_to_ibs): above 2 EOPNOTSUPP; at 1-2 cycles go to the IBS op
// PMU, which refuses exclude_guest with EINVAL (PERF_PMU_CAP_NO_EXCLUDE, 6.1
// amd/ibs.c:641,665, checked in kernel/events/core.c:11640; mainline's
// perf_ibs_init() checks it itself), and every other event is ENOENT.
int AmdIbs(uint32_t type, uint64_t config, const lcpi::OpenLevel& l) {
  if (type == PERF_TYPE_SOFTWARE || l.precise == 0) return 0;
  if (l.precise > 2) return EOPNOTSUPP;
  if (type == PERF_TYPE_HARDWARE && config == PERF_COUNT_HW_CPU_CYCLES)
    return l.exclude_guest ? EINVAL : 0;
  return ENOENT;
}

// ChooseOpenLevel against pmu, recording every level it asked.
lcpi::OpenLevel Choose(uint32_t type, uint64_t config, const Pmu& pmu, Asked* asked = nullptr) {
  return lcpi::ChooseOpenLevel(type, config, [&](const lcpi::OpenLevel& l) -> lcpi::Expected<void> {
    if (asked) asked->emplace_back(l.precise, l.exclude_guest);
    int err = pmu(type, config, l);
    if (err) return lcpi::ErrnoError("perf_event_open", err);
    return {};
  });
}

}  // namespace

// As lcpi.ko's rules (kmod/include/lcpi_attr.h, tests/unit/kmod/attr_test):
// precise only for hardware cycles and instructions, where PEBS or IBS can
// help; a raw or cache event at precise 3 may pass creation on Intel before
// Icelake and then never be scheduled (an empty PEBS constraint).
TEST_CASE("precise_ip is tried from 3 down for hardware cycles and instructions, else only 0") {
  auto no_precise = [](uint32_t, uint64_t, const lcpi::OpenLevel& x) {
    return x.precise ? EOPNOTSUPP : 0;
  };
  for (auto [type, config, want] :
       {std::tuple<uint32_t, uint64_t, Asked>{PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
                                              Asked{{3, true}, {2, true}, {1, true}}},
        {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, Asked{{3, true}, {2, true}, {1, true}}},
        {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, Asked{}},
        {PERF_TYPE_RAW, 0x01c2, Asked{}},
        {PERF_TYPE_HW_CACHE, 0x10000, Asked{}},
        {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, Asked{}}}) {
    INFO("type " << type << " config " << config);
    Asked asked;
    lcpi::OpenLevel l = Choose(type, config, no_precise, &asked);
    CHECK(asked == want);
    CHECK(l.precise == 0);
    CHECK(l.exclude_guest);
    // a PMU taking every level: the first asked
    CHECK(Choose(type, config, [](uint32_t, uint64_t, const lcpi::OpenLevel&) {
            return 0;
          }).precise == (want.empty() ? 0 : 3));
  }
}

// The module's AMD case (attr_test) for the perf source: before, it lowered
// cycles past IBS to precise 0 on the core PMU, since IBS refused its
// exclude_guest at every level.
TEST_CASE("AMD IBS: the perf source's cycles reach IBS at precise 2 with exclude_guest cleared") {
  lcpi::OpenLevel cycles = Choose(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, AmdIbs);
  CHECK(cycles.precise == 2);
  CHECK_FALSE(cycles.exclude_guest);
  // every other event at 0 on the core PMU, guest mode excluded
  for (auto [type, config] :
       {std::pair<uint32_t, uint64_t>{PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
        {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
        {PERF_TYPE_RAW, 0x76},
        {PERF_TYPE_HW_CACHE, 0x10000},
        {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK}}) {
    INFO("type " << type << " config " << config);
    lcpi::OpenLevel l = Choose(type, config, AmdIbs);
    CHECK(l.precise == 0);
    CHECK(l.exclude_guest);
  }
}

TEST_CASE("exclude_guest is cleared once, after EINVAL at a precise level, before lowering") {
  Asked asked;
  lcpi::OpenLevel l = Choose(
      PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
      [](uint32_t, uint64_t, const lcpi::OpenLevel& x) { return x.precise ? EINVAL : 0; }, &asked);
  CHECK(asked == Asked{{3, true}, {3, false}, {2, true}, {2, false}, {1, true}, {1, false}});
  CHECK(l.precise == 0);  // level 0 is the caller's to open (and report)
  CHECK(l.exclude_guest);
}

// perf's tool lowers precise_ip on any error; AMD's IBS refuses with ENOENT
// (forward_event_to_ibs, amd/ibs.c:236-248) what the core PMU takes at 0.
TEST_CASE("any other error at a precise level > 0 tries the next level, guest mode excluded") {
  for (int err : {EOPNOTSUPP, ENOENT, EACCES, EBUSY}) {
    INFO("errno " << err);
    Asked asked;
    lcpi::OpenLevel l = Choose(
        PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
        [err](uint32_t, uint64_t, const lcpi::OpenLevel& x) { return x.precise ? err : 0; },
        &asked);
    CHECK(asked == Asked{{3, true}, {2, true}, {1, true}});
    CHECK(l.precise == 0);
    CHECK(l.exclude_guest);
  }
  SECTION("the first level taken is kept") {
    Asked asked;
    lcpi::OpenLevel l = Choose(
        PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
        [](uint32_t, uint64_t, const lcpi::OpenLevel& x) { return x.precise > 2 ? EOPNOTSUPP : 0; },
        &asked);
    CHECK(asked == Asked{{3, true}, {2, true}});
    CHECK(l.precise == 2);
    CHECK(l.exclude_guest);
    asked.clear();
    Choose(
        PERF_TYPE_RAW, 0x01c2, [](uint32_t, uint64_t, const lcpi::OpenLevel&) { return 0; },
        &asked);
    CHECK(asked.empty());
  }
}
