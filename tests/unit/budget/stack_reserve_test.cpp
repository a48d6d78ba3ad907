// stack_reserve_test.cpp - what is held back for call stacks: the asked
// rate at the interrupt's estimate until a window measured them, then the
// last window's stacks at that estimate plus lcpid's CPU unwinding them,
// per CPU; nothing where stacks are off.
#include "libprofile/budget/stack_reserve.h"

#include <catch2/catch.hpp>

using lcpi::StackReserve;

namespace {

constexpr int64_t kS = 1'000'000'000;

}  // namespace

TEST_CASE("stacks off hold nothing back") {
  StackReserve r(0, 0);
  CHECK(r.Pct(8000, 2) == 0);
  r.Update(1000, 40'000'000, 10 * kS);
  CHECK(r.Pct(8000, 2) == 0);
}

TEST_CASE("before a window measured them: the asked rate at the interrupt's estimate") {
  StackReserve r(100, 0);
  CHECK_FALSE(r.measured());
  // 100 stacks/s at 8 us each: 0.8 ms/s, 0.08 % of each CPU
  CHECK(r.Pct(8000, 2) == Approx(0.08));
  CHECK(r.Pct(0, 2) == 0);  // no estimate yet, no unwinding measured
}

TEST_CASE("a window's stacks and their unwinding, per CPU") {
  StackReserve r(100, 0);
  // 10 s on 2 CPUs: 1,900 stacks (95/s/CPU), 0.76 s of unwinding (40 us a stack)
  r.Update(1900, 760'000'000, 10 * kS);
  REQUIRE(r.measured());
  CHECK(r.stacks_per_s() == Approx(190));
  CHECK(r.unwind_ns_per_s() == Approx(76e6));
  // per CPU: 95 x 8 us + 38 ms/s = 38.76 ms/s: 3.876 %
  CHECK(r.Pct(8000, 2) == Approx(100.0 * (95 * 8000 + 38e6) / 1e9));
  // the next window's, not the sum since start
  r.Update(1900 + 950, 760'000'000 + 190'000'000, 20 * kS);
  CHECK(r.stacks_per_s() == Approx(95));
  CHECK(r.Pct(8000, 2) == Approx(100.0 * (47.5 * 8000 + 9.5e6) / 1e9));
}

TEST_CASE("a window shorter than a second is measured with the next") {
  StackReserve r(100, 0);
  r.Update(10, 1'000'000, kS / 2);
  CHECK_FALSE(r.measured());
  r.Update(200, 2'000'000, 2 * kS);
  REQUIRE(r.measured());
  CHECK(r.stacks_per_s() == Approx(100));
  CHECK(r.unwind_ns_per_s() == Approx(1e6));
}

TEST_CASE("totals that went back (a source started again) count as none") {
  StackReserve r(100, 0);
  r.Update(1000, 1'000'000, 10 * kS);
  r.Update(10, 10, 20 * kS);
  CHECK(r.stacks_per_s() == 0);
  CHECK(r.unwind_ns_per_s() == 0);
  CHECK(r.Pct(8000, 1) == 0);
  r.Update(110, 1'000'010, 30 * kS);  // and from there on as measured
  CHECK(r.stacks_per_s() == Approx(10));
}
