// abi_test.cpp - the versioned structs of lcpi_abi.h (the per-CPU statistics
// and the module's info): each published size (LCPI_*_SIZE_VERn) ends
// exactly where the fields of that version end, a later version only
// appends, and each old size keeps an ioctl number of its own that differs
// from the current one only in the size it encodes, so the module can
// answer every size ever published.
#include <catch2/catch.hpp>

#include <cstddef>

#include "lcpi_abi.h"

TEST_CASE("each published statistics size ends where its version's fields end") {
  CHECK(offsetof(lcpi_cpu_stats, throttle_events) == LCPI_CPU_STATS_SIZE_VER1);
  CHECK(offsetof(lcpi_cpu_stats, nmi_samples) == LCPI_CPU_STATS_SIZE_VER2);
  CHECK(offsetof(lcpi_cpu_stats, throttled_lost_estimate) == LCPI_CPU_STATS_SIZE_VER3);
  CHECK(sizeof(lcpi_cpu_stats) == LCPI_CPU_STATS_SIZE_VER4);
  // each version appends one u64
  CHECK(LCPI_CPU_STATS_SIZE_VER2 - LCPI_CPU_STATS_SIZE_VER1 == sizeof(uint64_t));
  CHECK(LCPI_CPU_STATS_SIZE_VER3 - LCPI_CPU_STATS_SIZE_VER2 == sizeof(uint64_t));
  CHECK(LCPI_CPU_STATS_SIZE_VER4 - LCPI_CPU_STATS_SIZE_VER3 == sizeof(uint64_t));
}

TEST_CASE("each published info size ends where its version's fields end") {
  CHECK(offsetof(lcpi_info, precise_ip) == LCPI_INFO_SIZE_VER1);
  CHECK(sizeof(lcpi_info) == LCPI_INFO_SIZE_VER2);
  // one precise_ip per event, then padding to keep the size a multiple of 8
  CHECK(sizeof(lcpi_info::precise_ip) == LCPI_MAX_EVENTS);
  CHECK(sizeof(lcpi_info) % 8 == 0);
}

TEST_CASE("both info sizes have their own GET_INFO number, differing only in size") {
  CHECK(_IOC_SIZE(LCPI_IOC_GET_INFO_VER1) == LCPI_INFO_SIZE_VER1);
  CHECK(_IOC_SIZE(LCPI_IOC_GET_INFO) == LCPI_INFO_SIZE_VER2);
  CHECK(_IOC_NR(LCPI_IOC_GET_INFO_VER1) == _IOC_NR(LCPI_IOC_GET_INFO));
  CHECK(_IOC_DIR(LCPI_IOC_GET_INFO_VER1) == _IOC_DIR(LCPI_IOC_GET_INFO));
  CHECK(LCPI_IOC_GET_INFO_VER1 != LCPI_IOC_GET_INFO);
}

TEST_CASE("every statistics size has its own GET_STATS number, differing only in size") {
  const unsigned long numbers[] = {LCPI_IOC_GET_STATS_VER1, LCPI_IOC_GET_STATS_VER2,
                                   LCPI_IOC_GET_STATS_VER3, LCPI_IOC_GET_STATS};
  const unsigned sizes[] = {LCPI_CPU_STATS_SIZE_VER1, LCPI_CPU_STATS_SIZE_VER2,
                            LCPI_CPU_STATS_SIZE_VER3, LCPI_CPU_STATS_SIZE_VER4};
  for (int i = 0; i < 4; ++i) {
    INFO("version " << i + 1);
    CHECK(_IOC_SIZE(numbers[i]) == sizes[i]);
    CHECK(_IOC_NR(numbers[i]) == _IOC_NR(LCPI_IOC_GET_STATS));
    CHECK(_IOC_TYPE(numbers[i]) == LCPI_IOC_MAGIC);
    CHECK(_IOC_DIR(numbers[i]) == (_IOC_READ | _IOC_WRITE));
  }
  CHECK(LCPI_IOC_GET_STATS_VER1 != LCPI_IOC_GET_STATS_VER2);
  CHECK(LCPI_IOC_GET_STATS_VER2 != LCPI_IOC_GET_STATS_VER3);
  CHECK(LCPI_IOC_GET_STATS_VER3 != LCPI_IOC_GET_STATS);
}
