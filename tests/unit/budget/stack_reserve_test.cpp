// stack_reserve_test.cpp - what is held back for call stacks: the asked
// stack rate at the interrupt's estimate, as the flat rate is priced, plus
// the last window's unwinding spread over the CPUs; at most half the
// budget; nothing where stacks are off.
#include "libprofile/budget/stack_reserve.h"

#include <catch2/catch.hpp>

using lcpi::StackReserve;

namespace {

constexpr int64_t kS = 1'000'000'000;

}  // namespace

TEST_CASE("stacks off hold nothing back") {
  StackReserve r(0, 0);
  CHECK(r.CostPct(8000, 2) == 0);
  r.Update(40'000'000, 10 * kS);
  CHECK(r.CostPct(8000, 2) == 0);
  CHECK(r.HeldPct(8000, 2, 1) == 0);
}

TEST_CASE("the stacks' interrupts at the asked rate, as the flat rate is priced") {
  StackReserve r(100, 0);
  // 100 stacks/s at 8 us each: 0.8 ms/s, 0.08 % of each CPU, however many
  CHECK(r.CostPct(8000, 2) == Approx(0.08));
  CHECK(r.CostPct(8000, 64) == Approx(0.08));
  CHECK(r.CostPct(0, 2) == 0);  // no estimate yet, no unwinding measured
}

TEST_CASE("the last window's unwinding, spread over the CPUs") {
  StackReserve r(100, 0);
  // a window of 10 s: 0.76 s of unwinding on lcpid's threads
  r.Update(760'000'000, 10 * kS);
  CHECK(r.unwind_ns_per_s() == Approx(76e6));
  // per CPU of 2: 0.8 ms/s of interrupts + 38 ms/s of unwinding
  CHECK(r.CostPct(8000, 2) == Approx(100.0 * (0.8e6 + 38e6) / 1e9));
  // the next window's, not the sum since start
  r.Update(760'000'000 + 190'000'000, 20 * kS);
  CHECK(r.unwind_ns_per_s() == Approx(19e6));
  CHECK(r.CostPct(8000, 2) == Approx(100.0 * (0.8e6 + 9.5e6) / 1e9));
}

TEST_CASE("a window shorter than a second is measured with the next") {
  StackReserve r(100, 0);
  r.Update(1'000'000, kS / 2);
  CHECK(r.unwind_ns_per_s() == 0);
  r.Update(2'000'000, 2 * kS);
  CHECK(r.unwind_ns_per_s() == Approx(1e6));
}

TEST_CASE("at most half the budget is held back, whatever the unwinding costs") {
  StackReserve r(100, 0);
  // a user whose stacks keep one unwinding thread busy: 1 s/s
  r.Update(10 * kS, 10 * kS);
  CHECK(r.CostPct(8000, 2) == Approx(50.08));
  CHECK(r.HeldPct(8000, 2, 1) == Approx(0.5));
  CHECK(r.HeldPct(8000, 2, 0) == 0);  // the budget off: nothing to hold back from
  // below the cap, the cost itself
  StackReserve quiet(100, 0);
  CHECK(quiet.HeldPct(8000, 2, 1) == Approx(0.08));
}

TEST_CASE("a total that went back counts as no unwinding") {
  StackReserve r(100, 0);
  r.Update(1'000'000, 10 * kS);
  r.Update(10, 20 * kS);
  CHECK(r.unwind_ns_per_s() == 0);
  r.Update(1'000'010, 30 * kS);  // and from there on as measured
  CHECK(r.unwind_ns_per_s() == Approx(1e5));
}

TEST_CASE("the unwinding may take the stacks' share of the budget, on every CPU") {
  // 1 % of each of 2 CPUs, half of it: 10 ms a second in all
  CHECK(StackReserve::UnwindAllowanceNsPerS(1, 2) == 10'000'000);
  CHECK(StackReserve::UnwindAllowanceNsPerS(0.5, 64) == 160'000'000);
  CHECK(StackReserve::UnwindAllowanceNsPerS(1, 0) == 5'000'000);  // one CPU at least
  // the budget off: what was asked, whatever it costs
  CHECK(StackReserve::UnwindAllowanceNsPerS(0, 2) == 0);
}
