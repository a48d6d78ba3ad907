// throttle_test.cpp - the estimate of the samples lost while perf
// throttled an event (kmod/include/lcpi_throttle.h): the time past one
// interval, capped at a tick (perf unthrottles at the tick), over the
// interval.
#include <catch2/catch.hpp>

#include "lcpi_throttle.h"

namespace {
constexpr __u64 kTick = 4000000;  // HZ=250
}

TEST_CASE("throttled-lost: the time past one interval over the interval") {
  CHECK(lcpi_throttle_lost(10000 + 3 * 10000, 10000, kTick) == 3);
  CHECK(lcpi_throttle_lost(10000 + 3 * 10000 + 9999, 10000, kTick) == 3);
}

TEST_CASE("throttled-lost: nothing when the next sample comes within an interval") {
  CHECK(lcpi_throttle_lost(0, 10000, kTick) == 0);
  CHECK(lcpi_throttle_lost(5000, 10000, kTick) == 0);
  CHECK(lcpi_throttle_lost(10000, 10000, kTick) == 0);
  CHECK(lcpi_throttle_lost(1000000, 0, kTick) == 0);  // no interval yet
}

TEST_CASE("throttled-lost: never more than a tick's worth, whatever idle or multiplexing follow") {
  // 10 us interval, next sample 2 s later (the CPU idled): at most 4 ms / 10 us.
  CHECK(lcpi_throttle_lost(2000000000ULL, 10000, kTick) == kTick / 10000);
  CHECK(lcpi_throttle_lost(~0ULL, 1, kTick) == kTick);
}
