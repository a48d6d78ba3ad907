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
#include <string>

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

// As lcpi.ko's rules (kmod/include/lcpi_attr.h, tests/unit/kmod/attr_test):
// precise only for hardware cycles and instructions, where PEBS or IBS can
// help; a raw or cache event at precise 3 may pass creation on Intel before
// Icelake and then never be scheduled (an empty PEBS constraint).
TEST_CASE("precise_ip is tried from 3 down for hardware cycles and instructions, else only 0") {
  CHECK(lcpi::PreciseLevels(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES) ==
        std::vector<int>{3, 2, 1, 0});
  CHECK(lcpi::PreciseLevels(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS) ==
        std::vector<int>{3, 2, 1, 0});
  CHECK(lcpi::PreciseLevels(PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES) ==
        std::vector<int>{0});
  CHECK(lcpi::PreciseLevels(PERF_TYPE_RAW, 0x01c2) == std::vector<int>{0});
  CHECK(lcpi::PreciseLevels(PERF_TYPE_HW_CACHE, 0x10000) == std::vector<int>{0});
  CHECK(lcpi::PreciseLevels(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK) == std::vector<int>{0});
}

// perf's tool lowers precise_ip on any error; AMD's IBS refuses with ENOENT
// (forward_event_to_ibs, amd/ibs.c:236-248) what the core PMU takes at 0.
TEST_CASE("any error at a precise level > 0 tries the next level") {
  for (int err : {EINVAL, EOPNOTSUPP, ENOENT, EACCES, EBUSY}) {
    lcpi::Error e = lcpi::ErrnoError("perf_event_open", err);
    INFO("errno " << err);
    CHECK(lcpi::TryLowerPrecise(e, 3));
    CHECK(lcpi::TryLowerPrecise(e, 1));
    CHECK_FALSE(lcpi::TryLowerPrecise(e, 0));  // nothing lower: the error stands
  }
}
