// drainer_test.cpp - lcpid's drain thread on this host's perf events (root):
// it sleeps until a ring has something to read or the loop asks, so what the
// loop asks for (a flush, fresh statistics, the stop) is answered at once,
// not after its longest sleep. Here that sleep is an hour: a request the
// thread does not wake for is never answered within the test.
#include <chrono>
#include <deque>

#include <catch2/catch.hpp>

#include "daemon/drainer.h"
#include "lcpi_hashtable.h"
#include "libprofile/attribute/image_table.h"
#include "libprofile/attribute/process_tracker.h"
#include "libprofile/attribute/sideband.h"
#include "libprofile/collect/perf_source.h"

namespace {

using lcpi::Drained;
using lcpi::Drainer;

constexpr auto kAnHour = std::chrono::milliseconds(3600 * 1000);
// Far beyond any answer on a loaded host, far below the hour slept.
constexpr auto kPatience = std::chrono::seconds(30);

// Takes what the thread queues until an item carries a mark (the last one
// when `last`), or kPatience passes. True when it came.
bool TakeMark(Drainer& drainer, bool last) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (std::chrono::steady_clock::now() < deadline) {
    std::deque<Drained> items;
    drainer.Take(items, std::chrono::milliseconds(100));
    for (const Drained& d : items)
      if (d.mark && d.mark->last == last) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("requests wake the drain thread: a flush, fresh statistics and the stop") {
  lcpi::SourceOptions so;
  so.events = {{"cpu-clock", 1 /* PERF_TYPE_SOFTWARE */, 0 /* PERF_COUNT_SW_CPU_CLOCK */}};
  so.frequency = 10;  // its rings stay far below their watermark (minutes away)
  lcpi::PerfSource source(
      so, lcpi_ht_config{LCPI_HT_DEFAULT_WAYS, LCPI_HT_DEFAULT_SET_BITS, LCPI_POLICY_ROUND_ROBIN,
                         LCPI_HASH_MULTIPLY, LCPI_HT_DEFAULT_BUFFER_RECORDS});
  lcpi::ProcessTracker tracker;
  lcpi::ImageTable images;
  lcpi::Sideband sideband(tracker, images);
  lcpi::Expected<void> started = sideband.Start();
  INFO((started ? "" : started.error().message()));
  REQUIRE(started);
  started = source.Start();
  INFO((started ? "" : started.error().message()));
  REQUIRE(started);

  Drainer drainer(source, sideband, kAnHour);
  REQUIRE(drainer.Start());
  drainer.RequestFlush();
  CHECK(TakeMark(drainer, false));

  // Statistics taken by the thread after the request count the samples
  // of this busy thread since the mark's.
  const uint64_t before = drainer.stats().source.as_of_ns;
  for (auto t0 = std::chrono::steady_clock::now();
       std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500);) {
  }
  const lcpi::DrainStats fresh = drainer.FreshStats(kPatience);
  CHECK(fresh.source.as_of_ns > before);

  drainer.RequestStop();
  CHECK(TakeMark(drainer, true));
}
