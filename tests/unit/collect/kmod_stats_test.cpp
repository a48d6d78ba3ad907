// kmod_stats_test.cpp - GetKmodCpuStats, KmodSource's GET_STATS: the
// newest request first, then the older numbers a module of an older ABI
// knows, against a modelled module that answers some of them.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <vector>

#include "libprofile/collect/kmod_source.h"

namespace {

// A module that knows GET_STATS up to size `known` (VER1..VER4) and the
// CPUs below `cpus`, as lcpi_ioc_get_stats() checks: the number's size is
// st->size, the CPU possible; fills the fields of that size.
lcpi::StatsIoctl Module(uint32_t known, uint32_t cpus, std::vector<unsigned long>* asked) {
  return [=](unsigned long request, lcpi_cpu_stats* st) {
    asked->push_back(request);
    uint32_t size = _IOC_SIZE(request);
    if (_IOC_NR(request) != 0x06 || size > known) return ENOTTY;
    if (st->size != size || st->cpu >= cpus) return EINVAL;
    lcpi_cpu_stats full{};
    full.size = size;
    full.cpu = st->cpu;
    full.nested = 7;
    full.throttle_events = 3;
    full.nmi_samples = 11;
    full.throttled_lost_estimate = 40;
    std::memcpy(st, &full, size);
    return 0;
  };
}

}  // namespace

TEST_CASE("GET_STATS: today's module answers the newest number") {
  std::vector<unsigned long> asked;
  lcpi_cpu_stats st{};
  CHECK(lcpi::GetKmodCpuStats(Module(LCPI_CPU_STATS_SIZE_VER4, 2, &asked), 1, &st) ==
        LCPI_CPU_STATS_SIZE_VER4);
  CHECK(asked.size() == 1);
  CHECK(st.nested == 7);
  CHECK(st.throttled_lost_estimate == 40);
}

TEST_CASE("GET_STATS: an older module is asked its own number, its fields kept") {
  for (uint32_t known :
       {LCPI_CPU_STATS_SIZE_VER1, LCPI_CPU_STATS_SIZE_VER2, LCPI_CPU_STATS_SIZE_VER3}) {
    INFO("module knows " << known << " bytes");
    std::vector<unsigned long> asked;
    lcpi_cpu_stats st{};
    CHECK(lcpi::GetKmodCpuStats(Module(known, 2, &asked), 1, &st) == static_cast<int>(known));
    CHECK(st.nested == 7);  // in every version
    CHECK(st.cpu == 1);
    CHECK(st.throttle_events == (known >= LCPI_CPU_STATS_SIZE_VER2 ? 3u : 0u));
    CHECK(st.nmi_samples == (known >= LCPI_CPU_STATS_SIZE_VER3 ? 11u : 0u));
    CHECK(st.throttled_lost_estimate == 0);
  }
}

TEST_CASE("GET_STATS: a CPU that is not possible is EINVAL, one known to no number ENOTTY") {
  std::vector<unsigned long> asked;
  lcpi_cpu_stats st{};
  CHECK(lcpi::GetKmodCpuStats(Module(LCPI_CPU_STATS_SIZE_VER4, 2, &asked), 5, &st) == -EINVAL);
  CHECK(asked.size() == 1);  // EINVAL is not a reason to ask an older number
  asked.clear();
  CHECK(lcpi::GetKmodCpuStats(Module(0, 2, &asked), 0, &st) == -ENOTTY);
  CHECK(asked.size() == 4);
}
