// fleet_period_weights_test.cpp - lcpiprof --fleet weighs windows by their
// period over a reference period; every period, start and count is a
// shipping host's, so hostile ones (a period of 0 or 2^64-1, a far-future
// window at period 1) must neither choose the reference for the fleet nor
// overflow the weighed sums.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include "libprofile/report/fleet_period_weights.h"

namespace {

using lcpi::report::HostPeriod;
using lcpi::report::PeriodWeight;
using lcpi::report::ReferenceHost;
using lcpi::report::WeighedCount;

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
constexpr int64_t kFarFuture = int64_t{4102444800};  // 2100-01-01

TEST_CASE("fleet weights: one host's newest window is the reference (as a local report)") {
  auto ref = ReferenceHost({{"alpha", 100, 2000}});
  REQUIRE(ref);
  CHECK(*ref == 0);
  CHECK(*PeriodWeight(2000).Of(1000) == Approx(0.5));
  CHECK(*PeriodWeight(0).Of(1000) == 1.0L);  // one period: not weighed
}

TEST_CASE("fleet weights: a far-future window at period 1 does not choose the reference") {
  const std::vector<HostPeriod> hosts = {
      {"alpha", 100, 1000}, {"beta", 200, 2000}, {"mallory", kFarFuture, 1}};
  auto ref = ReferenceHost(hosts);
  REQUIRE(ref);
  CHECK(hosts[*ref].host == "alpha");  // the lower median: 1000
}

TEST_CASE("fleet weights: periods of 0 or beyond 2^62 never choose the reference") {
  const std::vector<HostPeriod> hosts = {{"alpha", 100, 1000},
                                         {"mallory", kFarFuture, kMax},
                                         {"mallet", kFarFuture + 1, 0},
                                         {"trudy", kFarFuture + 2, (uint64_t{1} << 62) + 1}};
  auto ref = ReferenceHost(hosts);
  REQUIRE(ref);
  CHECK(hosts[*ref].host == "alpha");
  CHECK_FALSE(ReferenceHost({{"mallory", 1, 0}, {"trudy", 2, kMax}}));
}

TEST_CASE("fleet weights: periods of 0 or beyond 2^62 are refused, 2^62 itself weighed") {
  const PeriodWeight w(1000);
  CHECK_FALSE(w.Of(0));
  CHECK_FALSE(w.Of(kMax));
  CHECK_FALSE(w.Of((uint64_t{1} << 62) + 1));
  REQUIRE(w.Of(uint64_t{1} << 62));
  CHECK(*w.Of(uint64_t{1} << 62) == Approx(4611686018427387.904L));
  CHECK_FALSE(PeriodWeight(0).Of(0));  // refused even when not weighed
}

TEST_CASE("fleet weights: a weighed sum beyond 2^64-1 saturates, never wraps") {
  bool saturated = false;
  // 2^63 samples at 2^62 over a reference of 1: 2^125
  const long double huge = 9223372036854775808.0L * *PeriodWeight(1).Of(uint64_t{1} << 62);
  CHECK(WeighedCount(huge, &saturated) == kMax);
  CHECK(saturated);
  CHECK(WeighedCount(18446744073709551615.0L, &saturated) == kMax);
  CHECK(WeighedCount(1e30L, &saturated) == kMax);
  CHECK(saturated);
  CHECK(WeighedCount(2.5L, &saturated) == 3);
  CHECK_FALSE(saturated);
  CHECK(WeighedCount(9223372036854775808.0L, &saturated) == uint64_t{1} << 63);  // past llround's
  CHECK_FALSE(saturated);
}

}  // namespace
