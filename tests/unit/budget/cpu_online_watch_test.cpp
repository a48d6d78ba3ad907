// cpu_online_watch_test.cpp - a CPU coming online (or going) is noticed
// once, and counted; an unknown count changes nothing.
#include "libprofile/budget/cpu_online_watch.h"

#include <catch2/catch.hpp>

using lcpi::CpuOnlineWatch;

TEST_CASE("a change in the online CPUs is noticed once and counted") {
  long online = 2;
  CpuOnlineWatch w([&online] { return online; });
  CHECK_FALSE(w.Changed());  // the start's count is the baseline
  online = 3;                // a CPU comes online
  CHECK(w.Changed());
  CHECK_FALSE(w.Changed());  // once
  CHECK(w.online() == 3);
  online = 2;  // and goes away
  CHECK(w.Changed());
  CHECK(w.changes() == 2);
  online = -1;  // sysconf failed: nothing known, nothing changed
  CHECK_FALSE(w.Changed());
  online = 2;
  CHECK_FALSE(w.Changed());
  CHECK(w.changes() == 2);
}

TEST_CASE("the real count is this host's") {
  CpuOnlineWatch w;
  CHECK(w.online() >= 1);
  CHECK_FALSE(w.Changed());
}
