// unwind_allowance_test.cpp - the unwinding's CPU allowance
// (unwind_allowance.h): one user at most half the total, all users the
// total, 10 seconds' worth at once, repaid at the rate; one user's debt
// is its own; no bound at 0.
#include "libprofile/unwind/unwind_allowance.h"

#include <catch2/catch.hpp>

using lcpi::UnwindAllowance;

namespace {
constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 100 * kSecond;
constexpr uint64_t kMs = 1'000'000;
}  // namespace

TEST_CASE("a user spends at most half the total, then waits until its debt is repaid") {
  UnwindAllowance a;
  a.Set(10 * kMs);  // 10 ms a second in all, 5 per user: 50 ms at once
  CHECK(a.Allows(1, kStart));
  a.Charge(1, 40 * kMs, kStart);
  CHECK(a.Allows(1, kStart));  // 10 ms of its 50 left
  a.Charge(1, 30 * kMs, kStart);
  CHECK_FALSE(a.Allows(1, kStart));  // 20 ms in debt
  CHECK(a.Allows(2, kStart));        // another user is not
  // repaid at 5 ms a second: 20 ms take 4 s
  CHECK_FALSE(a.Allows(1, kStart + 2 * kSecond));
  CHECK(a.Allows(1, kStart + 5 * kSecond));
}

TEST_CASE("all users together spend at most the total") {
  UnwindAllowance a;
  a.Set(10 * kMs);  // 100 ms at once in all
  for (uint32_t user = 1; user <= 3; user++) {
    REQUIRE(a.Allows(user, kStart));
    a.Charge(user, 40 * kMs, kStart);  // 120 ms of 100
  }
  for (uint32_t user = 1; user <= 4; user++) CHECK_FALSE(a.Allows(user, kStart));
  CHECK(a.Allows(4, kStart + 3 * kSecond));  // 30 ms back in all
}

TEST_CASE("10 seconds' worth at most is saved, and full buckets are not kept") {
  UnwindAllowance a;
  a.Set(10 * kMs);
  a.Charge(1, 1 * kMs, kStart);
  CHECK(a.users_tracked() == 1);
  // an hour idle saves no more than 10 s' worth: 50 ms for one user
  const int64_t later = kStart + 3600 * kSecond;
  CHECK(a.Allows(1, later));
  CHECK(a.users_tracked() == 0);
  a.Charge(1, 60 * kMs, later);
  CHECK_FALSE(a.Allows(1, later));
}

TEST_CASE("an allowance of 0 bounds nothing") {
  UnwindAllowance a;
  a.Set(0);
  a.Charge(1, 10 * kSecond, kStart);
  CHECK(a.Allows(1, kStart));
  CHECK(a.users_tracked() == 0);
}

TEST_CASE("one user's overdraw is its own debt: the total pays what its balance covered") {
  UnwindAllowance a;
  a.Set(10 * kMs);  // 100 ms at once in all, 50 per user
  // one walk of 2 s (a table made costly, or a walk abandoned late)
  REQUIRE(a.Allows(1, kStart));
  a.Charge(1, 2000 * kMs, kStart);
  CHECK_FALSE(a.Allows(1, kStart));
  CHECK(a.Allows(2, kStart));                        // the total lost 50 ms, not 2 s
  CHECK_FALSE(a.Allows(1, kStart + 300 * kSecond));  // 1,950 ms at 5 ms a second
  CHECK(a.Allows(1, kStart + 400 * kSecond));
}

TEST_CASE("a debt stands when the same total is set again, and goes with a new one") {
  UnwindAllowance a;
  a.Set(10 * kMs);
  a.Charge(1, 60 * kMs, kStart);
  CHECK_FALSE(a.Allows(1, kStart));
  a.Set(10 * kMs);  // every window's end sets it again
  CHECK_FALSE(a.Allows(1, kStart));
  a.Set(20 * kMs);  // a new budget: buckets start full
  CHECK(a.Allows(1, kStart));
  a.Charge(1, 200 * kMs, kStart);
  CHECK_FALSE(a.Allows(1, kStart));
  a.Set(0);  // the budget off: no bound
  CHECK(a.Allows(1, kStart));
}

TEST_CASE("buckets full again are let go by Prune") {
  UnwindAllowance a;
  a.Set(10 * kMs);
  for (uint32_t user = 1; user <= 100; user++) a.Charge(user, 1 * kMs, kStart);
  CHECK(a.users_tracked() == 100);
  a.Prune(kStart + kSecond / 10);  // 0.5 ms repaid of 1: kept
  CHECK(a.users_tracked() == 100);
  a.Prune(kStart + kSecond);
  CHECK(a.users_tracked() == 0);
}
